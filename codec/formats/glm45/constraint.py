"""GLM-4.5's call for constrained decoding, as the template writes it, each marker on a line of
its own (``glm45.jinja``)::

    <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>

GLM's call (``codec/formats/glm/constraint.py``) with a new line after the name, after each
``</arg_key>`` and after each ``</arg_value>``. GLM-4.7 writes the same markers with nothing
between them (``glm47.jinja``: ``{{- '<tool_call>' + tc.name -}}…<arg_key>{{ k }}</arg_key><arg_value>``):
``call_47``.
"""

from __future__ import annotations

from codec.constrain.calls import Tool
from codec.constrain.lark import Builder
from codec.formats.glm.constraint import key_value_call


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """``<tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n…</tool_call>``."""
    return key_value_call(builder, grammar_file, tool, markers, written, "\n")


def call_47(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>``."""
    return key_value_call(builder, grammar_file, tool, markers, written, "")
