"""GLM's argument syntax: key/value pairs between markers, a value raw when its schema says
string and JSON otherwise (``glm.jinja``)::

    <tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call>

A string value streams as it arrives; any other value is typed when it is complete.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from codec.arguments.lenient_value import read_value
from codec.arguments.reader import ArgumentContext
from codec.arguments.schema import STRING, kinds, nests_deeper_than


class KeyValueArguments:
    """The arguments of one GLM call, fed its ``KEY_*`` / ``VALUE_*`` tokens in order."""

    terminals: ClassVar[frozenset[str]] = frozenset(
        {"KEY_OPEN", "ARG_KEY", "KEY_CLOSE", "VALUE_OPEN", "ARG_VALUE", "VALUE_CLOSE"}
    )

    def __init__(self, context: ArgumentContext) -> None:
        self._context = context
        self._emitter = context.emitter
        self._key_parts: list[str] = []
        self._key = ""
        self._key_pending = False  # a key is complete and its value has not begun
        self._value_parts: list[str] | None = None  # a buffered (non-string) value
        self._value_schema: Mapping[str, Any] | None = None
        self._skip_value = False
        self._open = False  # an argument has begun (``<arg_key>``) and its value is not closed

    @property
    def held(self) -> int:
        """A typed value is written at ``</arg_value>``, a marker: nothing is held within a run."""
        return 0

    @property
    def complete(self) -> bool:
        """No argument is open: between ``</arg_value>`` and the next ``<arg_key>``."""
        return not self._open

    def name(self, written: str, terminal: str, inserted: bool) -> str:
        """``<tool_call>get_weathercity</arg_key>``: the ``<arg_key>`` opener was lost (the repair
        inserted it); the tool list tells where the name ends and the key begins."""
        if terminal != "KEY_OPEN" or not inserted:
            return written
        names = [name for name in self._context.tool_names() if written.startswith(name) and len(written) > len(name)]
        if not names:
            return written
        name = max(names, key=len)
        self._key_parts.append(written[len(name) :])
        return name

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        # Most tokens are a key's or a value's text: those first, handled here.
        if terminal == "ARG_VALUE":
            self._value(text)
        elif terminal == "ARG_KEY":
            self._key_parts.append(text)
        elif terminal == "VALUE_OPEN":
            self._value_open(text)
        elif terminal == "VALUE_CLOSE":
            self._open = False
            self._finish_value()
        elif terminal == "KEY_CLOSE":
            self._key_close(text)
        else:  # KEY_OPEN
            self._open = True

    def run_sink(self, terminal: str) -> Callable[[str], None] | None:
        if terminal != "ARG_VALUE":
            return None
        if self._value_parts is not None:  # a value typed when complete: gather its text
            return self._value_parts.append
        return self._context.string_sink() if self._emitter.in_string else None

    def finish(self, truncated: bool) -> None:
        if truncated:
            # A key whose value never came is not an argument (never invent one); its text stays.
            self._context.content("".join(self._key_parts) or (self._key if self._key_pending else ""))
            self._finish_value()
        self._context.delta(self._emitter.finish())

    def _key_close(self, text: str) -> None:
        self._key = "".join(self._key_parts)
        self._key_parts.clear()
        self._key_pending = True

    def _value_open(self, text: str) -> None:
        self._key_pending = False
        self._skip_value = self._emitter.has_key(self._key)
        if self._skip_value:
            self._context.report("duplicate_key", f"argument {self._key!r} given twice; the first is kept")
            self._value_parts = []
            return
        self._value_schema = self._context.schema_of(self._key)
        self._emitter.key(self._key)
        if kinds(self._value_schema) == STRING:  # ``is_plain_string``, written out
            self._value_parts = None
            self._context.delta(self._emitter.begin_string())
        else:
            self._value_parts = []

    def _value(self, text: str) -> None:
        if self._value_parts is not None:
            self._value_parts.append(text)
        elif self._emitter.in_string:
            self._context.delta(self._emitter.string_part(text))

    def _finish_value(self) -> None:
        if self._skip_value:
            self._skip_value = False
            self._context.content("".join(self._value_parts or ()))
        elif self._value_parts is not None:
            text = "".join(self._value_parts)
            if nests_deeper_than(text, self._context.limits.max_depth):
                self._value_parts = None
                self._context.content(self._key + text)  # the key was never emitted: it goes too
                self._context.stop("too_deep", f"a value nested deeper than {self._context.limits.max_depth}")
                return
            value, repairs = read_value(text, self._value_schema, self._context.limits.max_depth)
            if repairs:  # `at`: from the start of the close marker being read, back into the value
                shown = ", ".join(sorted({repair.code for repair in repairs}))
                self._context.report("value_repaired", f"value read leniently ({shown})", repairs[0].offset - len(text))
            self._context.delta(self._emitter.value_complete(value))
        elif self._emitter.in_string and self._emitter.depth == 1:
            self._context.delta(self._emitter.end_string())
        self._value_parts = None
