"""Reads a Nemotron 3 Nano prompt's tree (``nemotron_3_nano.lark``, rule ``conversation``) into a
``Conversation``.

What the prompt shows, literally (``templates/nemotron_3_nano.jinja``)::

    <|im_start|>system\\nS\\n\\n# Tools\\n\\nYou have access to the following functions:…</IMPORTANT><|im_end|>\\n
    <|im_start|>user\\ntext<|im_end|>\\n
    <|im_start|>assistant\\n<think></think>answer\\n<tool_call>\\n<function=NAME>\\n…</tool_call>\\n<|im_end|>\\n
    <|im_start|>user\\n<tool_response>\\nresult\\n</tool_response>\\n<|im_end|>\\n
    <|im_start|>assistant\\n<think>\\nR\\n</think>\\nanswer<|im_end|>\\n
    <|im_start|>assistant\\n<think>\\n

The system block is always written, empty when there is no system message: an empty first block
is no message, unless a system message or nothing follows it (then it was one). Reasoning kept
before the last user message shows that ``truncate_history_thinking`` was false. With tools, the caller's
text comes first, then ``\\n\\n`` (only after text), then the listing, read as Qwen3-Coder's
(``qwen3_coder.tools.listed``: the template lists tools the same way, with ``<enum>`` and
``<required>`` written as JSON). Calls carry no ids and are numbered ``call_0``, ``call_1``, ...
(Qwen3-Coder's ``_call`` types the values back). An empty thought is no reasoning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec.engine.grammar import compiled
from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of
from codec.formats.qwen3_5.nemotron_canonical import untruncated
from codec.formats.qwen3_5.prompt import TOOLS_PREAMBLE
from codec.formats.qwen3_coder.prompt import TOOLS_END, _call
from codec.formats.qwen3_coder.tools import listed
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# `{%- if system_message is defined and system_message | length > 0 %}{{- "\n\n" }}{%- endif %}`
_BEFORE_TOOLS = len("\n\n")

_Call = tuple[str, list[tuple[str, str]]]


@dataclass(frozen=True)
class _Thought:
    text: str


@dataclass
class _Block:
    kind: str
    text: str = ""
    reasoning: str | None = None
    calls: list[_Call] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    thinking: bool = False


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``nemotron_3_nano.lark``'s prompt section."""

    def parameter(self, children: list[Any]) -> tuple[str, str]:
        return (text_of(children, "ARG_KEY"), text_of(children, "ARG_VALUE"))

    def tool_call(self, children: list[Any]) -> _Call:
        return (text_of(children, "FUNC_NAME"), [c for c in children if isinstance(c, tuple)])

    def thought(self, children: list[Any]) -> _Thought:
        return _Thought(text_of(children, "REASONING"))

    def result(self, children: list[Any]) -> str:
        return text_of(children, "RESULT_TEXT")

    def system(self, children: list[Any]) -> _Block:
        return _Block("system", "".join(str(c) for c in children[2:-1]))

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> _Block:
        thought = next((c.text for c in children if isinstance(c, _Thought)), "")
        calls = [c for c in children if isinstance(c, tuple)]
        return _Block("assistant", _said(children), thought or None, calls)

    def results(self, children: list[Any]) -> _Block:
        return _Block("results", results=[c for c in children if isinstance(c, str) and not isinstance(c, Token)])

    def headless_results(self, children: list[Any]) -> _Block:
        return self.results(children)

    def generation(self, children: list[Any]) -> _Block:
        tokens = [c.type for c in children if isinstance(c, Token)]
        return _Block("generation", thinking="THINK_CLOSE" not in tokens)


def _said(children: list[Any]) -> str:
    """The content: text before the calls, and text after each call less the new line the
    template writes there (``'</function>\\n</tool_call>\\n'``; before another call, that call's
    ``\\n<tool_call>`` holds it)."""
    text, after_call = [], False
    for child in children:
        if isinstance(child, Token) and child.type == "CONTENT":
            text.append(child.removeprefix("\n") if after_call else str(child))
            after_call = False
        elif isinstance(child, tuple):
            after_call = True
    return "".join(text)


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Nemotron 3 Nano prompt tree."""
    blocks: list[_Block] = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    generation = blocks[-1] if blocks and blocks[-1].kind == "generation" else None
    if generation is not None:
        blocks = blocks[:-1]
    tools: list[dict[str, Any]] = []
    if blocks and blocks[0].kind == "system":
        system, tools = _system(blocks[0].text, spec.grammar)
        kept = system or len(blocks) == 1 or blocks[1].kind == "system"
        blocks = ([_Block("system", system)] if kept else []) + blocks[1:]
    # `{%- if enable_thinking %}{{- '<|im_start|>assistant\n<think>\n' }}` (true unless given)
    options = {"enable_thinking": False} if generation is not None and not generation.thinking else {}
    messages = _messages(blocks, tools)
    if untruncated(messages):
        options["truncate_history_thinking"] = False
    return Conversation(
        messages=tuple(messages),
        tools=tuple(tools),
        options=options,
        add_generation_prompt=generation is not None,
    )


def _system(text: str, grammar_file: str) -> tuple[str, list[dict[str, Any]]]:
    """The caller's system text and the tools listed after it."""
    if TOOLS_PREAMBLE not in text:
        return text, []
    start = text.index(TOOLS_PREAMBLE)
    listing = text[start + len(TOOLS_PREAMBLE) : text.rindex(TOOLS_END)]
    grammar = compiled(grammar_file)
    closers = ("\n" + grammar.display("PARAM_CLOSE"), "\n" + grammar.display("FUNC_CLOSE"))
    return text[: max(start - _BEFORE_TOOLS, 0)], listed(listing, *closers)


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
            messages.append(AssistantMessage(content=content, reasoning=block.reasoning, tool_calls=calls))
        else:
            messages += _results(block, messages)
    return messages


def _results(block: _Block, messages: list[AnyMessage]) -> list[ToolMessage]:
    previous = messages[-1] if messages else None
    calls = previous.tool_calls if isinstance(previous, AssistantMessage) else ()
    return [
        ToolMessage(content=text, tool_call_id=calls[i].id if i < len(calls) else None)
        for i, text in enumerate(block.results)
    ]
