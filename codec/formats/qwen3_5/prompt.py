"""Reads a Qwen3.5 prompt's tree (``qwen3_5.lark``, rule ``conversation``) into a
``Conversation``.

What the prompt shows, literally::

    <|im_start|>system\\n# Tools\\n\\nYou have access to…<tools>\\n{tool}\\n</tools>…</IMPORTANT>\\n\\nS<|im_end|>\\n
    <|im_start|>user\\ntext<|vision_start|><|image_pad|><|vision_end|><|im_end|>\\n
    <|im_start|>assistant\\nanswer\\n\\n<tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n</function>\\n</tool_call><|im_end|>\\n
    <|im_start|>user\\n<tool_response>\\nresult\\n</tool_response><|im_end|>\\n
    <|im_start|>assistant\\n<think>\\nR\\n</think>\\n\\nanswer<|im_end|>\\n
    <|im_start|>assistant\\n<think>\\n

The tools are the JSON lines of the first system block (``{{- tool | tojson }}``), the caller's
system text comes after the template's instruction. Argument values are typed back by the listed
tool's schema (Qwen3-Coder's ``values.read_back``). Calls carry no ids: they are numbered
``call_0``, ``call_1``, ... and a tool result takes the id of the call at its position in the
assistant turn before its block. An empty thought is no reasoning.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Tree

from codec.formats import RenderFn
from codec.formats._prompt import MediaRules, content_of, sequential_ids, text_of
from codec.formats.qwen3_coder.prompt import _call  # the same call lines, typed back alike
from codec.models import (
    AnyMessage,
    AssistantMessage,
    Content,
    Conversation,
    MediaPart,
    SystemMessage,
    ToolMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# The template's own text around the tools (``templates/qwen3_5.jinja``, lines 47-51).
TOOLS_PREAMBLE = "# Tools\n\nYou have access to the following functions:\n\n<tools>"
TOOLS_END = "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
INSTRUCTION_END = "</IMPORTANT>"

_Call = tuple[str, list[tuple[str, str]]]
_Parts = list[str | MediaPart]


@dataclass
class _Block:
    kind: str
    parts: _Parts = field(default_factory=list)
    reasoning: str | None = None
    calls: list[_Call] = field(default_factory=list)
    results: list[_Parts] = field(default_factory=list)
    thinking: bool = False


def _parts(children: list[Any], *terminals: str) -> _Parts:
    """Text and media placeholders in order (``_text``: CONTENT or ``image``/``video``)."""
    return [
        c if isinstance(c, MediaPart) else str(c)
        for c in children
        if isinstance(c, MediaPart) or (isinstance(c, Token) and c.type in terminals)
    ]


class _Tree(MediaRules):
    """One small method per rule of ``qwen3_5.lark``'s prompt section."""

    def parameter(self, children: list[Any]) -> tuple[str, str]:
        return (text_of(children, "ARG_KEY"), text_of(children, "ARG_VALUE"))

    def tool_call(self, children: list[Any]) -> _Call:
        return (text_of(children, "FUNC_NAME"), [c for c in children if isinstance(c, tuple)])

    def thought(self, children: list[Any]) -> str:
        return text_of(children, "REASONING")

    def result(self, children: list[Any]) -> _Parts:
        return _parts(children, "RESULT_TEXT")

    def system(self, children: list[Any]) -> _Block:
        return _Block("system", ["".join(str(c) for c in children[2:-1])])

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", _parts(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> _Block:
        thought = next((c for c in children if isinstance(c, str) and not isinstance(c, Token)), None)
        calls = [c for c in children if isinstance(c, tuple)]
        return _Block("assistant", _parts(children, "CONTENT"), reasoning=thought or None, calls=calls)

    def results(self, children: list[Any]) -> _Block:
        return _Block("results", results=[c for c in children if isinstance(c, list)])

    def headless_results(self, children: list[Any]) -> _Block:
        return self.results(children)

    def generation(self, children: list[Any]) -> _Block:
        tokens = [c.type for c in children if isinstance(c, Token)]
        return _Block("generation", thinking="THINK_OPEN" in tokens and "THINK_CLOSE" not in tokens)


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Qwen3.5 prompt tree."""
    blocks: list[_Block] = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    generation = blocks[-1] if blocks and blocks[-1].kind == "generation" else None
    if generation is not None:
        blocks = blocks[:-1]
    tools: list[dict[str, Any]] = []
    if blocks and blocks[0].kind == "system" and str(blocks[0].parts[0]).startswith(TOOLS_PREAMBLE):
        system, tools = _tools(str(blocks[0].parts[0]))
        blocks = ([_Block("system", [system])] if system is not None else []) + blocks[1:]
    options = {"enable_thinking": True} if generation is not None and generation.thinking else {}
    return Conversation(
        messages=tuple(_messages(blocks, tools)),
        tools=tuple(tools),
        options=options,
        add_generation_prompt=generation is not None,
    )


def _tools(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The caller's system text (``None``: none was written) and the tools: one ``tojson`` line
    each (it escapes every newline), then the instruction, then ``'\\n\\n' + content``."""
    listing = text[len(TOOLS_PREAMBLE) : text.index(TOOLS_END)]
    tools = [json.loads(line) for line in listing.split("\n") if line]
    after = text[text.index(INSTRUCTION_END, text.index(TOOLS_END)) + len(INSTRUCTION_END) :]
    return (after[2:] if after else None), tools


def _messages(blocks: list[_Block], tools: list[dict[str, Any]]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    for block in blocks:
        content: Content = content_of(block.parts)
        if block.kind == "system":
            messages.append(SystemMessage(content=content))
        elif block.kind == "user":
            messages.append(UserMessage(content=content))
        elif block.kind == "assistant":
            calls = tuple(_call(name, pairs, tools, new_id) for name, pairs in block.calls)
            said = content or None if calls else content
            messages.append(AssistantMessage(content=said, reasoning=block.reasoning, tool_calls=calls))
        else:
            messages += _results(block, messages)
    return messages


def _results(block: _Block, messages: list[AnyMessage]) -> list[ToolMessage]:
    previous = messages[-1] if messages else None
    calls = previous.tool_calls if isinstance(previous, AssistantMessage) else ()
    return [
        ToolMessage(content=content_of(parts), tool_call_id=calls[i].id if i < len(calls) else None)
        for i, parts in enumerate(block.results)
    ]
