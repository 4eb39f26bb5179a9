"""Mistral's arguments: one JSON object after ``[ARGS]``, read by Solar Open's reader
(``codec.formats.solar_open.arguments``: the shared incremental JSON reader, and a second,
lenient reading of text it refuses, such as double-encoded arguments)::

    [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}

No marker follows the object: the grammar's ``CALL_CLOSE`` is implied (``grammars/mistral.lark``),
and the engine ends the call when the reader says the object is whole (``complete``) and the
next ``[TOOL_CALLS]``, ``</s>`` or the end of output comes.
"""

from __future__ import annotations

from codec.arguments.tolerant import decode_arguments
from codec.formats.solar_open.arguments import JsonArguments as _SolarJsonArguments


class JsonArguments(_SolarJsonArguments):
    """The arguments of one Mistral call: ``CALL_ARGS`` (``[ARGS]``) opens them, ``ARGS_JSON``
    is their text. Solar Open's reader; only ``complete`` says more, since it is what lets the
    engine end the call without a closing marker."""

    @property
    def complete(self) -> bool:
        """The object was closed — or the text the JSON reader refused reads leniently as a
        whole object (Python's ``False``, double-encoded arguments, a quote left unescaped):
        with no closing marker to wait for, that is the call's end, as a closing marker is in
        the other formats. ``finish`` reads it again, and keeps that reading where it loses
        nothing (``read_again``)."""
        if super().complete:
            return True
        if self._json is None or not self._rejected:
            return False
        context = self._context
        decoded = decode_arguments(self._reread_text(), context.parameters(), max_depth=context.limits.max_depth)
        return decoded is not None and decoded.complete
