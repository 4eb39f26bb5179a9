"""A call's reader ends its run of free text before the run's text ends
(``ArgumentContext.end``): where a call closes with a pattern, not a marker (a call object in a
JSON list, ``[{…}, {…}]``), the rest of the piece is lexed by the grammar again. The formats come
from the registry: those whose grammar closes a call with a pattern."""

from __future__ import annotations

import pytest

import codec
from codec.engine.grammar import compiled
from codec.registry import FORMATS
from support.parsing import fold, ids

PATTERN_CLOSED = [name for name, spec in FORMATS.items() if "CALL_CLOSE" in compiled(spec.grammar).patterns]


def _stream(fmt: str, chunks: list[str]) -> tuple[list[object], codec.StreamParser]:
    parser = codec.load(fmt).stream(id_factory=ids)
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.close(), parser


def test_some_format_closes_its_calls_with_a_pattern() -> None:
    assert PATTERN_CLOSED


@pytest.mark.parametrize("fmt", PATTERN_CLOSED)
@pytest.mark.parametrize("size", [1, 2, 3, 7, 10_000])
def test_two_calls_in_one_run_read_alike_however_chunked(fmt: str, size: int) -> None:
    text = FORMATS[fmt].examples.two_calls
    whole = codec.load(fmt).parse(text, id_factory=ids)
    assert [call.arguments for call in whole.tool_calls] == [{"city": "Paris"}, {"city": "Rome"}]
    events, parser = _stream(fmt, [text[at : at + size] for at in range(0, len(text), size)])
    assert parser.message == whole
    assert fold(events) == whole.to_openai()  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", PATTERN_CLOSED)
def test_text_after_an_ended_run_is_placed_at_its_own_offset(fmt: str) -> None:
    """What follows the ended run is read from where it stands: a deviation in it has the same
    offset whole and streamed."""
    text = FORMATS[fmt].examples.two_calls + "tail"
    whole = codec.load(fmt).parse(text, id_factory=ids)
    _, parser = _stream(fmt, list(text))
    found = [(d.code, d.offset) for d in whole.diagnostics]
    assert found and found == [(d.code, d.offset) for d in parser.diagnostics]
    assert all(offset >= text.index("tail") for _, offset in found)
