"""Splits streamed text into markers and the text between them, never rescanning.

Text streams out as soon as it arrives, except a held-back tail that could still turn into a
marker once the next chunk comes (``<thi`` might become ``<think>``). The tail is shorter than
the longest marker, so every character is examined a bounded number of times.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from codec.memo import memo

Piece = tuple[str | None, str]
"""``(marker terminal name, text)`` for a marker, ``(None, text)`` for the text between."""


@dataclass(frozen=True, slots=True)
class _Tables:
    """What scanning needs, built once per set of markers (a parser is made per completion)."""

    names: dict[str, str]  # marker text -> terminal name
    prefixes: frozenset[str]  # every proper prefix of a marker: what a held-back tail may be
    longest: int
    starts: re.Pattern[str]  # any character a marker starts with
    begins: re.Pattern[str]  # where a marker may begin in a chunk: its first two characters, or its first at the end
    by_start: dict[str, re.Pattern[str]]  # first character -> the markers starting with it
    only: dict[str, str]  # first character -> its marker, where only one starts with it
    splitter: re.Pattern[str]  # every marker, longest first, as the group ``split`` keeps
    # The markers most of them start with (``<``), as ``splitter``: one literal first character,
    # which the regex engine finds at C speed, where a set of them is tested position by position.
    common: re.Pattern[str]
    others: re.Pattern[str] | None  # the markers that start otherwise ([gMASK], "\n<channel|>")
    # A marker may grow into a longer one: Qwen's "</think>" of "</think>\n\n"; with the text
    # before it, "\n" + "</tool_response>" of "\n</tool_response>\n".
    grows: bool


@cache
def _tables(markers: tuple[tuple[str, str], ...]) -> _Tables:
    texts = sorted((text for text, _ in markers), key=len, reverse=True)  # longest first
    names = dict(markers)
    by_start = {
        first: re.compile("|".join(re.escape(text) for text in texts if text[0] == first))
        for first in {text[0] for text in texts}
    }
    most = max(sorted(by_start), key=lambda first: sum(text[0] == first for text in texts))
    return _Tables(
        names=names,
        prefixes=frozenset(text[:i] for text in texts for i in range(1, len(text))),
        longest=len(texts[0]),
        starts=re.compile("[" + re.escape("".join(by_start)) + "]"),
        begins=re.compile("|".join(_begins(first, texts) for first in sorted(by_start))),
        by_start=by_start,
        only={first: mine[0] for first in by_start if len(mine := [t for t in texts if t[0] == first]) == 1},
        splitter=re.compile("(" + "|".join(_after(first, texts) for first in by_start) + ")"),
        common=re.compile("(" + _after(most, texts) + ")"),
        others=re.compile("|".join(re.escape(text) for text in texts if text[0] != most))
        if len(by_start) > 1
        else None,
        # A marker, alone or after other text, is the beginning of a longer one.
        grows=any(text[j:i] in names for text in texts for i in range(1, len(text)) for j in range(i)),
    )


def _begins(first: str, texts: list[str]) -> str:
    """Where a marker starting with ``first`` may begin: that character followed by a second
    character of one of them, or last in the chunk (the tail the scanner would hold back). A
    newline in code, or a ``<`` in ``a < b``, then lets the chunk stay on the hot path."""
    mine = [text for text in texts if text[0] == first]
    if any(len(text) == 1 for text in mine):
        return re.escape(first)
    seconds = "".join(sorted({text[1] for text in mine}))
    return re.escape(first) + "(?:[" + re.escape(seconds) + r"]|\Z)"


def _after(first: str, texts: list[str]) -> str:
    """The markers starting with ``first`` as one regex branch: that character, then the rest of
    each (longest first), so the regex tests one character where no marker starts."""
    return re.escape(first) + "(?:" + "|".join(re.escape(text[1:]) for text in texts if text[0] == first) + ")"


_STEPS = 32
"""Occurrences of a marker's first character tried one by one before the regex takes over."""

_SPLIT_BELOW = 4096
"""Text that holds one of the markers that start with a less common character (``others``) is
split by the regex of all markers when it is shorter than this. That regex tests every position
against a set of first characters (2 to 4 ns a character), where the ``find`` path pays a Python
step for each marker and each character several markers start with: cheaper for a chunk or a
reply of a few KB, dearer for long text with few markers."""

# The tables of each markers mapping — a compiled grammar's, never changed after — found by
# identity, without sorting it again: a scanner is made per completion. The mapping is kept,
# so its id cannot be reused while it is here.
_TABLES_OF: dict[int, tuple[Mapping[str, str], _Tables]] = memo({})
_TABLES_LIMIT = 64


class MarkerScanner:
    """Incremental marker recognition for one completion (sans-IO: strings in, pieces out)."""

    def __init__(self, markers: Mapping[str, str]) -> None:
        known = _TABLES_OF.get(id(markers))
        if known is None or known[0] is not markers:
            if len(_TABLES_OF) >= _TABLES_LIMIT:
                _TABLES_OF.clear()
            known = _TABLES_OF[id(markers)] = (markers, _tables(tuple(sorted(markers.items()))))
        self._tables = known[1]
        self._held = ""

    def passes(self, chunk: str) -> bool:
        """Whether ``chunk`` is text and nothing else: no character a marker starts with, and
        nothing held back before it. Then it is taken as it is (``feed`` would give it as one
        piece), without a list of pieces: the hot path of streaming."""
        return bool(chunk) and not self._held and self._tables.begins.search(chunk) is None

    def feed(self, chunk: str) -> list[Piece]:
        """The markers and text that ``chunk`` completes."""
        text = self._held + chunk if self._held else chunk
        tables = self._tables
        if tables.others is None or tables.others.search(text) is None:  # the common case: one regex, fast
            pieces, position = self._split(text, tables.common)
        elif len(text) < _SPLIT_BELOW:
            pieces, position = self._split(text, tables.splitter)
        else:
            pieces, position = self._found(text, tables.starts.search(text))
        if tables.grows and pieces and pieces[-1][0] is not None:
            position = self._growing(text, pieces, position)
        keep = self._held_back(text, position)
        if len(text) - keep > position:
            pieces.append((None, text[position : len(text) - keep]))
        self._held = text[len(text) - keep :]
        return pieces

    def _growing(self, text: str, pieces: list[Piece], position: int) -> int:
        """Where the text ends with a marker that may still grow into a longer one — alone
        (Qwen's ``</think>`` of ``</think>\n\n``) or with the text before it (``\n`` and
        ``</tool_response>`` of ``\n</tool_response>\n``) —, that marker and that text taken back
        from ``pieces`` (the tail held back is then the longest that may grow); else
        ``position`` as it was."""
        start = position - len(pieces[-1][1])
        before = start - len(pieces[-2][1]) if len(pieces) > 1 and pieces[-2][0] is None else start
        first = max(before, len(text) - self._tables.longest + 1)
        if not any(text[i:] in self._tables.prefixes for i in range(first, start + 1)):
            return position
        del pieces[-1 if before == start else -2 :]
        return before

    def _split(self, text: str, splitter: re.Pattern[str]) -> tuple[list[Piece], int]:
        """The markers of ``text`` (those ``splitter`` knows) and the text before each; where the
        text after the last begins."""
        parts = splitter.split(text)  # text, marker, text, ..., marker, text
        after = parts.pop()
        # A piece of text is never a marker's text (the regex would have found that marker), so
        # the marker table tells the two apart; empty text between markers is no piece.
        names = self._tables.names.get
        return [(names(part), part) for part in parts if part], len(text) - len(after)

    def _found(self, text: str, first: re.Match[str] | None) -> tuple[list[Piece], int]:
        """``_split``'s answer, from the markers ``_markers_in`` finds from the ``first``
        character a marker may start with."""
        pieces: list[Piece] = []
        position = 0
        if first is None:
            return pieces, position
        for start, marker in self._markers_in(text, first.start()):
            if start > position:
                pieces.append((None, text[position:start]))
            pieces.append((self._tables.names[marker], marker))
            position = start + len(marker)
        return pieces, position

    def _markers_in(self, text: str, first: int) -> list[tuple[int, str]]:
        """``(position, marker)`` of every marker from ``first`` on, leftmost first, the longest
        at a position. Per character a marker may start with, the cheapest way through the text
        (``str.find`` runs at C speed; a Python step per occurrence does not): a character
        only one marker starts with, ``find`` that marker from one to the next; else ``find``
        each occurrence and try its markers there — and once the character proves frequent
        (``_STEPS`` occurrences: a newline, a bracket in code), the regex of its markers, whose
        search skips the occurrences that start none."""
        hits: list[tuple[int, str]] = []
        tables = self._tables
        for char, pattern in tables.by_start.items():
            start = text.find(char, first)
            if start < 0:
                continue
            only = tables.only.get(char)
            if only is not None:
                start = text.find(only, start)
                while start >= 0:
                    hits.append((start, only))
                    start = text.find(only, start + len(only))
                continue
            for _ in range(_STEPS):
                found = pattern.match(text, start)
                if found is None:
                    start = text.find(char, start + 1)
                else:
                    hits.append((start, found.group()))
                    start = text.find(char, found.end())
                if start < 0:
                    break
            else:
                hits.extend((found.start(), found.group()) for found in pattern.finditer(text, start))
        if len(tables.by_start) > 1 and hits:
            hits = _leftmost(sorted(hits))
        return hits

    def close(self) -> list[Piece]:
        """Whatever was held back: the completion ended. It is text, but for a marker held
        because it could still grow into a longer one (``tables.grows``)."""
        held, self._held = self._held, ""
        if not held:
            return []
        if not self._tables.grows:
            return [(None, held)]
        pieces, position = self._split(held, self._tables.splitter)
        return [*pieces, (None, held[position:])] if position < len(held) else pieces

    def _held_back(self, text: str, start: int) -> int:
        """Length of the longest tail of ``text[start:]`` that begins some marker: only the
        last ``longest - 1`` characters can, and only from a character a marker starts with."""
        starts = self._tables.starts
        found = starts.search(text, max(start, len(text) - self._tables.longest + 1))
        while found is not None:
            if text[found.start() :] in self._tables.prefixes:
                return len(text) - found.start()
            found = starts.search(text, found.start() + 1)
        return 0


def _leftmost(hits: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Drop hits that start inside an earlier one (markers of different first characters)."""
    kept: list[tuple[int, str]] = []
    end = 0
    for start, marker in hits:
        if start >= end:
            kept.append((start, marker))
            end = start + len(marker)
    return kept
