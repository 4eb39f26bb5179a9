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

from typing import Any, ClassVar

from codec.arguments.key_value import KeyValueReader
from codec.arguments.reader import ArgumentContext
from codec.arguments.schema import kinds
from codec.formats.qwen3_coder.values import read_back


class Parameters(KeyValueReader):
    """The arguments of one Qwen3-Coder call, fed its ``PARAM_*``, ``ARG_KEY``, ``KEY_END`` and
    ``ARG_VALUE`` tokens in order (and the name's ``>``, ``NAME_END``, which announces the call,
    and ``</function>``, ``FUNC_CLOSE``, after which only the call's closer may be missing)."""

    terminals: ClassVar[frozenset[str]] = frozenset(
        {"NAME_END", "PARAM_OPEN", "ARG_KEY", "KEY_END", "ARG_VALUE", "PARAM_CLOSE", "FUNC_CLOSE"}
    )

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        self._function_closed = False  # ``</function>`` came

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
        self._begin_value()

    def _typed(self, text: str) -> Any:
        """The value as the template writes it; where the schema rules strings out, read
        leniently (`at`: from the start of the close marker being read, back into the value)."""
        value = read_back(text, self._value_schema)
        admitted = kinds(self._value_schema)
        if not isinstance(value, str) or admitted is None or "string" in admitted:
            return value
        return super()._typed(text)
