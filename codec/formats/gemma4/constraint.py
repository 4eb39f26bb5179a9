"""Gemma 4's call for constrained decoding: ``<|tool_call>call:NAME{key:value,…}<tool_call|>`` in
Gemma's value syntax."""

from __future__ import annotations

from codec.constrain.calls import Tool, marker, object_schema
from codec.constrain.lark import Builder, literal
from codec.constrain.skeleton import pattern_source
from codec.constrain.values import Values, gemma_syntax
from codec.engine.grammar import compiled


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    grammar = compiled(grammar_file)
    name, _ = tool
    parameters = object_schema(builder, tool)
    punctuation = {
        n: grammar.patterns[n].literal or "" for n in ("LBRACE", "RBRACE", "LBRACKET", "RBRACKET", "COLON", "COMMA")
    }
    quote = next(text for text, terminal in grammar.markers.items() if terminal == "QUOTE")
    syntax = gemma_syntax(markers, quote, punctuation, pattern_source(grammar_file, "KEY"))(builder)
    values = Values(builder, syntax, name)
    arguments = values.object(parameters, parameters, "", 0)
    if arguments is None:
        return None
    prefix = literal(grammar.patterns["CALL_PREFIX"].literal or "")
    body = [marker(grammar, "CALL_OPEN"), prefix, written or literal(name), arguments, marker(grammar, "CALL_CLOSE")]
    return builder.rule("call", " ".join(body))
