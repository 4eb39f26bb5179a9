"""Qwen3.5's argument syntax is Qwen3-Coder's: one ``<parameter=KEY>`` block per argument, its
value raw text, written by the same line of the template (``templates/qwen3_5.jinja``)::

    {%- set args_value = args_value | tojson | safe if args_value is mapping or
        (args_value is sequence and args_value is not string) else args_value | string %}

so the reader is Qwen3-Coder's (``codec/formats/qwen3_coder/arguments.py``), unchanged.
"""

from __future__ import annotations

from codec.formats.qwen3_coder.arguments import Parameters as CoderParameters


class Parameters(CoderParameters):
    """The arguments of one Qwen3.5 call: Qwen3-Coder's reader, over the same terminals."""
