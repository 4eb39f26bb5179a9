"""The marker scanner against a plain reference, with every format's markers (issue 12).

GLM's three longest markers share one length (18); Solar's longest two are 24 and 23 characters,
Gemma has one that starts with a new line. A scanner that holds back one character too few, or
measures the wrong marker, passes with GLM's markers and fails with Solar's, so each property
runs for every format of the registry, on texts built from that format's markers, their proper
prefixes and near misses.

The reference is a regular expression of the markers, longest first, matched leftmost: what the
scanner must find however the text is split, and what it may hold back at the end of a feed is
exactly the longest tail (after the last marker) that a marker starts with.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import codec
from codec.engine.grammar import compiled
from codec.engine.scanner import MarkerScanner, Piece
from codec.registry import FORMATS


def markers(fmt: str) -> dict[str, str]:
    """What the engine scans a completion with: the grammar's markers and their spellings with
    the white space the template writes around them (Qwen3-Coder's ``"\n<tool_response>\n"``)."""
    return compiled(FORMATS[fmt].grammar).scanned


def reference(table: dict[str, str], text: str) -> list[Piece]:
    """Markers found leftmost and longest first by one regular expression; text between."""
    pattern = re.compile("|".join(re.escape(marker) for marker in sorted(table, key=len, reverse=True)))
    pieces: list[Piece] = []
    position = 0
    for found in pattern.finditer(text):
        if found.start() > position:
            pieces.append((None, text[position : found.start()]))
        pieces.append((table[found.group()], found.group()))
        position = found.end()
    if position < len(text):
        pieces.append((None, text[position:]))
    return pieces


def merged(pieces: list[Piece]) -> list[Piece]:
    """Adjacent text pieces as one run, however they were cut."""
    out: list[Piece] = []
    for name, text in pieces:
        if name is None and out and out[-1][0] is None:
            out[-1] = (None, out[-1][1] + text)
        else:
            out.append((name, text))
    return out


def texts(table: dict[str, str]) -> st.SearchStrategy[str]:
    """Markers, their proper prefixes, each marker with one character changed, and filler."""
    prefixes = sorted({marker[:k] for marker in table for k in range(1, len(marker))})
    near = sorted({marker[:k] + "x" + marker[k + 1 :] for marker in table for k in range(len(marker))})
    parts = st.sampled_from(sorted(table)) | st.sampled_from(prefixes) | st.sampled_from(near)
    return st.lists(parts | st.sampled_from(["a", " ", "\n", "<", "|"]), max_size=30).map("".join)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


@pytest.mark.parametrize("fmt", codec.formats())
def test_split_anywhere_the_pieces_are_the_references(fmt: str) -> None:
    table = markers(fmt)

    @given(text=texts(table), cuts=st.lists(st.integers(0, 10**4), max_size=8), single=st.booleans())
    def check(text: str, cuts: list[int], single: bool) -> None:
        scanner = MarkerScanner(table)
        chunks = list(text) if single else split(text, cuts)
        pieces = [piece for chunk in chunks for piece in scanner.feed(chunk)] + scanner.close()
        assert merged(pieces) == merged(reference(table, text))

    check()


def held_tail(table: dict[str, str], text: str) -> str:
    """The longest tail of ``text`` that is a proper prefix of a marker and does not begin inside
    a marker the reference finds: text, or a marker that is itself the start of a longer one
    (gpt-oss's ``<|channel|>``, of ``<|channel|>commentary ``; Qwen3-Coder's ``<tool_response>``
    after a new line, of ``\n<tool_response>\n``), with the text before it."""
    inside = {start for start, end in _marker_spans(table, text) for start in range(start + 1, end)}
    prefixes = {marker[:k] for marker in table for k in range(1, len(marker))}
    return next((text[i:] for i in range(len(text)) if i not in inside and text[i:] in prefixes), "")


def _marker_spans(table: dict[str, str], text: str) -> list[tuple[int, int]]:
    spans, position = [], 0
    for name, piece in reference(table, text):
        if name is not None:
            spans.append((position, position + len(piece)))
        position += len(piece)
    return spans


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_feed_holds_back_exactly_the_tail_a_marker_could_start_with(fmt: str) -> None:
    table = markers(fmt)
    longest = max(map(len, table))

    @given(text=texts(table))
    def check(text: str) -> None:
        scanner = MarkerScanner(table)
        released = "".join(piece for _, piece in scanner.feed(text))
        tail = held_tail(table, text)
        assert released + tail == text
        assert [piece for _, piece in scanner.close()] == [piece for _, piece in reference(table, tail)]
        assert len(tail) < longest

    check()


@pytest.mark.parametrize("fmt", codec.formats())
def test_the_longest_markers_cut_one_short_are_held_whole(fmt: str) -> None:
    """Each of the longest two markers (lengths differ in Solar: 24 and 23), less its last
    character, is held back whole, then completed by that character."""
    table = markers(fmt)
    for marker in sorted(table, key=len, reverse=True)[:2]:
        scanner = MarkerScanner(table)
        assert scanner.feed("text" + marker[:-1]) == [(None, "text")], marker
        if any(other.startswith(marker) and other != marker for other in table):
            # It may still grow into a longer one (DeepSeek-V3.2's, with a new line more): held
            # until the output ends.
            assert scanner.feed(marker[-1]) == [], marker
            assert scanner.close() == [(table[marker], marker)], marker
        else:
            assert scanner.feed(marker[-1]) == [(table[marker], marker)], marker
