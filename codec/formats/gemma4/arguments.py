"""Gemma 4's value syntax, token by token, into a call's arguments (``ArgumentsEmitter``).

The template's ``format_argument`` writes, literally::

    call:get_weather{city:<|"|>Paris<|"|>,days:3,units:[<|"|>C<|"|>],opts:{exact:true}}

Strings stream as their text arrives; bare scalars are typed from the tool schema (``arguments``)
for top-level keys, so ``3`` becomes a string for a ``string`` parameter. The grammar has already
checked the order of the tokens; this class only tracks where in the nesting it is.

Longer than ~300 lines: the reader's token dispatch, the duplicate members it skips and the end
of a string it holds back (a string left open before its ``}``) share one set of state; split,
each part would reach into the others'.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from codec.arguments.emitter import ArgumentsEmitter
from codec.arguments.reader import ArgumentContext
from codec.arguments.schema import type_text

_OPEN_OBJECT = frozenset({"LBRACE", "BAD_PAREN_OPEN"})
_CLOSE = frozenset({"RBRACE", "BAD_PAREN_CLOSE", "RBRACKET"})
_SCALARS = frozenset({"NUMBER", "TRUE", "FALSE", "NULL"})
_QUOTED = frozenset({"BAD_JSON_STRING", "BAD_PY_STRING"})  # a whole string in another syntax's quotes
_BARE = frozenset({"BAD_BARE_VALUE", "BAD_BARE_ITEM"})  # a string written with no quotes
_CLOSER_OF = {"RBRACE": "}", "RBRACKET": "]"}
# What may end a string's text and be structure after all: closers the model wrote after
# forgetting the string's closing quote (the value of ``{command:`` QUOTE ``ls}`` is ``ls``).
# White space is not held: a string's text that ends in it is streamed at once.
_TAIL = "}]"
_TAIL_LIMIT = 64  # a tail is held up to this long, so holding it costs constant time per chunk


class GemmaValues:
    """The arguments of one Gemma call, fed the call body's tokens in order."""

    TERMINALS = frozenset(
        {
            "LBRACE",
            "RBRACE",
            "LBRACKET",
            "RBRACKET",
            "COMMA",
            "COLON",  # only a skipped duplicate keeps it: ``{k:0}`` stays ``{k:0}`` in content
            "BAD_EQUALS",  # the colon of Python's keyword syntax, ``call:NAME(k=0)``
            "KEY",
            "QUOTE",
            "STRING_TEXT",
            "BAD_PAREN_OPEN",
            "BAD_PAREN_CLOSE",
            "BAD_SQUOTE",
            "BAD_UNOPENED",
        }
        | _SCALARS
        | _QUOTED
        | _BARE
    )

    def __init__(
        self,
        emitter: ArgumentsEmitter,
        schema_for_key: Callable[[str], Mapping[str, Any] | None],
        report: Callable[[str, str], None],
        emit: Callable[[str], None],
        keep: Callable[[str], None],
        max_depth: int = 64,
        stop: Callable[[str, str], None] = lambda code, detail: None,
    ) -> None:
        self._max_depth = max_depth
        self._stop = stop
        self._emitter = emitter
        self._schema_for_key = schema_for_key
        self._report = report
        self._emit = emit
        self._keep = keep  # where the text of a dropped duplicate goes (content): never lost
        self._skipped: list[str] = []
        self._kinds: list[str] = []  # "object" / "array" for each open container, outermost first
        self._expect_key = False
        self._quoted_key: list[str] | None = None  # a <|"|>-quoted key: its opener's text, then its text
        self._key = ""
        self._skipping: int | None = None  # nesting depth of a duplicate member being skipped
        self._skipped_string_open = False
        self.tail = ""  # the end of the open string's text, held: it may be structure (_TAIL)
        self._owed = ""  # closers an ill-closed string's text ended in, for the inserted ones
        self.quote_text: str | None = None  # the string quote's text, as a QUOTE token gave it
        self.dangling_key: str | None = None  # a key whose value has not begun
        self.closed = False  # the outermost object was closed: the arguments are whole

    @property
    def ends(self) -> str:
        """The last characters that send a piece of the open string to ``write`` (``HeldText``):
        a closer that may be structure, and the last of the string's own quote token."""
        return _TAIL + (self.quote_text or "")[-1:]

    @property
    def streaming(self) -> bool:
        """A string value is open (not a quoted key, not a skipped duplicate): its text goes
        straight to the emitter."""
        return self._quoted_key is None and self._skipping is None and self._emitter.in_string

    def token(self, terminal: str, text: str, inserted: bool = False) -> None:
        """One token of the call body (``inserted``: supplied by the repair, not written)."""
        if self._owed:
            self._settle_owed(terminal, inserted)
        if terminal == "BAD_EQUALS":
            terminal = "COLON"
        if terminal not in ("KEY", "COMMA", "COLON") and not (terminal == "QUOTE" and self._expect_key):
            self.dangling_key = None  # a value (or the end of the object) has begun
        if self._skipping is not None:
            if terminal != "COLON" or len(self._kinds) > self._skipping:  # not the one after the key
                self._skipped.append(text)
            self._skip(terminal)
        elif terminal in _OPEN_OBJECT or terminal == "LBRACKET":
            self._open(terminal, text)
        elif terminal in _CLOSE:
            self._close()
        elif terminal == "COMMA":
            self._expect_key = self._kinds[-1:] == ["object"]
        elif terminal == "KEY":
            self._set_key(text)
        elif terminal in _QUOTED and self._expect_key:
            self._set_key(unquote(text))
        elif terminal == "QUOTE" and inserted and self.streaming:
            self._end_ill_closed_string()
        else:
            self._value(terminal, text)

    def write(self, text: str, sink: Callable[[str], None]) -> None:
        """Text of the open string value, to ``sink``: the quote token read as text is the ``"``
        it stands in for (Python's ``\"\"\"`` written as three tokens); the end of the text that
        may yet be structure (``_TAIL``) is held until what follows says."""
        if text == self.quote_text:
            text = '"'
        if self.tail:
            text = self.tail + text
        elif text[-1:] not in _TAIL:
            sink(text)
            return
        kept = max(len(text.rstrip(_TAIL)), len(text) - _TAIL_LIMIT)
        self.tail = text[kept:]
        if kept:
            sink(text[:kept])

    def _flush(self) -> None:
        """The held end of the string is its text after all."""
        if self.tail:
            tail, self.tail = self.tail, ""
            self._emit(self._emitter.string_part(tail))

    def _end_ill_closed_string(self) -> None:
        """The repair closed a string the model left open: closers its text ended in are the
        structure the model wrote (``{command:<|"|>ls}``: the value is ``ls``) as far as they
        close the containers open, innermost first; matched by the closers the repair inserts
        next. Closers before those are the string's text (``{code:<|"|>f(){}}``: ``f(){}``)."""
        tail, self.tail = self.tail, ""
        closing = self._closing()
        size = next(n for n in range(min(len(tail), len(closing)), -1, -1) if tail.endswith(closing[:n]))
        if size < len(tail):
            self._emit(self._emitter.string_part(tail[: len(tail) - size]))
        self._owed = tail[len(tail) - size :]
        self._emit(self._emitter.end_string())

    def _settle_owed(self, terminal: str, inserted: bool) -> None:
        """An inserted closer stands for the next closer an ill-closed string's text ended in;
        any other token leaves those closers unmatched: text, kept as content (never lost)."""
        if inserted and _CLOSER_OF.get(terminal) == self._owed[0]:
            self._owed = self._owed[1:]
        else:
            owed, self._owed = self._owed, ""
            self._keep(owed)

    def _open(self, terminal: str, text: str) -> None:
        if len(self._kinds) > self._max_depth:  # the outermost object is depth 0
            self._keep(text)
            self._stop("too_deep", f"arguments nested deeper than {self._max_depth}")
            return
        kind = "array" if terminal == "LBRACKET" else "object"
        if self._kinds:  # the outermost object is the emitter's implicit top level
            self._emit(self._emitter.begin_container({} if kind == "object" else []))
        self._kinds.append(kind)
        self._expect_key = kind == "object"

    def _close(self) -> None:
        if self._kinds:
            self._kinds.pop()
            self.closed = not self._kinds
        if self._kinds:
            self._emit(self._emitter.end_container())

    def _set_key(self, key: str) -> None:
        self._expect_key = False
        self._key = key
        if self._emitter.has_key(key):
            self._report("duplicate_key", f"argument {key!r} given twice; the first is kept")
            self._skipping = len(self._kinds)
        else:
            self._emitter.key(key)
            self.dangling_key = key

    def _value(self, terminal: str, text: str) -> None:
        if terminal == "QUOTE":
            self._quote(text)
        elif terminal == "STRING_TEXT":
            self._string_text(text)
        elif terminal in ("BAD_SQUOTE", "BAD_UNOPENED"):
            self._emit(self._emitter.begin_string())
            if terminal == "BAD_UNOPENED" and text != '"':  # an unclosed JSON string: its quote is syntax
                self._emit(self._emitter.string_part(text))
        elif terminal in _SCALARS:
            schema = self._schema_for_key(self._key) if len(self._kinds) == 1 else None
            self._emit(self._emitter.value_complete(type_text(text, schema)))
        elif terminal in _QUOTED or terminal in _BARE:
            value: Any = unquote(text) if terminal in _QUOTED else text.rstrip()
            schema = self._schema_for_key(self._key) if len(self._kinds) == 1 else None
            if schema is not None:  # a quoted scalar where the schema wants a number: that number
                value = type_text(value, schema)
            self._emit(self._emitter.value_complete(value))

    def _quote(self, text: str) -> None:
        if self._quoted_key is not None:  # the close of a <|"|>-quoted key (bad_quoted_key)
            key, self._quoted_key = "".join(self._quoted_key[1:]), None
            self._set_key(key)
        elif self._expect_key:
            self._quoted_key = [text]
        elif self._emitter.in_string:
            self._flush()
            self._emit(self._emitter.end_string())
        else:
            if text:
                self.quote_text = text
            self._emit(self._emitter.begin_string())

    def _closing(self) -> str:
        """The closers of the containers open, innermost first."""
        return "".join("}" if kind == "object" else "]" for kind in reversed(self._kinds))

    @property
    def whole(self) -> bool:
        """The arguments are whole: the outermost object was closed, or a string left open
        ends in the closers of every container open (``{command:<|"|>ls}``)."""
        return self.closed or (self.streaming and bool(self._kinds) and self.tail.endswith(self._closing()))

    @property
    def held(self) -> int:
        """Characters of the open string's text held unwritten."""
        return len(self.tail)

    def settle(self) -> None:
        """The call ends: held text is written where it belongs (a string cut off keeps it)."""
        if self.tail and self._emitter.in_string:
            self._flush()
        if self._owed:
            owed, self._owed = self._owed, ""
            self._keep(owed)

    def leftover(self) -> str:
        """Text that arrived and has no place in the arguments yet — a key whose value has not
        begun, a quoted key still open, a duplicate being skipped — for a call cut off here."""
        parts = [self.dangling_key or "", *(self._quoted_key or ()), *self._skipped]
        return "".join(parts)

    def _string_text(self, text: str) -> None:
        if self._quoted_key is not None:
            self._quoted_key.append(text)
        elif self._emitter.in_string:
            if self.tail or text[-1:] in _TAIL or text == self.quote_text:
                self.write(text, self._write_part)
            else:  # most text: neither held nor a quote (``write``'s first test, written out)
                self._emit(self._emitter.string_part(text))

    def _write_part(self, part: str) -> None:
        self._emit(self._emitter.string_part(part))

    def _skip(self, terminal: str) -> None:
        """Take a duplicate member's value out of the arguments: it cannot be both in the dict
        and in the JSON. Its text is kept as content."""
        if terminal in _OPEN_OBJECT or terminal == "LBRACKET":
            self._kinds.append("array" if terminal == "LBRACKET" else "object")
            return
        if terminal in _CLOSE:
            self._kinds.pop()
        elif terminal in ("QUOTE", "BAD_SQUOTE", "BAD_UNOPENED"):
            self._skipped_string_open = not self._skipped_string_open
            if self._skipped_string_open:
                return
        elif terminal not in _SCALARS and terminal not in _QUOTED and terminal not in _BARE:
            return
        if len(self._kinds) == self._skipping:
            self._skipping = None
            text, self._skipped = "".join(self._skipped), []
            self._keep(text)


class GemmaArguments:
    """The ``ArgumentReader`` for Gemma calls: ``GemmaValues`` behind the shared interface."""

    terminals: ClassVar[frozenset[str]] = GemmaValues.TERMINALS

    def __init__(self, context: ArgumentContext) -> None:
        self._context = context
        self._values = GemmaValues(
            context.emitter,
            context.schema_of,
            context.report,
            context.delta,
            context.content,
            context.limits.max_depth,
            context.stop,
        )

    def name(self, written: str, terminal: str, inserted: bool) -> str:
        return written

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        self._values.token(terminal, text, inserted)

    @property
    def held(self) -> int:
        """Values other than strings are tokens, written whole; of a string, only the end
        that may yet be structure is held (``GemmaValues.write``)."""
        return self._values.held

    @property
    def complete(self) -> bool:
        """The outermost ``{…}`` was closed, or a string left open ends in its ``}``."""
        return self._values.whole

    def run_sink(self, terminal: str) -> Callable[[str], None] | None:
        if terminal != "STRING_TEXT" or not self._values.streaming:
            return None
        # The hot path of streaming: most text is neither held nor a quote, and goes straight
        # out; the sink asks ``values`` first (``HeldText``), in the same call.
        return self._context.string_sink(self._values)

    def finish(self, truncated: bool) -> None:
        emitter = self._context.emitter
        self._values.settle()
        if truncated:
            self._context.content(self._values.leftover())  # never lost, never an argument
            if emitter.in_string and emitter.depth == 1:
                self._context.delta(emitter.end_string())
        self._context.delta(emitter.finish())


def unquote(text: str) -> str:
    """The string a JSON (``"…"``) or Python (``'…'``) string literal stands for; its inner text
    as written when its escapes are not valid."""
    try:
        value = json.loads(text) if text[:1] == '"' else ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text[1:-1]
    return value if isinstance(value, str) else text[1:-1]
