"""DeepSeek-V3.2's argument syntax: one ``<｜DSML｜parameter name="KEY" string="true|false">`` per
argument, its value right up to ``</｜DSML｜parameter>``, inside ``<｜DSML｜invoke name="NAME">``
(``templates/deepseek_v3_2.jinja``)::

    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>

It is MiniMax-M2's layout (``<invoke name=…>``, ``<parameter name=…>``, the name and key in
quotes), so MiniMax-M2's reader reads it; this one adds the ``string`` attribute after the key.
The template writes ``string="true"`` and the value raw for a string, ``string="false"`` and
``val | tojson`` for anything else (as DeepSeek's own encoder does), so the attribute says
exactly what the value is, whatever the schema:

- ``string="true"`` (``RAW_VALUE``): the text is the string, streamed as it arrives;
- ``string="false"`` (``JSON_VALUE``): the text is JSON; where it is not (prose, Python's
  ``True``, a trailing comma), it is read leniently by the tool's schema, as a value without an
  attribute is (``KeyValueReader._typed``: what cannot be typed stays text);
- no attribute: typed by the schema, as MiniMax-M2's values are.

vLLM's parser goes further and types ``string="true">42`` as 42 for an integer parameter, and
``string="false">null`` as ``"null"`` for a string one; such values are what the template writes
for the string ``"42"`` and for ``None``, which a prompt must read back as written.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, ClassVar

from codec.arguments.reader import ArgumentContext
from codec.formats.minimax_m2.arguments import Parameters as _MiniMaxParameters

_ATTRIBUTES = {"RAW_VALUE": True, "JSON_VALUE": False}


class Parameters(_MiniMaxParameters):
    """The arguments of one DeepSeek-V3.2 call: MiniMax-M2's reader, plus the ``string``
    attribute after each key (``RAW_VALUE``: ``string="true"``, ``JSON_VALUE``: ``string="false"``)."""

    terminals: ClassVar[frozenset[str]] = _MiniMaxParameters.terminals | frozenset(_ATTRIBUTES)

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        self._raw: bool | None = None  # the argument's attribute: a string, JSON, or not said
        self._schema: Any = None  # the key's schema, for JSON that is not JSON

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        if terminal in _ATTRIBUTES:
            self._raw = _ATTRIBUTES[terminal]
            return
        if terminal == "PARAM_OPEN":
            self._raw = None
        super().token(terminal, text, inserted)

    def _begin_value(self) -> None:
        if self._raw is False:
            # JSON: gathered and read when complete, whatever the schema (a plain string
            # parameter's `null` is null); the schema is kept for text that is not JSON.
            self._schema = self._context.schema_of(self._key)
            context, self._context = self._context, replace(self._context, schema_of=_no_schema)
            try:
                super()._begin_value()
            finally:
                self._context = context
            return
        super()._begin_value()
        if self._raw and self._value_parts is not None and not self._skip_value:
            # The string as written, streamed as a plain string parameter's is.
            self._value_parts = None
            self._context.delta(self._emitter.begin_string())

    def _typed(self, text: str) -> Any:
        if self._raw is False:
            try:
                return json.loads(text)
            except ValueError:
                self._value_schema = self._schema
        return super()._typed(text)


def _no_schema(_key: str) -> None:
    return None
