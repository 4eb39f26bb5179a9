"""DeepSeek-V3.2's argument syntax: one ``<｜DSML｜parameter name="KEY" string="true|false">`` per
argument, its value right up to ``</｜DSML｜parameter>``, inside ``<｜DSML｜invoke name="NAME">``
(``templates/deepseek_v3_2.jinja``)::

    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>

It is MiniMax-M2's layout (``<invoke name=…>``, ``<parameter name=…>``, the name and key in
quotes up to ``>``), so MiniMax-M2's reader reads it; this one adds the ``string`` attribute.
The template writes ``string="true"`` and the value raw for a string, ``string="false"`` and
``val | tojson`` for anything else. A value is typed by the tool's schema first, as MiniMax's
and GLM's are (``KeyValueReader``: a plain string streams as written, anything else is read as
JSON, leniently, when its ``</｜DSML｜parameter>`` comes): models write ``string="true"`` for a
number and ``string="false"`` for prose, and the schema knows better (vLLM's and SGLang's
DeepSeek-V3.2 parsers do the same). Where there is no schema for the key, the attribute says:
``string="true"`` keeps the text as a string (``"42"`` stays ``"42"``), ``string="false"`` (or
none) reads it as JSON if it is JSON, else as text.
"""

from __future__ import annotations

from typing import ClassVar

from codec.arguments.reader import ArgumentContext
from codec.arguments.schema import kinds
from codec.formats.minimax_m2.arguments import Parameters as _MiniMaxParameters


class Parameters(_MiniMaxParameters):
    """The arguments of one DeepSeek-V3.2 call: MiniMax-M2's reader, plus the ``string``
    attribute after each key (``RAW_VALUE``: ``string="true"``, ``JSON_VALUE``: ``string="false"``)."""

    terminals: ClassVar[frozenset[str]] = _MiniMaxParameters.terminals | {"RAW_VALUE", "JSON_VALUE"}

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        self._raw = False  # the argument being read said `string="true"`

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        if terminal in ("RAW_VALUE", "JSON_VALUE"):
            self._raw = terminal == "RAW_VALUE"
            return
        if terminal == "PARAM_OPEN":
            self._raw = False
        super().token(terminal, text, inserted)

    def _begin_value(self) -> None:
        super()._begin_value()
        if self._raw and kinds(self._value_schema) is None and self._value_parts is not None and not self._skip_value:
            # No schema for this key: `string="true"` says the text is a string, written as it
            # is; it streams as a plain string parameter's does.
            self._value_parts = None
            self._context.delta(self._emitter.begin_string())
