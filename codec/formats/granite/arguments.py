"""Granite 4.0's call syntax is Qwen3's, token for token::

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

so its reader is Qwen3's (``codec.formats.qwen3.arguments.CallObject``): the head announces the
call, the arguments stream through the shared JSON reader, and the same mistakes are read
leniently (double-encoded arguments, ``"parameters"``, keys out of order).
"""

from __future__ import annotations

from codec.formats.qwen3.arguments import CallObject


class GraniteCall(CallObject):
    """The arguments of one Granite call: ``CALL_HEAD`` and ``CALL_JSON``, read as Qwen3's."""
