"""Kimi K2's arguments: one JSON object after ``<|tool_call_argument_begin|>``, read by Solar
Open's reader (``codec.formats.solar_open.arguments``: the shared incremental JSON reader, and a
second, lenient reading of text it refuses, such as double-encoded arguments)::

    <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>

The one difference is the name: the model writes none but the call's id, ``functions.NAME:IDX``
(``ids.name_of``).
"""

from __future__ import annotations

from codec.formats.kimi_k2.ids import name_of
from codec.formats.solar_open.arguments import JsonArguments


class IdNamedArguments(JsonArguments):
    """Solar's JSON arguments, for a call whose name is read from its id."""

    def name(self, written: str, terminal: str, inserted: bool) -> str:
        """The name in the id the model wrote (``written`` is empty: no name terminal)."""
        return written or name_of(self._context.call_id())
