"""Error positions (codec/engine/position.py): the line and column of a strict error when the
text before it holds newlines in every place a piece can hold them."""

from __future__ import annotations

import pytest

import codec

MARKER = "</arg_key>"  # refused anywhere outside a call: the strict parse stops at it


@pytest.mark.parametrize(
    ("before", "line", "column"),
    [
        pytest.param("Go.</think>ab", 1, 14, id="no newline"),
        pytest.param("Go.</think>\nab", 2, 3, id="a piece that starts with its newline"),
        pytest.param("a\nb</think>\nab\ncd", 4, 3, id="newlines in two pieces, two in the last"),
        pytest.param("Go.</think>ab\n", 2, 1, id="the error starts its line"),
    ],
)
def test_a_strict_error_names_the_line_and_column_of_the_marker(before: str, line: int, column: int) -> None:
    """Lines and columns are 1-based; a column counts from the last newline before the error."""
    with pytest.raises(codec.ParseError) as raised:
        codec.load("glm").parse(before + MARKER, strict=True)
    error = raised.value
    assert (error.code, error.offset, error.line, error.column) == ("unexpected_marker", len(before), line, column)
    assert f"at line {line}, column {column} (offset {len(before)})" in str(error)


def test_streamed_one_character_at_a_time_the_position_is_the_same() -> None:
    """Each newline arrives as a piece of its own: the position still counts it."""
    text = "a\nb</think>\nab\ncd" + MARKER
    parser = codec.load("glm").stream(strict=True)
    with pytest.raises(codec.ParseError) as raised:
        for character in text:
            parser.feed(character)
        parser.close()
    assert (raised.value.offset, raised.value.line, raised.value.column) == (len(text) - len(MARKER), 4, 3)
