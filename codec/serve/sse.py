"""Lines of a server-sent event stream, from bytes as they arrive, with a cap on a line's length.

Sans-IO (bytes in, lines out), so that an engine's stream is read in bounded memory whatever it
sends: ``httpx``'s ``aiter_lines`` buffers a line until its end, however long. A line ends at
``\\r\\n``, ``\\r`` or ``\\n`` (the SSE grammar allows each); new bytes are searched once, and
the unfinished line is kept as pieces until its end arrives, so nothing is rescanned.
"""

from __future__ import annotations

import re

_LINE_END = re.compile(rb"\r\n|\r|\n")


class LineTooLong(Exception):
    """A line passed the cap before it ended."""


class LineReader:
    """``feed(data)`` gives the lines ``data`` finishes (without their ends); ``LineTooLong``
    once the unfinished line is longer than ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._pieces: list[bytes] = []
        self._size = 0
        self._after_cr = False  # a "\r" ended the last line: a "\n" right after it belongs to it

    def feed(self, data: bytes) -> list[bytes]:
        if data and self._after_cr:
            self._after_cr = False
            data = data[1:] if data.startswith(b"\n") else data
        lines = []
        start = 0
        for end in _LINE_END.finditer(data):
            self._keep(data[start : end.start()])
            lines.append(b"".join(self._pieces))
            self._pieces, self._size = [], 0
            start = end.end()
            self._after_cr = end.group() == b"\r" and start == len(data)
        self._keep(data[start:])
        return lines

    def _keep(self, rest: bytes) -> None:
        if not rest:
            return
        self._pieces.append(rest)
        self._size += len(rest)
        if self._size > self.max_bytes:
            raise LineTooLong(f"a line of more than {self.max_bytes} bytes")
