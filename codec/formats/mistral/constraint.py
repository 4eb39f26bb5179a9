"""Mistral's call for constrained decoding: ``[TOOL_CALLS]NAME[ARGS]{JSON}`` (no closer)."""

from __future__ import annotations

from codec.constrain.calls import Tool, json_arguments, marker
from codec.constrain.lark import Builder, literal
from codec.engine.grammar import compiled


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """One call as the template writes it (``templates/mistral.jinja``):
    ``{{- '[TOOL_CALLS]' }}`` then ``{{- name + '[ARGS]' + arguments }}``, the arguments
    ``arguments|tojson``. The model writes nothing after them."""
    grammar = compiled(grammar_file)
    name, _ = tool
    arguments = json_arguments(builder, tool, markers)
    if arguments is None:
        return None
    body = [marker(grammar, "CALL_OPEN"), written or literal(name), marker(grammar, "CALL_ARGS"), arguments]
    return builder.rule("call", " ".join(body))
