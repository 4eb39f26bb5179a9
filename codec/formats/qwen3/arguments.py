"""Qwen3's call syntax: one JSON object between the call markers, with the name inside::

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

The whole object is one run of ``CALL_JSON``. The reader reads its head (``{"name": "…",
"arguments": ``) first and announces the call (``ArgumentContext.start``); then the arguments
stream through the shared incremental JSON reader (``codec.arguments.json_stream``), string
values as they arrive, and the object's own ``}`` closes it.

What models write wrong, read leniently (each a diagnostic):

- arguments written as a JSON string (double-encoded: ``"arguments": "{\\"city\\": …}"``) or
  in Python's syntax: held until the call ends, then read by the tolerant decoder
  (``codec.arguments.tolerant``), as Solar's refused arguments are (``arguments_repaired``);
- ``"parameters"`` for ``"arguments"`` (Hermes fine-tunes), and a call with no arguments
  (``{"name": "f"}``): the arguments are ``{}``;
- the keys in another order (``{"arguments": …, "name": …}``), or other text before the name:
  the object is held until it closes, then read whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from codec.arguments.json_arguments import JsonArgumentsText
from codec.arguments.json_stream import JsonArgumentsStream
from codec.arguments.lenient_value import lossless
from codec.arguments.reader import ArgumentContext
from codec.arguments.tolerant import decode_arguments, decode_value
from codec.formats.qwen3.head import HEAD_LIMIT, MORE, Whole, read_head

_KEYS = ("arguments", "parameters")


class CallObject(JsonArgumentsText):
    """The arguments of one Qwen3 call: ``CALL_HEAD`` (``{"name": "…", "arguments":``) and
    ``CALL_JSON``, the rest of the call object (all of it when it has no such head)."""

    terminals: ClassVar[frozenset[str]] = frozenset({"CALL_HEAD", "CALL_JSON"})

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        self._head: list[str] = []  # text before the name is known
        self._whole: Whole | None = None  # the object held until it closes (keys out of order)
        self._closed = False  # the object's own ``}`` after the arguments
        self._junk = False  # text after the call object's ``}`` (content from there on)
        self._line_ended = False  # a new line after the object's ``}``: the template's `}\n</tool_call>`
        self._done = False  # the arguments were read whole at once

    def name(self, written: str, terminal: str, inserted: bool) -> str | None:
        return None  # read from the object (``read_head``), then announced

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        if self._done:
            self._outer(text, 0)
        elif self._json is not None:
            self._feed(self._json, text)
        elif self._whole is not None:
            self._hold(text, 0)
        else:
            self._read_head(text)

    @property
    def held(self) -> int:
        held = sum(map(len, self._head)) + (self._whole.size if self._whole is not None else 0)
        return held + (self._json.held if self._json is not None else 0)

    @property
    def complete(self) -> bool:
        """The call object was closed and its line ended (the template writes
        ``}\n</tool_call>``): all but the closing marker came. A model that stopped right after
        the ``}`` may have been cut before the rest: its call is not finished for it."""
        if not (self._closed and self._line_ended):
            return False
        return self._done or (self._json is not None and self._json.closed and not self._rejected)

    def run_sink(self, terminal: str) -> Callable[[str], None] | None:
        """Once the head is read and the arguments have begun: the common piece, more of a
        string value, straight to the JSON reader (``_step``, written out); any other through
        ``token``. The builder asks only once the call is announced (its name is in the run)."""
        stream = self._json
        if terminal != "CALL_JSON" or stream is None or self._done:
            return None
        written, sent, delta, string_text, token = (
            self._written,
            self._sent,
            self._context.delta,
            stream.string_text,
            self.token,
        )

        def sink(text: str) -> None:
            if self._written and not stream.closed:
                fragment = string_text(text)
                if fragment is not None:
                    written.append(text)
                    if fragment:
                        sent.append(fragment)
                        delta(fragment)
                    return
            token(terminal, text, False)

        return sink

    def finish(self, truncated: bool) -> None:
        if self._done:
            if not truncated:
                self._delta("}")
            return
        if self._json is None:  # never named (the builder reported it): the text is content
            self._context.content("".join(self._head) + (self._whole.text() if self._whole else ""))
            self._context.delta(self._context.emitter.finish())
            return
        if self._rejected and not truncated and self._reread():
            return
        fragment, complete = self._close_json(self._json, truncated)
        if not complete and not self._json.closed:  # closed, then refused the object's own ``}``: whole
            self._context.report("incomplete_arguments", "the arguments JSON was cut short")
            self._context.content(self._json.unconsumed)
        elif not self._closed and not truncated:
            self._context.report("arguments_repaired", "the call object's closing brace was missing")
        self._delta(fragment)

    def _read_head(self, text: str) -> None:
        self._head.append(text)
        head = "".join(self._head)
        base = len(text) - len(head)  # where the head began, from the start of ``text`` (<= 0)
        found = read_head(head)
        if found == MORE and len(head) <= HEAD_LIMIT:
            self._head = [head]
            return
        self._head = []
        if not isinstance(found, tuple):
            self._whole = Whole()
            self._hold(head, base)
            return
        name, at, closed = found
        self._context.start(name, base + at)
        self._json = JsonArgumentsStream(self._context.emitter, self._context.schema_of, self._context.limits.max_depth)
        if closed:  # ``{"name": "f"}``: no arguments
            self._step(self._json, "{}", base + at)
            self._written, self._closed = [], True
        if at < len(head):
            self._feed(self._json, head[at:], base + at)

    def _hold(self, text: str, base: int) -> None:
        """Text of an object whose head was not first, ``base`` characters into the piece being
        read: held until the object closes, then read whole."""
        assert self._whole is not None
        end = self._whole.add(text)
        if end is None:
            return
        whole, at = self._whole.text(), base + end
        decoded = decode_value(whole, None, max_depth=self._context.limits.max_depth)
        name = decoded.value.get("name") if isinstance(decoded.value, dict) else None
        if not isinstance(name, str) or not decoded.complete or not lossless(decoded.repairs):
            self._whole.add(text[end:])  # closed: kept as it is, content when the call ends
            return
        self._whole = None
        self._context.start(name, at)
        self._taken(decoded.value, whole, at)
        self._closed = True  # only white space may follow
        if end < len(text):
            self._outer(text[end:], at)

    def _taken(self, value: dict[str, Any], whole: str, at: int) -> None:
        """The arguments of a call object read whole: its ``arguments`` (or ``parameters``), or
        else its other members (``{"name": "f", "city": "Paris"}``)."""
        given = next((key for key in _KEYS if key in value), None)
        extra = [key for key in value if key not in ("name", given)]
        arguments = value[given] if given is not None else {key: value[key] for key in extra}
        if given is not None and extra:
            self._context.report("invalid_arguments", f"members besides the name and {given}: kept as content", at)
            self._context.content(whole)
        if isinstance(arguments, str):
            again = decode_arguments(arguments, self._context.parameters(), max_depth=self._context.limits.max_depth)
            arguments = again.value if again is not None else None
            if again is not None and not lossless(again.repairs):  # `{"a": 1}true`: the `true` is kept
                self._context.report("invalid_arguments", f"{given} that lose text when read: kept as content", at)
                self._context.content(whole)
        if not isinstance(arguments, dict):
            self._context.report("invalid_arguments", "a call object whose arguments are not an object", at)
            self._context.content(whole)
            arguments = {}
        else:
            self._context.report("arguments_repaired", "a call object read whole (its name did not come first)", at)
        rest = self._context.emitter.replace(arguments, "") or "}"
        self._delta(rest[:-1])  # its ``}`` is sent when the call is finished (``finish``)
        self._done = True

    def _feed(self, stream: JsonArgumentsStream, text: str, base: int = 0) -> None:
        if stream.closed:  # the arguments ended: what follows is the call object's
            self._outer(text, base)
            return
        if not self._written:  # white space before the arguments value is layout
            value = text.lstrip()
            base, text = base + len(text) - len(value), value
            if not text:
                return
        body = text.rstrip()
        if not self._written and body.endswith("}") and len(body) > 1:
            # The object's own ``}`` kept apart, so arguments that arrive whole (every whole
            # parse) are read at once (``JsonArgumentsStream``'s ``json.loads`` path).
            self._step(stream, body[:-1], base)
            if stream.closed:
                self._outer(text[len(body) - 1 :], base + len(body) - 1)
                return
            self._step(stream, text[len(body) - 1 :], base + len(body) - 1)
            return
        self._step(stream, text, base)

    def _step(self, stream: JsonArgumentsStream, text: str, base: int) -> None:
        """``text``, ``base`` characters into the piece being read, to the JSON reader."""
        self._written.append(text)
        fragment, rejected = stream.feed(text)
        if fragment or stream.taken:
            self._delta(fragment)
        if stream.dropped:
            self._keep_dropped(stream, base)
        if not rejected:
            return
        at = base + len(text) - len(rejected)
        if stream.closed and not self._rejected:  # the arguments ended: what follows is the object's
            self._written[-1] = text[: len(text) - len(rejected)]
            self._outer(rejected, at)
        else:
            self._reject(stream, rejected, at)

    def _outer(self, text: str, at: int) -> None:
        """Text after the arguments, ``at`` characters into the piece being read: white space
        and the call object's ``}``; from anything else on, content."""
        if self._junk:
            self._context.content(text)
            return
        position = len(text) - len(text.lstrip())
        if self._closed and "\n" in text[:position]:
            self._line_ended = True
        if position < len(text) and text[position] == "}" and not self._closed:
            self._closed = True
            position = len(text) - len(text[position + 1 :].lstrip())
            self._line_ended = "\n" in text[:position]
        if position < len(text):
            self._context.report("invalid_arguments", "text after the call object", at + position)
            self._junk = True
            self._context.content(text[position:])

    def _reread_text(self) -> str:
        """The arguments text (a JSON string holding them, Python's syntax, ...) without the
        call object's own ``}``, which is not theirs."""
        text = "".join(self._written).rstrip()
        return text[:-1] if text.endswith("}") and not self._closed else text
