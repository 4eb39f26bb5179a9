"""Intern-S1's call for constrained decoding: ``<|action_start|><|plugin|>\\n{"name": "NAME",
"parameters": {JSON}}\\n<|action_end|>``, the markers taken from ``intern_s1.lark``."""

from __future__ import annotations

from codec.constrain.calls import Tool, marker, object_schema
from codec.constrain.lark import Builder, literal
from codec.constrain.values import Values, json_syntax
from codec.engine.grammar import compiled


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """The call as the template writes it: ``'<|action_start|><|plugin|>\\n{"name": "' + name +
    '", "parameters": '`` + the arguments' ``tojson`` + ``'}\\n<|action_end|>'``."""
    grammar = compiled(grammar_file)
    name, _ = tool
    parameters = object_schema(builder, tool)
    values = Values(builder, json_syntax(markers)(builder), name)
    arguments = values.object(parameters, parameters, "", 0)
    if arguments is None:
        return None
    head, tail = literal('\n{"name": "'), literal('", "parameters": ')
    body = [
        marker(grammar, "CALL_OPEN"),
        marker(grammar, "PLUGIN"),
        head,
        written or literal(name),
        tail,
        arguments,
        literal("}\n"),
    ]
    return builder.rule("call", " ".join([*body, marker(grammar, "CALL_CLOSE")]))
