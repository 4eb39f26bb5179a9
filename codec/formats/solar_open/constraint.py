"""Solar Open's call for constrained decoding:
``<|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{JSON}<|tool_call:end|>``."""

from __future__ import annotations

from codec.constrain.calls import Tool, json_arguments, marker
from codec.constrain.lark import Builder, literal, regex
from codec.constrain.skeleton import pattern_source
from codec.engine.grammar import compiled


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    grammar = compiled(grammar_file)
    name, _ = tool
    m = {t: marker(grammar, t) for t in ("CALL_OPEN", "CALL_NAME", "CALL_ARGS", "CALL_CLOSE")}
    call_id = builder.terminal("CALL_ID", regex(pattern_source(grammar_file, "CALL_ID")))
    arguments = json_arguments(builder, tool, markers)
    if arguments is None:
        return None
    name_part = written or literal(name)
    body = [m["CALL_OPEN"], call_id, m["CALL_NAME"], name_part, m["CALL_ARGS"], arguments, m["CALL_CLOSE"]]
    return builder.rule("call", " ".join(body))
