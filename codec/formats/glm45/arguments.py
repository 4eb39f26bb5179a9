"""GLM-4.5's argument syntax: GLM's key/value pairs, each marker on a line of its own
(``glm45.jinja``)::

    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>

The new lines belong to the markers (the grammar's ``KEY_OPEN__NL`` and its kin), so the reader
sees the tokens GLM-5's does and is GLM's reader: a value raw when its schema says string, JSON
otherwise (``{{ v | tojson(ensure_ascii=False) if v is not string else v }}``).

One mistake of its own: GLM-4.5 sometimes writes its arguments as one JSON object after the name
(``<tool_call>get_weather\\n{"city": "Paris"}\\n</tool_call>``), the Hermes layout of other
models. When a call closes with no argument marker and the text after an offered tool's name is
exactly a JSON object, its members are the arguments, each read as an ``<arg_value>`` of that
text would be (``arguments_repaired``); anything else stays the name, as written.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from codec.arguments.reader import ArgumentContext
from codec.formats.glm.arguments import KeyValueArguments


class LinedKeyValueArguments(KeyValueArguments):
    """The arguments of one GLM-4.5 call, fed its ``KEY_*`` / ``VALUE_*`` tokens in order."""

    named_at_close: ClassVar[bool] = True  # a call with no argument marker: ``name`` looks for JSON

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        self._object: dict[str, Any] = {}  # arguments written as a JSON object after the name

    def name(self, written: str, terminal: str, inserted: bool) -> str:
        written = super().name(written, terminal, inserted)
        head, brace, rest = written.partition("{")
        name = head.strip()
        if terminal != "CALL_CLOSE" or not brace or name not in self._context.tool_names():
            return written
        try:
            arguments = json.loads(brace + rest)
        except ValueError:
            return written
        if not isinstance(arguments, dict):
            return written
        self._object = arguments
        self._context.report("arguments_repaired", "arguments written as a JSON object after the name")
        return name

    def finish(self, truncated: bool) -> None:
        for key, value in self._object.items():
            self._key = key
            self._begin_value()
            self._value(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
            self._finish_value()
        super().finish(truncated)
