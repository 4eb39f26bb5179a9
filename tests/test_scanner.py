"""The marker scanner: markers found anywhere, text released at once, a bounded hold-back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codec.engine.grammar import compiled
from codec.engine.scanner import MarkerScanner

MARKERS = compiled("glm.lark").markers


def scan(chunks: list[str]) -> list[tuple[str | None, str]]:
    scanner = MarkerScanner(MARKERS)
    pieces = [piece for chunk in chunks for piece in scanner.feed(chunk)] + scanner.close()
    merged: list[tuple[str | None, str]] = []
    for name, text in pieces:  # adjacent text pieces are one run, however they were cut
        if name is None and merged and merged[-1][0] is None:
            merged[-1] = (None, merged[-1][1] + text)
        else:
            merged.append((name, text))
    return merged


def test_markers_and_text() -> None:
    assert scan(["a<think>b</think>c"]) == [
        (None, "a"), ("THINK_OPEN", "<think>"), (None, "b"), ("THINK_CLOSE", "</think>"), (None, "c")
    ]


def test_a_marker_split_across_chunks_is_one_marker() -> None:
    assert scan(["x</th", "ink>y"]) == [(None, "x"), ("THINK_CLOSE", "</think>"), (None, "y")]


def test_text_that_only_looks_like_a_marker_start_is_released() -> None:
    scanner = MarkerScanner(MARKERS)
    assert scanner.feed("a <b") == [(None, "a <b")]  # "<b" begins no marker
    assert scanner.feed("x <thi") == [(None, "x ")]  # "<thi" might be "<think>": held
    assert scanner.feed("s is text") == [(None, "<this is text")]


def test_several_markers_in_one_chunk() -> None:
    names = [name for name, _ in scan(["<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>"])]
    assert names == ["CALL_OPEN", None, "KEY_OPEN", None, "KEY_CLOSE", "VALUE_OPEN", None, "VALUE_CLOSE", "CALL_CLOSE"]


@given(text=st.lists(st.sampled_from(["<", "</", "<think>", "</think>", "<tool_call>", "a", "<|user|>", "think>", "|"]))
       .map("".join), cuts=st.lists(st.integers(0, 200)))
def test_any_chunking_gives_the_same_pieces(text: str, cuts: list[int]) -> None:
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    assert scan(chunks) == scan([text])


def test_each_character_is_examined_a_bounded_number_of_times() -> None:
    scanner = MarkerScanner(MARKERS)
    longest = max(map(len, MARKERS))
    text = ("word <" * 5000) + "<think>"
    examined = 0
    for start in range(0, len(text), 3):
        examined += len(scanner._held) + 3  # what one feed looks at: the held tail and the chunk
        scanner.feed(text[start : start + 3])
    feeds = len(range(0, len(text), 3))
    assert examined <= len(text) + feeds * (longest - 1) + 3


@given(text=st.lists(st.sampled_from(["<", "</", "<think>", "</think>", "<tool_call>", "ab", "<|user|>", "think>", "|", "[gMASK]", "["]),
                     min_size=200, max_size=400).map("".join))
def test_long_text_search_agrees_with_the_regex(text: str) -> None:
    """Texts of 512+ characters are searched marker by marker; the result is the same."""
    assert scan([text]) == scan([text[i : i + 7] for i in range(0, len(text), 7)])
