"""gpt-oss's call for constrained decoding, as the template writes it:
``to=functions.NAME<|channel|>commentary json<|message|>{JSON}<|call|>`` (the message's
``<|start|>assistant`` header is the generation prompt's, or the previous message's)."""

from __future__ import annotations

from codec.constrain.calls import Tool, json_arguments, marker
from codec.constrain.lark import Builder, literal
from codec.engine.grammar import CompiledGrammar, compiled

# The header words before the name, as the grammar spells them: ` to=functions.`.
_RECIPIENT = ("TO", "NAMESPACE")


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """One call (``templates/gpt_oss.jinja``: ``"<|start|>assistant to=" + "functions." +
    tool_call.name + "<|channel|>commentary " + "json" + "<|message|>" + arguments|tojson +
    "<|call|>"``)."""
    grammar = compiled(grammar_file)
    name, _ = tool
    arguments = json_arguments(builder, tool, markers)
    if arguments is None:
        return None
    recipient = " " + "".join(grammar.patterns[t].literal or "" for t in _RECIPIENT)
    body = [
        literal(recipient),
        written or literal(name),
        *_opener(grammar),
        literal(grammar.patterns["CONTENT_TYPE"].literal or ""),
        marker(grammar, "MESSAGE"),
        arguments,
        marker(grammar, "CALL_CLOSE"),
    ]
    return builder.rule("call", " ".join(body))


def _opener(grammar: CompiledGrammar) -> tuple[str, str]:
    """The call's opener, ``<|channel|>commentary ``: one special token (the channel's) and
    the word after it, which the model writes as text."""
    channel = grammar.display("CHANNEL")
    return marker(grammar, "CHANNEL"), literal(grammar.display("CALL_OPEN").removeprefix(channel))
