"""Qwen3's call for constrained decoding: ``<tool_call>\n{"name": "NAME", "arguments": {JSON}}\n</tool_call>``."""

from __future__ import annotations

from codec.constrain.calls import Tool, json_arguments, marker
from codec.constrain.lark import Builder, literal
from codec.engine.grammar import compiled


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """``<tool_call>\n{"name": "NAME", "arguments": {JSON}}\n</tool_call>``, as the template
    writes it (``templates/qwen3.jinja``)."""
    grammar = compiled(grammar_file)
    name, _ = tool
    arguments = json_arguments(builder, tool, markers)
    if arguments is None:
        return None
    head, tail = literal('\n{"name": "'), literal('", "arguments": ')
    body = [marker(grammar, "CALL_OPEN"), head, written or literal(name), tail, arguments, literal("}\n")]
    return builder.rule("call", " ".join([*body, marker(grammar, "CALL_CLOSE")]))
