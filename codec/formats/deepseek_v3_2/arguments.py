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

import re

from codec.arguments.reader import ArgumentContext
from codec.arguments.schema import kinds
from codec.formats.minimax_m2.arguments import Parameters as _MiniMaxParameters

# A key as written, up to its `>`: `"city" string="true"`; the attribute may be missing.
_KIND = re.compile(r'(.*?)\s+string\s*=\s*"([^"]*)"\s*', re.DOTALL)


def key_and_kind(written: str) -> tuple[str, bool]:
    """A key's text as written (``"city" string="true"``): the key with its quotes, and whether
    its ``string`` attribute is ``"true"`` (the value is the string as written)."""
    found = _KIND.fullmatch(written)
    if found is None:
        return written.rstrip(), False
    return found.group(1), found.group(2).strip().lower() == "true"


class Parameters(_MiniMaxParameters):
    """The arguments of one DeepSeek-V3.2 call: MiniMax-M2's reader, the ``string`` attribute
    taken off each key."""

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        self._raw = False  # the argument being read said `string="true"`

    def _value_open(self) -> None:
        key, self._raw = key_and_kind("".join(self._key_parts))
        self._key_parts[:] = [key]
        super()._value_open()

    def _begin_value(self) -> None:
        super()._begin_value()
        if self._raw and kinds(self._value_schema) is None and self._value_parts is not None and not self._skip_value:
            # No schema for this key: `string="true"` says the text is a string, written as it
            # is; it streams as a plain string parameter's does.
            self._value_parts = None
            self._context.delta(self._emitter.begin_string())
