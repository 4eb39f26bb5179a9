"""The machine behind ``codec.arguments.tolerant``: one forward pass over the text with an
explicit stack of open containers (no recursion, so nesting costs no Python stack), typing each
value by its schema as it is placed.

What may follow each state is one table (``_TABLE``): ``(state, class of the next character)``
to a handler. Tolerant reading has no error state, so every pair has an entry, and every handler
either consumes text or moves to a state whose handler for that character will.

Longer than ~300 lines: one state machine — its table, its handlers and the typing they share;
split up, the table and its handlers would live apart.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codec.arguments.schema import Kinds, json_kind
from codec.arguments.tolerant_schema import Schema, Schemas, names, strict, typed
from codec.arguments.tolerant_text import (
    MISSING,
    SPACE,
    Repair,
    excerpt,
    quote_at,
    quotes,
    read_quoted,
    read_scalar,
    run_end,
    skip_space,
    unescape,
)

Result = tuple[Any, tuple[Repair, ...], bool]
"""The value, the repairs, and whether the text ended outside every string and container."""

_STRUCTURES = frozenset({"array", "object"})
_CLASSES = {"[": "open", "{": "open", "]": "close", "}": "close", ",": "comma", ":": "colon"}
_CLOSER = {"array": "]", "object": "}"}
_QUOTE = re.compile("[\"']")


class _State(enum.Enum):
    VALUE = "a value may begin"
    KEY = "a key, or the end of the object"
    COLON = "after a key: a colon"
    AFTER = "after a value: a comma, a closing bracket, or the end"


@dataclass(slots=True, eq=False)
class _Frame:
    """An open container, or the top level (``kind == "top"``, holding one value)."""

    kind: str
    start: int
    schema: Schema
    admitted: Kinds | None
    value: Any
    as_text: bool = False  # a bracket where the schema wants a string: read as its text
    key: str = ""  # the key of the value that comes next
    key_at: int = 0  # where that key began
    member: Schema = None  # the schema of the value that comes next
    last: int = -1  # where the last placed value began; -1: it was not placed


class _Parser:
    """One decode of ``text``; ``unwrap``: decode JSON found inside strings (once, not again);
    ``verbatim``: the quote inside which nothing is escaped, if the syntax has one."""

    def __init__(
        self, text: str, schema: Schema, max_depth: int, unwrap: bool, schemas: Schemas, verbatim: str | None
    ) -> None:
        self.text, self.max_depth, self.unwrap, self.schemas = text, max_depth, unwrap, schemas
        self.verbatim, self.quotes = verbatim, quotes(verbatim)
        self.repairs: list[Repair] = []
        self.complete = True
        self.state = _State.VALUE
        self.comma = -1  # the comma before an element or member that has not begun
        top = _Frame("top", 0, schema, schemas.kinds(schema), [MISSING], member=schema)
        self.stack = [top]

    def run(self) -> Result:
        text, pos = self.text, 0
        while (pos := skip_space(text, pos)) < len(text):
            pos = _TABLE[self.state, self._class(pos)](self, pos)
        return self._end()

    def _class(self, pos: int) -> str:
        if quote_at(self.text, pos, self.quotes):
            return "quote"
        if len(self.stack) == 1 and self.text[pos] in "]},:":
            return "other"  # nothing encloses the top level: raw text, as GLM writes a string
        return _CLASSES.get(self.text[pos], "other")

    def _stops(self) -> str:
        return "" if len(self.stack) == 1 else ",]}"

    def _repair(self, code: str, at: int, message: str) -> None:
        self.repairs.append(Repair(code, at, message))

    def _open(self, pos: int) -> int:
        frame = self.stack[-1]
        if len(self.stack) > self.max_depth:  # the top level is no container
            end = run_end(self.text, pos, self._stops())
            self._repair("too_deep", pos, f"nested deeper than {self.max_depth}: kept as text")
            self._place(self.text[pos:end].rstrip(SPACE), pos)
            return end
        kind = "array" if self.text[pos] == "[" else "object"
        admitted = self.schemas.kinds(frame.member)
        as_text = admitted is not None and kind not in admitted and "string" in admitted
        opened = _Frame(kind, pos, frame.member, admitted, [] if kind == "array" else {}, as_text)
        if kind == "array" and not as_text:
            opened.member = self.schemas.member(frame.member, None)
        self.stack.append(opened)
        self.state, self.comma = (_State.VALUE if kind == "array" else _State.KEY), -1
        return pos + 1

    def _close(self, pos: int) -> int:
        frame = self.stack[-1]
        if self.comma >= 0:
            self._repair("trailing_comma", self.comma, f"comma before {self.text[pos]}")
        elif self.state is _State.COLON or (self.state is _State.VALUE and frame.kind == "object"):
            self._repair("missing_value", pos, f"key {excerpt(frame.key)} has no value: left out")
        if self.text[pos] != _CLOSER[frame.kind]:
            self._repair("mismatched_bracket", pos, f"{self.text[pos]} closes the {frame.kind} opened at {frame.start}")
        self._pop(pos + 1)
        return pos + 1

    def _pop(self, end: int) -> None:
        frame = self.stack.pop()
        value = frame.value
        if frame.as_text:
            value = self._bare(self.text[frame.start : end].rstrip(SPACE), frame.start, frame.schema)
        elif frame.admitted is not None and frame.kind not in frame.admitted:
            self._repair("untyped", frame.start, f"{frame.kind} where the schema wants {names(frame.admitted)}")
        self._place(value, frame.start)

    def _place(self, value: Any, start: int) -> None:
        frame = self.stack[-1]
        self.state, self.comma, frame.last = _State.AFTER, -1, start
        if frame.kind == "array":
            frame.value.append(value)
        elif frame.kind == "top":
            frame.value[0] = value
        elif frame.key in frame.value:
            self._repair("duplicate_key", frame.key_at, f"key {excerpt(frame.key)} given again: the first value kept")
            frame.last = -1
        else:
            frame.value[frame.key] = value

    def _comma(self, pos: int) -> int:
        frame = self.stack[-1]
        if self.state is _State.COLON or (self.state is _State.VALUE and frame.kind == "object"):
            self._repair("missing_value", pos, f"key {excerpt(frame.key)} has no value: left out")
        elif self.state is not _State.AFTER:
            self._repair("missing_value", pos, f"nothing before this comma in the {frame.kind}")
        self.state, self.comma = (_State.KEY if frame.kind == "object" else _State.VALUE), pos
        return pos + 1

    def _colon(self, pos: int) -> int:
        self.state = _State.VALUE
        return pos + 1

    def _missing_colon(self, pos: int) -> int:
        self._repair("missing_colon", pos, f"no colon after key {excerpt(self.stack[-1].key)}")
        self.state = _State.VALUE
        return pos

    def _missing_key(self, pos: int) -> int:
        end = run_end(self.text, pos + 1, ",]}")
        self._repair("missing_key", pos, f"member without a key left out: {excerpt(self.text[pos:end])}")
        self.state, self.stack[-1].last = _State.AFTER, -1
        return end

    def _quoted_key(self, pos: int) -> int:
        quote = quote_at(self.text, pos, self.quotes) or '"'
        quoted = read_quoted(self.text, pos, quote, ":,]}", self.repairs, self.verbatim)
        self._quoted(quote, quoted.closed, pos)
        self._set_key(quoted.text, pos)
        return quoted.end

    def _bare_key(self, pos: int) -> int:
        end = run_end(self.text, pos, ":,]}")
        key = self.text[pos:end].rstrip(SPACE)
        self._repair("bare_key", pos, f"key {excerpt(key)} without quotes")
        self._set_key(key, pos)
        return end

    def _set_key(self, key: str, pos: int) -> None:
        frame = self.stack[-1]
        frame.key, frame.key_at = key, pos
        frame.member = None if frame.as_text else self.schemas.member(frame.schema, key)
        self.state, self.comma = _State.COLON, -1

    def _quoted(self, quote: str, closed: bool, pos: int) -> None:
        if quote == "'":
            self._repair("single_quotes", pos, "string in single quotes")
        if not closed:
            self._repair("unclosed_string", pos, "the text ended inside this string")
            self.complete = False

    def _string(self, pos: int) -> int:
        frame, quote = self.stack[-1], quote_at(self.text, pos, self.quotes) or '"'
        found: list[Repair] = []
        quoted = read_quoted(self.text, pos, quote, self._stops(), found, self.verbatim)
        if frame.kind == "top" and not quoted.closed and quoted.first_inner >= 0:
            self._place(self._bare(self.text[pos:].rstrip(SPACE), pos, frame.member), pos)  # "Hi" she said
            return len(self.text)
        self.repairs.extend(found)
        self._quoted(quote, quoted.closed, pos)
        self._place(self._typed_string(quoted.text, pos, frame.member), pos)
        return quoted.end

    def _scalar(self, pos: int) -> int:
        end = run_end(self.text, pos, self._stops())
        self._place(self._bare(self.text[pos:end].rstrip(SPACE), pos, self.stack[-1].member), pos)
        return end

    def _junk(self, pos: int) -> int:
        """Text after a value where a comma or a closing bracket belongs: the value and that text
        are one unquoted string (``"x" y``), or, after a top-level container, trailing text."""
        frame = self.stack[-1]
        if frame.kind == "top":
            return self._trailing(pos)
        end = run_end(self.text, pos, ",]}")
        if frame.last >= 0:
            value = self._bare(self.text[frame.last : end].rstrip(SPACE), frame.last, frame.member)
            frame.value[-1 if frame.kind == "array" else frame.key] = value
        return end

    def _trailing(self, pos: int) -> int:
        frame = self.stack[0]
        value = frame.value[0]
        if isinstance(value, list | dict) and (frame.admitted is None or json_kind(value) in frame.admitted):
            self._repair("trailing_text", pos, f"text after the value: {excerpt(self.text[pos:])}")
        else:
            start = skip_space(self.text, 0)
            frame.value[0] = self._bare(self.text[start:].rstrip(SPACE), start, frame.member)
        return len(self.text)

    def _end(self) -> Result:
        if self.state is _State.VALUE and len(self.stack) == 1:
            self._place(self._bare("", len(self.text), self.stack[0].member), len(self.text))
        while len(self.stack) > 1:
            frame = self.stack[-1]
            if self.state is _State.COLON or (self.state is _State.VALUE and frame.kind == "object"):
                self._repair("missing_value", len(self.text), f"key {excerpt(frame.key)} has no value: left out")
            self._repair("unclosed_container", frame.start, f"the text ended inside this {frame.kind}")
            self.complete = False
            self._pop(len(self.text))
        return self.stack[0].value[0], tuple(self.repairs), self.complete

    def _bare(self, word: str, at: int, schema: Schema) -> Any:
        """Text written without quotes: a scalar if it spells one the schema admits, else text."""
        admitted = self.schemas.kinds(schema)
        reading, python = read_scalar(word)
        fitting = typed(reading, admitted)
        if python and reading is not MISSING:
            self._repair("python_literal", at, f"Python's {word} read as {json.dumps(reading)}")
        if fitting is not MISSING:
            return fitting
        if admitted is None or "string" in admitted:
            self._repair("unquoted_string", at, f"{excerpt(word)} read as a string")
            return word
        self._repair("untyped", at, f"{excerpt(word)} is not {names(admitted)}: kept as written")
        return word if reading is MISSING else reading

    def _typed_string(self, text: str, at: int, schema: Schema) -> Any:
        """A quoted string's value: itself, or what it holds when the schema rules strings out."""
        admitted = self.schemas.kinds(schema)
        if admitted is None or "string" in admitted:
            return text
        if self.unwrap and admitted & _STRUCTURES and text.lstrip(SPACE)[:1] in ("[", "{"):
            depth = self.max_depth - len(self.stack) + 1
            value, inner, complete = decode(text, schema, depth, unwrap=False, verbatim=self.verbatim)
            if complete and isinstance(value, list | dict):
                self._repair("json_in_string", at, f"{json_kind(value)} written as JSON inside a string")
                self.repairs.extend(Repair(repair.code, at, repair.message) for repair in inner)
                return value
        fitting = typed(read_scalar(text.strip(SPACE))[0], admitted)
        if fitting is not MISSING:
            self._repair("quoted_scalar", at, f"{excerpt(text)} in quotes read as {names(admitted)}")
            return fitting
        self._repair("untyped", at, f"string {excerpt(text)} where the schema wants {names(admitted)}")
        return text


_TABLE: dict[tuple[_State, str], Callable[[_Parser, int], int]] = {
    (_State.VALUE, "open"): _Parser._open,
    (_State.VALUE, "close"): _Parser._close,
    (_State.VALUE, "comma"): _Parser._comma,
    (_State.VALUE, "colon"): _Parser._scalar,
    (_State.VALUE, "quote"): _Parser._string,
    (_State.VALUE, "other"): _Parser._scalar,
    (_State.KEY, "open"): _Parser._bare_key,
    (_State.KEY, "close"): _Parser._close,
    (_State.KEY, "comma"): _Parser._comma,
    (_State.KEY, "colon"): _Parser._missing_key,
    (_State.KEY, "quote"): _Parser._quoted_key,
    (_State.KEY, "other"): _Parser._bare_key,
    (_State.COLON, "open"): _Parser._missing_colon,
    (_State.COLON, "close"): _Parser._close,
    (_State.COLON, "comma"): _Parser._comma,
    (_State.COLON, "colon"): _Parser._colon,
    (_State.COLON, "quote"): _Parser._missing_colon,
    (_State.COLON, "other"): _Parser._missing_colon,
    (_State.AFTER, "open"): _Parser._junk,
    (_State.AFTER, "close"): _Parser._close,
    (_State.AFTER, "comma"): _Parser._comma,
    (_State.AFTER, "colon"): _Parser._junk,
    (_State.AFTER, "quote"): _Parser._junk,
    (_State.AFTER, "other"): _Parser._junk,
}


def decode(text: str, schema: Schema, max_depth: int, unwrap: bool = True, *, verbatim: str | None = None) -> Result:
    """``text`` decoded: strict JSON that fits the schema as it is, else the tolerant machine;
    ``verbatim``: the quote inside which nothing is escaped (none: only ``"`` and ``'``)."""
    schemas = Schemas()
    parser = _Parser(text, schema, max_depth, unwrap, schemas, verbatim)  # refuses an empty quote first
    value = strict(text, schema, max_depth, schemas)
    if value is not MISSING:
        return value, (), True
    admitted = schemas.kinds(schema)
    if unwrap and _escaped(text) and (admitted is None or admitted & _STRUCTURES):
        repairs: list[Repair] = []
        unescaped = unescape(text, 0, False, repairs)
        value, inner, complete = decode(unescaped, schema, max_depth, unwrap=False, verbatim=verbatim)
        if complete and isinstance(value, list | dict):
            found = Repair("json_in_string", 0, "JSON escaped as a string's content: read unescaped")
            return value, (found, *repairs, *(Repair(r.code, 0, r.message) for r in inner)), True
    return parser.run()


def machine(text: str, schema: Schema = None, max_depth: int = 64, *, verbatim: str | None = None) -> Result:
    """The tolerant machine alone, without the strict ``json.loads`` before it: the tests hold
    it to reading strict JSON exactly as ``json.loads`` does."""
    return _Parser(text, schema, max_depth, True, Schemas(), verbatim).run()


def _escaped(text: str) -> bool:
    """Whether ``text`` is an array or object whose first quote is a ``\\"`` where a key or value
    begins: JSON escaped once more, as a string's content (``[{\\"id\\": \\"1\\"}]``)."""
    start = skip_space(text, 0)
    quote = _QUOTE.search(text, start)
    if text[start : start + 1] not in ("[", "{") or quote is None or quote.group() != '"':
        return False
    before = quote.start()
    while text[before - 1] == "\\":
        before -= 1
    escaped = (quote.start() - before) % 2 == 1
    while text[before - 1] in SPACE:
        before -= 1
    return escaped and text[before - 1] in "[{,:"
