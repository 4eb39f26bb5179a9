"""Kimi K2.5's arguments are Kimi K2's: one JSON object after ``<|tool_call_argument_begin|>``,
the tool's name read from the call's id (``functions.NAME:IDX``)::

    <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>

so the reader is Kimi K2's (``codec/formats/kimi_k2/arguments.py``), unchanged.
"""

from __future__ import annotations

from codec.formats.kimi_k2.arguments import IdNamedArguments as K2Arguments


class IdNamedArguments(K2Arguments):
    """The arguments of one Kimi K2.5 call: Kimi K2's reader, over the same terminals."""
