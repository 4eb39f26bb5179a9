"""Llama 3's call for constrained decoding: ``{"name": "NAME", "parameters": {JSON}}``."""

from __future__ import annotations

from codec.constrain.calls import Tool, object_schema
from codec.constrain.lark import Builder, literal
from codec.constrain.values import Values, json_syntax


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """``{"name": "NAME", "parameters": {JSON}}``, as the template writes it
    (``templates/llama3.jinja``); the ``<|eot_id|>`` after it ends the turn."""
    name, _ = tool
    parameters = object_schema(builder, tool)
    values = Values(builder, json_syntax(markers)(builder), name)
    arguments = values.object(parameters, parameters, "", 0)
    if arguments is None:
        return None
    head, tail = literal('{"name": "'), literal('", "parameters": ')
    return builder.rule("call", " ".join([head, written or literal(name), tail, arguments, literal("}")]))
