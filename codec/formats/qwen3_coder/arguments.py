"""Qwen3-Coder's argument syntax: one ``<parameter=KEY>`` block per argument, its value raw
text (``templates/qwen3_coder.jinja``)::

    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    <parameter=days>
    3
    </parameter>
    </function>

A value whose schema admits only strings streams as it arrives, as written. Any other is typed
when its ``</parameter>`` comes: first as the template writes values (``values.read_back``:
Python's ``True``/``None``/``3``, JSON for objects and arrays), then, where the schema rules
strings out, leniently (``codec.arguments.lenient_value``: JSON's ``true``, ``1e5``, a JSON
object escaped once more; ``value_repaired``). Where the schema admits strings, or no schema is
known, text that is not the template's writing of another value stays a string, so JSON-looking
text of a string parameter is never reinterpreted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from codec.arguments.lenient_value import read_value
from codec.arguments.reader import ArgumentContext
from codec.arguments.schema import STRING, kinds, nests_deeper_than
from codec.formats.qwen3_coder.values import read_back


class Parameters:
    """The arguments of one Qwen3-Coder call, fed its ``PARAM_*``, ``ARG_KEY``, ``KEY_END`` and
    ``ARG_VALUE`` tokens in order (and the name's ``>``, ``NAME_END``, which announces the call,
    and ``</function>``, ``FUNC_CLOSE``, after which only the call's closer may be missing)."""

    terminals: ClassVar[frozenset[str]] = frozenset(
        {"NAME_END", "PARAM_OPEN", "ARG_KEY", "KEY_END", "ARG_VALUE", "PARAM_CLOSE", "FUNC_CLOSE"}
    )

    def __init__(self, context: ArgumentContext) -> None:
        self._context = context
        self._emitter = context.emitter
        self._key_parts: list[str] = []
        self._key = ""
        self._value_parts: list[str] | None = None  # a buffered (not plain string) value
        self._value_schema: Mapping[str, Any] | None = None
        self._skip_value = False
        self._open = False  # a parameter has begun (``<parameter=``) and is not closed
        self._function_closed = False  # ``</function>`` came

    @property
    def held(self) -> int:
        """A typed value is written at ``</parameter>``, a marker: nothing is held within a run."""
        return 0

    @property
    def complete(self) -> bool:
        """``</function>`` came and its line ended: only the call's own closer, ``</tool_call>``,
        may be missing (a model that stopped after its last ``</parameter>``, or right after
        ``</function>``, may have been cut off there)."""
        return self._function_closed and not self._open

    def name(self, written: str, terminal: str, inserted: bool) -> str:
        """The name as written (the ``>`` after it ends it: ``NAME_END``)."""
        return written

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        # Most tokens are a value's text: that first.
        if terminal == "ARG_VALUE":
            self._value(text)
        elif terminal == "ARG_KEY":
            self._key_parts.append(text)
        elif terminal == "KEY_END":
            self._value_open()
        elif terminal == "PARAM_CLOSE":
            self._open = False
            self._finish_value()
        elif terminal == "PARAM_OPEN":
            self._open = True
            self._key_parts.clear()
        elif terminal == "FUNC_CLOSE":  # its line ended: the template's `</function>\n</tool_call>`
            self._function_closed = text.endswith("\n")

    def run_sink(self, terminal: str) -> Callable[[str], None] | None:
        if terminal != "ARG_VALUE":
            return None
        if self._value_parts is not None:  # a value typed when complete: gather its text
            return self._value_parts.append
        return self._context.string_sink() if self._emitter.in_string else None

    def finish(self, truncated: bool) -> None:
        if truncated:
            # A key whose value never began is not an argument (never invent one); its text stays.
            self._context.content("".join(self._key_parts))
            self._key_parts.clear()
            self._finish_value()
        self._context.delta(self._emitter.finish())

    def _value_open(self) -> None:
        self._key = "".join(self._key_parts)
        self._key_parts.clear()
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
        """The value as the template writes it; where the schema rules strings out, read
        leniently (`at`: from the start of the close marker being read, back into the value)."""
        value = read_back(text, self._value_schema)
        admitted = kinds(self._value_schema)
        if not isinstance(value, str) or admitted is None or "string" in admitted:
            return value
        value, repairs = read_value(text, self._value_schema, self._context.limits.max_depth)
        if repairs:
            shown = ", ".join(sorted({repair.code for repair in repairs}))
            self._context.report("value_repaired", f"value read leniently ({shown})", repairs[0].offset - len(text))
        return value
