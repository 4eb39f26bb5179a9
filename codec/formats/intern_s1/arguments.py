"""Intern-S1's call: InternLM2's action block around Qwen3's call object::

    <|action_start|><|plugin|>
    {"name": "get_weather", "parameters": {"city": "Paris"}}
    <|action_end|>

so its reader is Qwen3's (``codec.formats.qwen3.arguments.CallObject``), which takes
``"parameters"`` for ``"arguments"`` and reads the same mistakes leniently (double-encoded
arguments, keys out of order, no arguments).
"""

from __future__ import annotations

from codec.formats.qwen3.arguments import CallObject


class ActionCall(CallObject):
    """The arguments of one Intern-S1 call: ``CALL_HEAD`` and ``CALL_JSON``, read as Qwen3's."""
