"""Where in the text the parser is: character offset, line and the line's start, for error
positions. Both parsing paths (``stream``, ``whole_prompt``) advance one as they consume text."""

from __future__ import annotations


class Position:
    """Offset (characters consumed), 0-based line, and the offset where that line starts."""

    __slots__ = ("line", "line_start", "offset")

    def __init__(self) -> None:
        self.offset = self.line = self.line_start = 0

    def advance(self, text: str) -> None:
        """``text`` was consumed (called once per piece: on the streaming hot path)."""
        self.offset += len(text)
        newline = text.rfind("\n")
        if newline >= 0:
            self.line += text.count("\n")
            self.line_start = self.offset - (len(text) - newline - 1)

    def column(self, offset: int) -> int:
        """The 1-based column of ``offset`` on the current line."""
        return max(offset - self.line_start, 0) + 1
