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

from codec.arguments.json_arguments import JsonArgumentsText
from codec.arguments.json_stream import JsonArgumentsStream


class JsonArguments(JsonArgumentsText):
    """The arguments of one Solar call: ``CALL_ARGS`` opens them, ``ARGS_JSON`` is their text."""

    terminals: ClassVar[frozenset[str]] = frozenset({"CALL_ARGS", "ARGS_JSON"})

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
        fragment, complete = self._close_json(self._json, truncated)
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
            self._reject(stream, rejected, self._rejected_at(text, rejected))

    def _rejected_at(self, text: str, rejected: str) -> int:
        """Where ``rejected``, the end of the ``text`` just fed, starts in the piece being read
        (in an earlier piece: < 0): ``text`` ends where that piece does."""
        return len(text) - len(rejected)
