"""Reads a Qwen3 prompt's tree (``qwen3.lark``, rule ``conversation``) into a ``Conversation``.

What the prompt shows, literally::

    <|im_start|>system\\nS\\n\\n# Tools\\n\\nYou may call one or more functions…<tools>\\n{tool}\\n</tools>…
    <|im_start|>user\\ntext<|im_end|>\\n
    <|im_start|>assistant\\n<think>\\nR\\n</think>\\n\\nanswer\\n<tool_call>\\n{…}\\n</tool_call><|im_end|>\\n
    <|im_start|>user\\n<tool_response>\\nresult\\n</tool_response><|im_end|>\\n
    <|im_start|>assistant\\n

The tools are the JSON lines of the first system block (``{{- tool | tojson }}``), after the
caller's system text and the template's instruction. Calls carry no ids: they are numbered
``call_0``, ``call_1``, ... and a tool result takes the id of the call at its position in the
assistant turn before its block.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of
from codec.formats.qwen3.head import read_head
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# The template's tools instruction around the tool lines (``templates/qwen3.jinja``, line 6 and 11).
TOOLS_PREAMBLE = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_END = "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "


@dataclass
class _Block:
    kind: str
    text: str = ""
    tools: bool = False
    reasoning: str | None = None
    calls: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    thinking_off: bool = False


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``qwen3.lark``'s prompt section."""

    def tools(self, _: list[Any]) -> str:
        return "tools"

    def thought(self, children: list[Any]) -> tuple[str, str]:
        return ("thought", text_of(children, "REASONING"))

    def tool_call(self, children: list[Any]) -> tuple[str, str]:
        return ("call", text_of(children, "CALL_HEAD", "CALL_JSON"))

    def result(self, children: list[Any]) -> tuple[str, str]:
        return ("result", text_of(children, "RESULT_TEXT"))

    def system(self, children: list[Any]) -> _Block:
        return _Block("system", text_of(children, "SYSTEM_TEXT"), tools="tools" in children)

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> _Block:
        parts = [c for c in children if isinstance(c, tuple)]
        reasoning = next((text for kind, text in parts if kind == "thought"), None)
        calls = [text for kind, text in parts if kind == "call"]
        return _Block("assistant", text_of(children, "CONTENT"), reasoning=reasoning, calls=calls)

    def results(self, children: list[Any]) -> _Block:
        return _Block("results", results=[c[1] for c in children if isinstance(c, tuple)])

    def generation(self, children: list[Any]) -> _Block:
        return _Block("generation", thinking_off=any(isinstance(c, Token) and c.type == "THINK_OPEN" for c in children))


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Qwen3 prompt tree."""
    blocks: list[_Block] = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    generation = blocks[-1] if blocks and blocks[-1].kind == "generation" else None
    if generation is not None:
        blocks = blocks[:-1]
    tools: list[dict[str, Any]] = []
    if blocks and blocks[0].tools:
        system, tools = _tools(blocks[0].text)
        blocks = ([_Block("system", system)] if system is not None else []) + blocks[1:]
    options = {"enable_thinking": False} if generation is not None and generation.thinking_off else {}
    return Conversation(
        messages=tuple(_messages(blocks)),
        tools=tuple(tools),
        options=options,
        add_generation_prompt=generation is not None,
    )


def _tools(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The caller's system text (``None``: there was no system message) and the tools of the
    tools block: ``{{- messages[0].content + '\\n\\n' }}`` before the instruction, one JSON line
    per tool after it (``tojson`` escapes every newline, so the last instruction is the real one)."""
    start = text.rfind(TOOLS_PREAMBLE)
    listing = text[start + len(TOOLS_PREAMBLE) : len(text) - len(TOOLS_END)]
    tools = [json.loads(line) for line in listing.split("\n") if line]
    before = text[:start]
    return (before[:-2] if before else None), tools


def _messages(blocks: list[_Block]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    for index, block in enumerate(blocks):
        if block.kind == "system":
            messages.append(SystemMessage(content=block.text))
        elif block.kind == "user":
            messages.append(UserMessage(content=block.text))
        elif block.kind == "assistant":
            calls = tuple(_call(text, new_id) for text in block.calls)
            reasoning = _reasoning(block.reasoning, last=index == len(blocks) - 1)
            messages.append(AssistantMessage(content=block.text, reasoning=reasoning, tool_calls=calls))
        else:
            messages += _results(block, messages)
    return messages


def _reasoning(written: str | None, last: bool) -> str | None:
    """The reasoning of a thought: an empty one on an earlier message was written only because
    its reasoning was new lines (``(not loop.last and reasoning_content)``): ``"\n"``."""
    if written is None or written:
        return written
    return None if last else "\n"


def _call(text: str, new_id: Any) -> ToolCall:
    """A call as the template writes it: ``{"name": "`` + name + ``", "arguments": `` +
    ``tojson`` of the arguments + ``}`` (the name is not escaped: read up to its quote)."""
    head = read_head(text)
    if not isinstance(head, tuple):
        raise ValueError(f"not a call the template writes: {text[:40]!r}")
    name, at, closed = head
    arguments = {} if closed else json.loads(text[at:].rstrip()[:-1])
    return ToolCall(id=new_id(name), name=name, arguments=arguments)


def _results(block: _Block, messages: list[AnyMessage]) -> list[ToolMessage]:
    previous = messages[-1] if messages else None
    calls = previous.tool_calls if isinstance(previous, AssistantMessage) else ()
    return [
        ToolMessage(content=text, tool_call_id=calls[i].id if i < len(calls) else None)
        for i, text in enumerate(block.results)
    ]
