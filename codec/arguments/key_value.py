"""What the readers of a key/value argument syntax share — one marked-up pair per argument,
GLM's ``<arg_key>K</arg_key><arg_value>V</arg_value>`` and Qwen3-Coder's
``<parameter=K>\\nV\\n</parameter>``: a value whose schema admits only strings streams as it
arrives, as written; any other is gathered and typed when its closing marker comes (``_typed``,
by default leniently: ``codec.arguments.lenient_value``, reported as ``value_repaired``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from codec.arguments.lenient_value import read_value
from codec.arguments.reader import ArgumentContext
from codec.arguments.schema import STRING, kinds, nests_deeper_than


class KeyValueReader:
    """The key's text (``_key_parts``), then its value's: ``_begin_value`` once the key is
    complete (``_key``), ``_value`` for each piece of the value, ``_finish_value`` at its end.
    A family's reader subclasses it and adds its ``terminals``, ``name``, ``token``, ``complete``
    and ``finish``."""

    def __init__(self, context: ArgumentContext) -> None:
        self._context = context
        self._emitter = context.emitter
        self._key_parts: list[str] = []
        self._key = ""
        self._value_parts: list[str] | None = None  # a buffered (not plain string) value
        self._value_schema: Mapping[str, Any] | None = None
        self._skip_value = False
        self._open = False  # an argument has begun and its value is not closed

    @property
    def held(self) -> int:
        """A typed value is written at its closing marker: nothing is held within a run."""
        return 0

    def run_sink(self, terminal: str) -> Callable[[str], None] | None:
        if terminal != "ARG_VALUE":
            return None
        if self._value_parts is not None:  # a value typed when complete: gather its text
            return self._value_parts.append
        return self._context.string_sink() if self._emitter.in_string else None

    def _begin_value(self) -> None:
        """The value of ``_key`` begins: skipped if the key came before (the first is kept), a
        string streamed if its schema admits only strings, else gathered."""
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
            self._context.delta(self._emitter.value_complete(self._typed(text)))
        elif self._emitter.in_string and self._emitter.depth == 1:
            self._context.delta(self._emitter.end_string())
        self._value_parts = None

    def _typed(self, text: str) -> Any:
        """A gathered value's text, typed by its schema leniently (`at`: from the start of the
        closing marker being read, back into the value)."""
        value, repairs = read_value(text, self._value_schema, self._context.limits.max_depth)
        if repairs:
            shown = ", ".join(sorted({repair.code for repair in repairs}))
            self._context.report("value_repaired", f"value read leniently ({shown})", repairs[0].offset - len(text))
        return value
