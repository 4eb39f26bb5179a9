"""What the readers of JSON arguments text share (Solar Open's reader, which DeepSeek-V3.1's and
Kimi K2's reuse, and Qwen3's call object): the fragments sent (for the lenient second reading,
``codec.arguments.read_again``), the text refused until the call ends, duplicate members kept as
content, and how the JSON reader is closed when the call ends.
"""

from __future__ import annotations

from codec.arguments.emitter import dumps
from codec.arguments.json_stream import JsonArgumentsStream
from codec.arguments.read_again import read_again
from codec.arguments.reader import ArgumentContext


class JsonArgumentsText:
    """The state and steps a JSON-arguments reader shares: ``_json`` (the incremental JSON
    reader, once the arguments begin), ``_written`` (their text), ``_sent`` (the fragments
    streamed) and ``_rejected`` (refused text, held until the call ends)."""

    def __init__(self, context: ArgumentContext) -> None:
        self._context = context
        self._json: JsonArgumentsStream | None = None
        self._rejecting = False
        self._written: list[str] = []  # the arguments text, for a second, lenient reading
        self._sent: list[str] = []  # the JSON fragments streamed so far
        self._rejected: list[str] = []  # refused text, held until the call ends

    def _delta(self, fragment: str) -> None:
        self._sent.append(fragment)
        self._context.delta(fragment)

    def _keep_dropped(self, stream: JsonArgumentsStream, base: int = 0, at_end: bool = False) -> None:
        """A duplicate member's text goes to content; ``base``: where the text the JSON reader
        was fed starts in the piece being read; ``at_end``: the output ended it, and the parser
        stands after all the text, so the duplicate starts its length before here."""
        for dropped, at in zip(stream.dropped, stream.dropped_at, strict=True):
            where = -len(dropped) if at_end else base + at
            self._context.report("duplicate_key", "an argument given twice; the first is kept", where)
            self._context.content(dropped)
        stream.dropped.clear()
        stream.dropped_at.clear()

    def _reject(self, stream: JsonArgumentsStream, rejected: str, at: int) -> None:
        """Text the JSON reader refused, starting ``at`` characters into the piece being read
        (the same however the text was chunked): past the depth limit the call stops; else it
        is held, one diagnostic for the whole refused rest."""
        if stream.too_deep:
            self._context.content(rejected)
            self._context.stop("too_deep", f"arguments nested deeper than {self._context.limits.max_depth}", at)
            return
        if not self._rejecting:
            self._context.report("invalid_arguments", "arguments text that is not JSON", at)
            self._rejecting = True
        self._rejected.append(rejected)

    def _sent_text(self) -> str:
        """The JSON streamed so far: all of the object when it was taken whole (its one
        fragment may not have been written: ``ArgumentsEmitter.take``)."""
        if self._json is not None and self._json.taken:
            return dumps(self._context.emitter.value)[:-1]  # its ``}`` is written at the end
        return "".join(self._sent)

    def _reread_text(self) -> str:
        """The arguments text the lenient second reading reads."""
        return "".join(self._written)

    def _reread(self) -> bool:
        """The arguments read again, leniently, after the JSON reader refused some of them."""
        rest = read_again(self._context, self._reread_text(), self._sent_text())
        if rest is None:
            return False
        self._delta(rest)
        return True

    def _close_json(self, stream: JsonArgumentsStream, truncated: bool) -> tuple[str, bool]:
        """The call ends: refused text becomes content, a top-level string cut off ends here,
        and the JSON reader is closed: its last fragment, and whether the arguments were whole."""
        for rejected in self._rejected:
            self._context.content(rejected)
        emitter = self._context.emitter
        if truncated and emitter.in_string and emitter.depth == 1:
            self._delta(emitter.end_string())  # a top-level string cut off: it ends here
        fragment, complete = stream.close()
        if stream.dropped:  # a duplicate's number or word that only the end of output ended
            self._keep_dropped(stream, at_end=True)
        return fragment, complete
