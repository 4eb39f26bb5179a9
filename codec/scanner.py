"""Splits streamed text into markers and the text between them, never rescanning.

Text streams out as soon as it arrives, except a held-back tail that could still turn into a
marker once the next chunk comes (``<thi`` might become ``<think>``). The tail is shorter than
the longest marker, so every character is examined a bounded number of times.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

_LONG_TEXT = 512
"""From this length on, markers are found by substring search instead of the regex."""

Piece = tuple[str | None, str]
"""``(marker terminal name, text)`` for a marker, ``(None, text)`` for the text between."""


@cache
def _tables(
    markers: tuple[tuple[str, str], ...],
) -> tuple[dict[str, str], re.Pattern[str], frozenset[str], int, re.Pattern[str]]:
    """What scanning needs, built once per set of markers (a parser is made per completion)."""
    texts = sorted((text for text, _ in markers), key=len, reverse=True)  # longest first
    regex = re.compile("|".join(re.escape(text) for text in texts))
    prefixes = frozenset(text[:i] for text in texts for i in range(1, len(text)))
    starts = re.compile("[" + re.escape("".join({text[0] for text in texts})) + "]")
    return dict(markers), regex, prefixes, len(texts[0]), starts


class MarkerScanner:
    """Incremental marker recognition for one completion (sans-IO: strings in, pieces out)."""

    def __init__(self, markers: Mapping[str, str]) -> None:
        self._names, self._regex, self._prefixes, self._longest, self._starts = _tables(
            tuple(sorted(markers.items()))
        )
        self._held = ""

    def feed(self, chunk: str) -> list[Piece]:
        """The markers and text that ``chunk`` completes."""
        text = self._held + chunk if self._held else chunk
        pieces: list[Piece] = []
        position = 0
        if self._starts.search(text):  # most chunks hold no marker character at all
            for start, marker in self._markers_in(text):
                if start > position:
                    pieces.append((None, text[position:start]))
                pieces.append((self._names[marker], marker))
                position = start + len(marker)
        keep = self._held_back(text, position)
        if len(text) - keep > position:
            pieces.append((None, text[position : len(text) - keep]))
        self._held = text[len(text) - keep :]
        return pieces

    def _markers_in(self, text: str) -> list[tuple[int, str]]:
        """``(position, marker)`` of every marker, leftmost first, the longest at a position."""
        if len(text) < _LONG_TEXT:
            return [(found.start(), found.group()) for found in self._regex.finditer(text)]
        # One C-speed substring search per marker beats the regex engine's per-character
        # stepping on long text (a whole completion parsed at once).
        hits = []
        for marker in self._names:
            start = text.find(marker)
            while start >= 0:
                hits.append((start, -len(marker), marker))
                start = text.find(marker, start + 1)
        found, end = [], 0
        for start, _, marker in sorted(hits):
            if start >= end:
                found.append((start, marker))
                end = start + len(marker)
        return found

    def close(self) -> list[Piece]:
        """Whatever was held back, as text: the completion ended."""
        held, self._held = self._held, ""
        return [(None, held)] if held else []

    def _held_back(self, text: str, start: int) -> int:
        """Length of the longest tail of ``text[start:]`` that begins some marker: only the
        last ``longest - 1`` characters can, and only from a character a marker starts with."""
        found = self._starts.search(text, max(start, len(text) - self._longest + 1))
        while found is not None:
            if text[found.start() :] in self._prefixes:
                return len(text) - found.start()
            found = self._starts.search(text, found.start() + 1)
        return 0
