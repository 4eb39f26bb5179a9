"""Reads a Qwen3-Coder prompt's tree (``qwen3_coder.lark``, rule ``conversation``) into a
``Conversation``.

What the prompt shows, literally::

    <|im_start|>system\\nS\\n\\n# Tools\\n\\nYou have access to the following functions:\\n\\n<tools>…<|im_end|>\\n
    <|im_start|>user\\ntext<|im_end|>\\n
    <|im_start|>assistant\\nanswer\\n\\n<tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n</function>\\n</tool_call><|im_end|>\\n
    <|im_start|>user\\n<tool_response>\\nresult\\n</tool_response>\\n<|im_end|>\\n
    <|im_start|>assistant\\n

The tools are read from the first system block (``tools.listed``); with no system message the
template writes its own (``DEFAULT_SYSTEM``). Argument values are typed back by the listed
tool's schema (``values.read_back``). Calls carry no ids: they are numbered ``call_0``,
``call_1``, ... and a tool result takes the id of the call at its position in the assistant
turn before its block.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec.arguments.schema import property_schema, tool_schema
from codec.engine.grammar import CompiledGrammar, compiled
from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of
from codec.formats.qwen3_coder.tools import listed
from codec.formats.qwen3_coder.values import read_back
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# The template's own text around the tools (``templates/qwen3_coder.jinja``, lines 29 and 31-32).
DEFAULT_SYSTEM = "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks."
TOOLS_PREAMBLE = "\n\n# Tools\n\nYou have access to the following functions:\n\n<tools>"
TOOLS_END = "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"

_Call = tuple[str, list[tuple[str, str]]]


@dataclass
class _Block:
    kind: str
    text: str = ""
    calls: list[_Call] = field(default_factory=list)
    results: list[str] = field(default_factory=list)


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``qwen3_coder.lark``'s prompt section."""

    def parameter(self, children: list[Any]) -> tuple[str, str]:
        return (text_of(children, "ARG_KEY"), text_of(children, "ARG_VALUE"))

    def tool_call(self, children: list[Any]) -> _Call:
        return (text_of(children, "FUNC_NAME"), [c for c in children if isinstance(c, tuple)])

    def result(self, children: list[Any]) -> str:
        return text_of(children, "RESULT_TEXT")

    def system(self, children: list[Any]) -> _Block:
        return _Block("system", "".join(str(c) for c in children[2:-1]))

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> _Block:
        return _Block("assistant", text_of(children, "CONTENT"), calls=[c for c in children if isinstance(c, tuple)])

    def results(self, children: list[Any]) -> _Block:
        return _Block("results", results=[c for c in children if isinstance(c, str) and not isinstance(c, Token)])

    def headless_results(self, children: list[Any]) -> _Block:
        return self.results(children)

    def generation(self, _: list[Any]) -> _Block:
        return _Block("generation")


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Qwen3-Coder prompt tree."""
    blocks: list[_Block] = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    generation = bool(blocks) and blocks[-1].kind == "generation"
    if generation:
        blocks = blocks[:-1]
    tools: list[dict[str, Any]] = []
    if blocks and blocks[0].kind == "system" and TOOLS_PREAMBLE in blocks[0].text:
        system, tools = _tools(blocks[0].text, spec.grammar)
        blocks = ([_Block("system", system)] if system is not None else []) + blocks[1:]
    return Conversation(messages=tuple(_messages(blocks, tools)), tools=tuple(tools), add_generation_prompt=generation)


def _tools(text: str, grammar_file: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The caller's system text (``None``: the template's default was written) and the tools."""
    start = text.index(TOOLS_PREAMBLE)
    listing = text[start + len(TOOLS_PREAMBLE) : text.rindex(TOOLS_END)]
    grammar = compiled(grammar_file)
    tools = listed(listing, _spelling(grammar, "PARAM_CLOSE"), _spelling(grammar, "FUNC_CLOSE"))
    system = text[:start]
    return (None if system == DEFAULT_SYSTEM else system), tools


def _spelling(grammar: CompiledGrammar, terminal: str) -> str:
    """A marker with the new line the template writes before it."""
    return "\n" + grammar.display(terminal)


def _messages(blocks: list[_Block], tools: list[dict[str, Any]]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    for block in blocks:
        if block.kind == "system":
            messages.append(SystemMessage(content=block.text))
        elif block.kind == "user":
            messages.append(UserMessage(content=block.text))
        elif block.kind == "assistant":
            calls = tuple(_call(name, pairs, tools, new_id) for name, pairs in block.calls)
            content = block.text or None if calls else block.text
            messages.append(AssistantMessage(content=content, tool_calls=calls))
        else:
            messages += _results(block, messages)
    return messages


def _call(name: str, pairs: list[tuple[str, str]], tools: list[dict[str, Any]], new_id: Any) -> ToolCall:
    parameters = tool_schema(tools, name)
    arguments = {key: read_back(text, property_schema(parameters, key)) for key, text in pairs}
    return ToolCall(id=new_id(name), name=name, arguments=arguments)


def _results(block: _Block, messages: list[AnyMessage]) -> list[ToolMessage]:
    previous = messages[-1] if messages else None
    calls = previous.tool_calls if isinstance(previous, AssistantMessage) else ()
    return [
        ToolMessage(content=text, tool_call_id=calls[i].id if i < len(calls) else None)
        for i, text in enumerate(block.results)
    ]
