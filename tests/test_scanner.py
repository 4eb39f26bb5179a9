"""The marker scanner: markers found anywhere, text released at once, a bounded hold-back.

The generic tests run with the markers of every format of the registry (Solar's are up to 24
characters long, GLM's 18, Gemma's include one that starts with a new line); a few examples
spell out GLM's markers.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import codec
from codec.engine.grammar import compiled
from codec.engine.scanner import MarkerScanner, Piece
from codec.registry import FORMATS

GLM = compiled("glm.lark").markers


def markers(fmt: str) -> dict[str, str]:
    """Marker text -> terminal name, from the format's compiled grammar."""
    return compiled(FORMATS[fmt].grammar).markers


def scan(chunks: list[str], table: dict[str, str] = GLM) -> list[Piece]:
    scanner = MarkerScanner(table)
    pieces = [piece for chunk in chunks for piece in scanner.feed(chunk)] + scanner.close()
    merged: list[Piece] = []
    for name, text in pieces:  # adjacent text pieces are one run, however they were cut
        if name is None and merged and merged[-1][0] is None:
            merged[-1] = (None, merged[-1][1] + text)
        else:
            merged.append((name, text))
    return merged


def test_markers_and_text() -> None:
    assert scan(["a<think>b</think>c"]) == [
        (None, "a"),
        ("THINK_OPEN", "<think>"),
        (None, "b"),
        ("THINK_CLOSE", "</think>"),
        (None, "c"),
    ]


def test_text_that_only_looks_like_a_marker_start_is_released() -> None:
    scanner = MarkerScanner(GLM)
    assert scanner.feed("a <b") == [(None, "a <b")]  # "<b" begins no marker
    assert scanner.feed("x <thi") == [(None, "x ")]  # "<thi" might be "<think>": held
    assert scanner.feed("s is text") == [(None, "<this is text")]


def test_several_markers_in_one_chunk() -> None:
    names = [name for name, _ in scan(["<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>"])]
    assert names == ["CALL_OPEN", None, "KEY_OPEN", None, "KEY_CLOSE", "VALUE_OPEN", None, "VALUE_CLOSE", "CALL_CLOSE"]


@pytest.mark.parametrize("fmt", codec.formats())
def test_every_marker_between_text_is_found(fmt: str) -> None:
    table = markers(fmt)
    for marker, name in table.items():
        assert scan([f"a{marker}b"], table) == [(None, "a"), (name, marker), (None, "b")], marker


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_marker_split_anywhere_is_one_marker(fmt: str) -> None:
    """Every marker, cut at every point into two chunks, or fed one character at a time."""
    table = markers(fmt)
    for marker, name in table.items():
        text = f"x{marker}y"
        expected = [(None, "x"), (name, marker), (None, "y")]
        for cut in range(1, len(text)):
            assert scan([text[:cut], text[cut:]], table) == expected, (marker, cut)
        assert scan(list(text), table) == expected, marker


@pytest.mark.parametrize("fmt", codec.formats())
def test_exactly_a_possible_marker_start_is_held_back(fmt: str) -> None:
    """A chunk that ends in a proper prefix of a marker releases everything before that prefix
    and holds the whole prefix back — up to the longest marker's length minus one — and
    nothing else is ever held."""
    table = markers(fmt)
    for marker, name in table.items():
        for size in range(1, len(marker)):
            scanner = MarkerScanner(table)
            head = marker[:size]
            released = scanner.feed("text " + head)
            assert released == [(None, "text ")], (marker, size)
            assert scanner.feed(marker[size:] + ".") == [(name, marker), (None, ".")], (marker, size)


@pytest.mark.parametrize("fmt", codec.formats())
@given(data=st.data(), cuts=st.lists(st.integers(0, 400)))
def test_any_chunking_gives_the_same_pieces(fmt: str, data: st.DataObject, cuts: list[int]) -> None:
    table = markers(fmt)
    pieces = (
        st.sampled_from(sorted(table))
        | st.sampled_from(["a", "\n", " "])
        | st.sampled_from(sorted({marker[:k] for marker in table for k in range(1, len(marker))}))
    )
    text = "".join(data.draw(st.lists(pieces, max_size=40)))
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert scan(chunks, table) == scan([text], table)


class _Counted:
    """A compiled pattern that adds to ``tally`` the characters each call examines: a search,
    from where it starts to the end of its match or of the text (``finditer``: search after
    search); an anchored match, to the end of its match, or at most ``reach`` characters when
    it fails."""

    def __init__(self, pattern: re.Pattern[str], tally: list[int], reach: int) -> None:
        self._pattern = pattern
        self._tally = tally
        self._reach = reach

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        found = self._pattern.search(text, pos)
        self._tally[0] += (found.end() if found else len(text)) - pos
        return found

    def finditer(self, text: str, pos: int = 0) -> Iterator[re.Match[str]]:
        """Each search from where the last match ended, as ``Pattern.finditer`` goes (markers
        are never empty): counted search by search."""
        found = self.search(text, pos)
        while found is not None:
            yield found
            found = self.search(text, found.end())

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        found = self._pattern.match(text, pos)
        self._tally[0] += found.end() - pos if found else min(len(text) - pos, self._reach)
        return found

    def split(self, text: str) -> list[str]:
        """Tries each position: at most ``reach`` characters from each (an upper bound)."""
        self._tally[0] += len(text) * self._reach
        return self._pattern.split(text)


def counting_scanner(table: dict[str, str]) -> tuple[MarkerScanner, list[int]]:
    """A scanner whose searches count the characters they examine (its pattern tables wrapped,
    and the text its marker search is given: ``str.find`` runs over it once per character a
    marker may start with, and once more where only one marker starts with that character)."""
    scanner = MarkerScanner(table)
    tally = [0]
    tables: Any = scanner._tables
    reach = max(map(len, table))
    scanner._tables = dataclasses.replace(
        tables,
        starts=_Counted(tables.starts, tally, reach),
        by_start={char: _Counted(pattern, tally, reach) for char, pattern in tables.by_start.items()},
        splitter=_Counted(tables.splitter, tally, reach),
        common=_Counted(tables.common, tally, reach),
        others=tables.others and _Counted(tables.others, tally, reach),
    )
    markers_in = scanner._markers_in

    def counted_markers_in(text: str, first: int) -> list[tuple[int, str]]:
        # Per character a marker starts with: one ``find`` of it, and one of its marker where
        # only one starts with it (or the per-occurrence tries, counted as matches).
        tally[0] += (len(text) - first) * (len(tables.by_start) + len(tables.only))
        return markers_in(text, first)

    scanner._markers_in = counted_markers_in  # type: ignore[method-assign]
    return scanner, tally


def examined(table: dict[str, str], text: str, chunk: int) -> list[int]:
    """The characters a scanner examines in each feed of ``text`` in ``chunk``-character pieces;
    checks on the way that it gives back the text it was given."""
    scanner, tally = counting_scanner(table)
    pieces, work = [], []
    for start in range(0, len(text), chunk):
        before = tally[0]
        pieces += scanner.feed(text[start : start + chunk])
        work.append(tally[0] - before)
    assert "".join(piece for _, piece in pieces + scanner.close()) == text
    return work


@pytest.mark.parametrize("fmt", codec.formats())
def test_each_character_is_examined_a_bounded_number_of_times(fmt: str) -> None:
    """Text full of near-markers (each marker without its last character, then a word), fed in
    3-character chunks. The work, counted where the scanner searches, is linear in the text;
    and no feed examines more than its chunk and a held-back tail shorter than the longest
    marker, once per kind of search (one per character a marker may start with, one more per
    character only one marker starts with, the search for the first of them, the anchored
    matches and the search for a tail to hold back)."""
    table = markers(fmt)
    near = "".join(f"{marker[:-1]} word " for marker in sorted(table))
    starts = [marker[0] for marker in table]
    searches = len(set(starts)) + sum(starts.count(char) == 1 for char in set(starts)) + 3
    longest = max(map(len, table))
    # The last terms: the search for a marker of ``others``, and a split.
    per_feed = searches * (3 + longest - 1) + (1 + longest) * (3 + longest - 1)
    small, large = examined(table, near * 20, 3), examined(table, near * 80, 3)
    assert sum(large) <= 4 * sum(small) * 1.05, (sum(small), sum(large))
    assert max(large) <= per_feed, (max(large), per_feed)


@given(
    text=st.lists(
        st.sampled_from(
            ["<", "</", "<think>", "</think>", "<tool_call>", "ab", "<|user|>", "think>", "|", "[gMASK]", "["]
        ),
        min_size=200,
        max_size=400,
    ).map(lambda text: "".join(text) * 21)
)
def test_long_text_search_agrees_with_the_regex(text: str) -> None:
    """Texts of 4096+ characters are searched marker by marker (7-character chunks are split
    by one regex); the result is the same."""
    assert len(text) >= 4096
    assert scan([text]) == scan([text[i : i + 7] for i in range(0, len(text), 7)])


@pytest.mark.parametrize("fmt", codec.formats())
@given(data=st.data())
def test_splitting_and_finding_give_the_same_pieces(fmt: str, data: st.DataObject) -> None:
    """The ways through a text agree on every text of markers, their beginnings and plain
    characters: ``_split`` by the regex of all markers (short text), ``_found`` by ``find`` per
    marker character (long text), and — where no marker of ``others`` occurs — ``_split`` by
    the regex of the markers of the common first character."""
    table = markers(fmt)
    parts = (
        st.sampled_from(sorted(table))
        | st.sampled_from(["a", "\n", " ", "<", "|", "["])
        | st.sampled_from(sorted({marker[:k] for marker in table for k in range(1, len(marker))}))
    )
    text = "".join(data.draw(st.lists(parts, max_size=60)))
    scanner = MarkerScanner(table)
    tables = scanner._tables
    found = scanner._found(text, tables.starts.search(text))
    assert scanner._split(text, tables.splitter) == found
    if tables.others is None or tables.others.search(text) is None:
        assert scanner._split(text, tables.common) == found


@pytest.mark.parametrize("fmt", codec.formats())
@given(data=st.data())
def test_a_chunk_that_passes_is_text_and_nothing_is_held(fmt: str, data: st.DataObject) -> None:
    """``passes`` (the stream's hot path, which skips ``feed``) says yes only to a chunk that
    ``feed`` would give back whole as text, holding nothing: no marker in it, no marker's
    beginning at its end. It may say no to more (a newline before ``<``, a lone ``<`` at the end)."""
    table = markers(fmt)
    parts = (
        st.sampled_from(sorted(table))
        | st.sampled_from(["a", "\n", " ", "<", "|", "[", "<=", "\n\n"])
        | st.sampled_from(sorted({marker[:k] for marker in table for k in range(1, len(marker))}))
    )
    chunk = "".join(data.draw(st.lists(parts, min_size=1, max_size=12)))
    scanner = MarkerScanner(table)
    if scanner.passes(chunk):
        assert scanner.feed(chunk) == [(None, chunk)]
        assert scanner.close() == []


@pytest.mark.parametrize("fmt", codec.formats())
def test_code_with_new_lines_and_comparisons_passes(fmt: str) -> None:
    """Text that begins no marker stays on the hot path though it holds the characters markers
    start with: a new line not followed by ``<``, a ``<`` followed by a space."""
    scanner = MarkerScanner(markers(fmt))
    assert scanner.passes("if a < b:\n    return a\n    ")
