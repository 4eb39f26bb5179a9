"""Kimi K2's call for constrained decoding:
``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{JSON}<|tool_call_end|>``."""

from __future__ import annotations

from codec.constrain.calls import Tool, json_arguments, marker
from codec.constrain.lark import Builder, literal, regex
from codec.engine.grammar import compiled
from codec.formats.kimi_k2.ids import PREFIX, SEPARATOR


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """One call as the template writes it (``templates/kimi_k2.jinja``); the index is any
    number (the template counts calls in the message)."""
    grammar = compiled(grammar_file)
    name, _ = tool
    arguments = json_arguments(builder, tool, markers)
    if arguments is None:
        return None
    index = builder.terminal("CALL_INDEX", regex("[0-9]+"))
    spelled = written or literal(name)
    body = [marker(grammar, "CALL_OPEN"), literal(PREFIX), spelled, literal(SEPARATOR), index]
    body += [marker(grammar, "CALL_ARGS"), arguments, marker(grammar, "CALL_CLOSE")]
    return builder.rule("call", " ".join(body))
