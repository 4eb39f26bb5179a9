"""DeepSeek-V3.1's argument syntax: one JSON object after ``<｜tool▁sep｜>``::

    <｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>

It is Solar Open's (``<|tool_call:args|>{json}``), so Solar's reader reads it unchanged: the
grammar names the separator ``CALL_ARGS`` and the JSON text ``ARGS_JSON``, the terminals that
reader takes. The shared incremental JSON reader streams string values as they arrive; text it
refuses (double-encoded arguments ``"{\\"city\\": …}"``, Python's syntax, trailing commas) is
read again leniently when the call ends (``codec.arguments.read_again``).
"""

from __future__ import annotations

from codec.formats.solar_open.arguments import JsonArguments as _SolarJsonArguments


class JsonArguments(_SolarJsonArguments):
    """The arguments of one DeepSeek-V3.1 call: ``CALL_ARGS`` (``<｜tool▁sep｜>``) opens them,
    ``ARGS_JSON`` is their text. Solar Open's reader, as it is."""
