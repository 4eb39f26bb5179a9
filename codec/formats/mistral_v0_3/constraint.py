"""Mistral v0.3's call for constrained decoding: ``{"name": "NAME", "arguments": {JSON}, "id":
"ID"}``, one object of the list after ``[TOOL_CALLS]`` (the list's brackets and commas come
from the grammar's turn)."""

from __future__ import annotations

from codec.constrain.calls import Tool, json_arguments
from codec.constrain.lark import Builder, literal, regex
from codec.formats.mistral.ids import ID_LENGTH


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """One call as the template writes it (``templates/mistral_v0_3.jinja``):
    ``tool_call.function|tojson`` without its ``}``, then ``', "id": "' + tool_call.id + '"}'``,
    the id nine letters or digits (the template refuses another length)."""
    name, _ = tool
    arguments = json_arguments(builder, tool, markers)
    if arguments is None:
        return None
    call_id = builder.terminal("CALL_ID", regex(f"[A-Za-z0-9]{{{ID_LENGTH}}}"))
    head, middle, tail = literal('{"name": "'), literal('", "arguments": '), literal(', "id": "')
    return builder.rule(
        "call", " ".join([head, written or literal(name), middle, arguments, tail, call_id, literal('"}')])
    )
