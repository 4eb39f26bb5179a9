"""Mistral's arguments: one JSON object after ``[ARGS]``, read by Solar Open's reader
(``codec.formats.solar_open.arguments``: the shared incremental JSON reader, and a second,
lenient reading of text it refuses, such as double-encoded arguments)::

    [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}

No marker follows the object: the grammar's ``CALL_CLOSE`` is implied (``grammars/mistral.lark``),
and the engine ends the call when the reader says the object is whole (``complete``) and the
next ``[TOOL_CALLS]``, ``</s>`` or the end of output comes.
"""

from __future__ import annotations

from codec.formats.solar_open.arguments import JsonArguments

__all__ = ["JsonArguments"]
