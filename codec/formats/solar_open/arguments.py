"""Solar Open's argument syntax: one JSON object after ``<|tool_call:args|>``, streamed by the
shared incremental JSON reader (``codec.arguments.json_stream``)::

    <|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather<|tool_call:args|>{"city": "Paris"}<|tool_call:end|>

Text the JSON reader refuses (``{'a': 'x'}``, ``{"a": 1,}``) is held until the call ends; then
the whole arguments text is read again by the tolerant decoder (``codec.arguments.tolerant``),
and its object becomes the arguments when the JSON already streamed begins it. Otherwise the
refused text is content, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from codec.arguments.emitter import dumps
from codec.arguments.json_stream import JsonArgumentsStream
from codec.arguments.read_again import read_again
from codec.arguments.reader import ArgumentContext


class JsonArguments:
    """The arguments of one Solar call: ``CALL_ARGS`` opens them, ``ARGS_JSON`` is their text."""

    terminals: ClassVar[frozenset[str]] = frozenset({"CALL_ARGS", "ARGS_JSON"})

    def __init__(self, context: ArgumentContext) -> None:
        self._context = context
        self._json: JsonArgumentsStream | None = None
        self._rejecting = False
        self._written: list[str] = []  # the arguments text, for a second, lenient reading
        self._sent: list[str] = []  # the JSON fragments streamed so far
        self._rejected: list[str] = []  # refused text, held until the call ends

    def name(self, written: str, terminal: str, inserted: bool) -> str | None:
        return written  # as the reader interface has it: a subclass may read the name later

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        if terminal == "CALL_ARGS":
            self._json = JsonArgumentsStream(
                self._context.emitter, self._context.schema_of, self._context.limits.max_depth
            )
        elif self._json is not None:
            self._feed(self._json, text)

    @property
    def held(self) -> int:
        return 0 if self._json is None else self._json.held

    @property
    def complete(self) -> bool:
        """The arguments object was closed, and nothing the JSON reader refused is held."""
        return self._json is not None and self._json.done and not self._rejected

    def run_sink(self, terminal: str) -> Callable[[str], None] | None:
        if terminal != "ARGS_JSON" or self._json is None:
            return None
        stream = self._json  # JSON text always goes through the tokenizer: escapes span chunks
        written, sent, delta, string_text = self._written, self._sent, self._context.delta, stream.string_text

        def sink(text: str) -> None:
            # ``_feed``, written out for the common chunk: more of a string value.
            written.append(text)
            fragment = string_text(text)
            if fragment is None:
                self._fed(stream, text, *stream.feed(text))
            elif fragment:
                sent.append(fragment)
                delta(fragment)

        return sink

    def finish(self, truncated: bool) -> None:
        if self._json is None:
            self._context.delta(self._context.emitter.finish())
            return
        if self._rejected and not truncated and self._reread():
            return
        for rejected in self._rejected:
            self._context.content(rejected)
        emitter = self._context.emitter
        if truncated and emitter.in_string and emitter.depth == 1:
            self._delta(emitter.end_string())  # a top-level string cut off: it ends here
        fragment, complete = self._json.close()
        if self._json.dropped:  # a duplicate's number or word that only the end of output ended
            self._keep_dropped(self._json, at_end=True)
        if not complete:
            self._context.report("incomplete_arguments", "the arguments JSON was cut short")
            self._context.content(self._json.unconsumed)
        self._delta(fragment)

    def _feed(self, stream: JsonArgumentsStream, text: str) -> None:
        self._written.append(text)
        fragment, rejected = stream.feed(text)
        self._fed(stream, text, fragment, rejected)

    def _fed(self, stream: JsonArgumentsStream, text: str, fragment: str, rejected: str) -> None:
        """What the JSON reader made of ``text``: its fragment, dropped duplicates, refused text."""
        if fragment or stream.taken:  # taken whole: its fragment may be left unwritten (lazy)
            self._delta(fragment)
        if stream.dropped:
            self._keep_dropped(stream)
        if rejected:
            self._reject(stream, text, rejected)

    def _delta(self, fragment: str) -> None:
        self._sent.append(fragment)
        self._context.delta(fragment)

    def _keep_dropped(self, stream: JsonArgumentsStream, at_end: bool = False) -> None:
        """A duplicate member's text goes to content; ``at_end``: the output ended it, and the
        parser stands after all the text, so the duplicate starts its length before here."""
        for dropped, at in zip(stream.dropped, stream.dropped_at, strict=True):
            where = -len(dropped) if at_end else at
            self._context.report("duplicate_key", "an argument given twice; the first is kept", where)
            self._context.content(dropped)
        stream.dropped.clear()
        stream.dropped_at.clear()

    def _reject(self, stream: JsonArgumentsStream, text: str, rejected: str) -> None:
        if stream.too_deep:
            self._context.content(rejected)
            at = self._rejected_at(text, rejected)  # the same however chunked
            self._context.stop("too_deep", f"arguments nested deeper than {self._context.limits.max_depth}", at)
            return
        if not self._rejecting:  # one diagnostic for the whole rejected rest, however chunked
            self._context.report(
                "invalid_arguments", "arguments text that is not JSON", self._rejected_at(text, rejected)
            )
            self._rejecting = True
        self._rejected.append(rejected)

    def _rejected_at(self, text: str, rejected: str) -> int:
        """Where ``rejected``, the end of the ``text`` just fed, starts in the piece being read
        (in an earlier piece: < 0): ``text`` ends where that piece does."""
        return len(text) - len(rejected)

    def _sent_text(self) -> str:
        """The JSON streamed so far: all of the object when it was taken whole (its one
        fragment may not have been written: ``ArgumentsEmitter.take``)."""
        if self._json is not None and self._json.taken:
            return dumps(self._context.emitter.value)[:-1]  # its ``}`` is written at the end
        return "".join(self._sent)

    def _reread(self) -> bool:
        """The arguments read again, leniently, after the JSON reader refused some of them."""
        rest = read_again(self._context, "".join(self._written), self._sent_text())
        if rest is None:
            return False
        self._delta(rest)
        return True
