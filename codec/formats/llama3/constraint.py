"""Llama 3's call for constrained decoding: ``{"name": "NAME", "parameters": {JSON}}``."""

from __future__ import annotations

from codec.constrain.calls import Tool, json_arguments
from codec.constrain.lark import Builder, literal


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """``{"name": "NAME", "parameters": {JSON}}``, as the template writes it
    (``templates/llama3.jinja``); the ``<|eot_id|>`` after it ends the turn."""
    name, _ = tool
    arguments = json_arguments(builder, tool, markers)
    if arguments is None:
        return None
    head, tail = literal('{"name": "'), literal('", "parameters": ')
    return builder.rule("call", " ".join([head, written or literal(name), tail, arguments, literal("}")]))
