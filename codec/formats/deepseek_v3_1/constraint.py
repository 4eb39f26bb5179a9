"""DeepSeek-V3.1's call for constrained decoding: ``CALL_OPEN NAME CALL_ARGS {JSON} CALL_CLOSE``."""

from __future__ import annotations

from codec.constrain.calls import Tool, json_arguments, marker
from codec.constrain.lark import Builder, literal
from codec.engine.grammar import compiled


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """One call as the template writes it (``templates/deepseek_v3_1.jinja``):
    ``'<｜tool▁call▁begin｜>' + name + '<｜tool▁sep｜>' + arguments | tojson + '<｜tool▁call▁end｜>'``."""
    grammar = compiled(grammar_file)
    name, _ = tool
    arguments = json_arguments(builder, tool, markers)
    if arguments is None:
        return None
    m = {t: marker(grammar, t) for t in ("CALL_OPEN", "CALL_ARGS", "CALL_CLOSE")}
    body = [m["CALL_OPEN"], written or literal(name), m["CALL_ARGS"], arguments, m["CALL_CLOSE"]]
    return builder.rule("call", " ".join(body))
