"""Splits streamed text into markers and the text between them, never rescanning.

Text streams out as soon as it arrives, except a held-back tail that could still turn into a
marker once the next chunk comes (``<thi`` might become ``<think>``). The tail is shorter than
the longest marker, so every character is examined a bounded number of times.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

Piece = tuple[str | None, str]
"""``(marker terminal name, text)`` for a marker, ``(None, text)`` for the text between."""


class MarkerScanner:
    """Incremental marker recognition for one completion (sans-IO: strings in, pieces out)."""

    def __init__(self, markers: Mapping[str, str]) -> None:
        ordered = sorted(markers, key=len, reverse=True)  # longest first: `</think>` before `<`
        self._names = dict(markers)
        self._regex = re.compile("|".join(re.escape(marker) for marker in ordered))
        self._prefixes = frozenset(m[:i] for m in markers for i in range(1, len(m)))
        self._longest = max(map(len, markers))
        self._held = ""

    def feed(self, chunk: str) -> list[Piece]:
        """The markers and text that ``chunk`` completes."""
        text = self._held + chunk
        pieces: list[Piece] = []
        position = 0
        for found in self._regex.finditer(text):
            if found.start() > position:
                pieces.append((None, text[position : found.start()]))
            pieces.append((self._names[found.group()], found.group()))
            position = found.end()
        keep = self._held_back(text, position)
        if len(text) - keep > position:
            pieces.append((None, text[position : len(text) - keep]))
        self._held = text[len(text) - keep :]
        return pieces

    def close(self) -> list[Piece]:
        """Whatever was held back, as text: the completion ended."""
        held, self._held = self._held, ""
        return [(None, held)] if held else []

    def _held_back(self, text: str, start: int) -> int:
        """Length of the longest tail of ``text[start:]`` that begins some marker."""
        for length in range(min(self._longest - 1, len(text) - start), 0, -1):
            if text[-length:] in self._prefixes:
                return length
        return 0
