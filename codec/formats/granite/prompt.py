"""Reads a Granite 4.0 prompt's tree (``granite.lark``, rule ``conversation``) into a
``Conversation``.

What the prompt shows, literally::

    <|start_of_role|>system<|end_of_role|>S\\n\\nYou are a helpful assistant with access to the following tools.…
    <|start_of_role|>user<|end_of_role|>text<|end_of_text|>\\n
    <|start_of_role|>assistant<|end_of_role|>answer\\n<tool_call>\\n{…}\\n</tool_call><|end_of_text|>\\n
    <|start_of_role|>user<|end_of_role|>\\n<tool_response>\\nresult\\n</tool_response><|end_of_text|>\\n
    <|start_of_role|>assistant<|end_of_role|>

The first block is always a system block: the caller's system text, then the tools (one JSON
line each, ``tool | tojson``) inside the template's instruction, or, with neither, the
template's default system text (``DEFAULT_SYSTEM``), read back as no system message. Calls
carry no ids: they are numbered ``call_0``, ``call_1``, ... and a tool result takes the id of
the call at its position in the assistant turn before its block. Calls are read as Qwen3's
prompt reader reads them (the same call object).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of
from codec.formats.qwen3.prompt import _call as call_of
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# The template's texts around the tool lines (``templates/granite_4.jinja``, lines 1-2) and its
# default system text (line 5).
TOOLS_PREAMBLE = (
    "You are a helpful assistant with access to the following tools. You may call one or more tools to assist "
    "with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_END = "\n</tools>\n\nFor each tool call, return a json object with function name and arguments within "
AFTER_TOOLS = (
    ". If a tool does not exist in the provided list of tools, notify the user that you do not have the ability "
    "to fulfill the request."
)
DEFAULT_SYSTEM = "You are a helpful assistant. Please ensure responses are professional, accurate, and safe."
# ``FormatSpec.layout`` of Granite 4.1's template, which has no default system text (no line 5).
NO_DEFAULT_SYSTEM = "no-default-system"


@dataclass
class _Block:
    kind: str
    text: str = ""
    after: str | None = None  # system text after the tools' call format (None: no tools)
    calls: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``granite.lark``'s prompt section."""

    def tools(self, _: list[Any]) -> str:
        return "tools"

    def tool_call(self, children: list[Any]) -> tuple[str, str]:
        return ("call", text_of(children, "CALL_HEAD", "CALL_JSON"))

    def result(self, children: list[Any]) -> tuple[str, str]:
        return ("result", text_of(children, "RESULT_TEXT"))

    def system(self, children: list[Any]) -> _Block:
        if "tools" not in children:
            return _Block("system", text_of(children, "SYSTEM_TEXT"))
        at = children.index("tools")
        return _Block("system", text_of(children[:at], "SYSTEM_TEXT"), after=text_of(children[at:], "SYSTEM_TEXT"))

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> _Block:
        calls = [c[1] for c in children if isinstance(c, tuple)]
        return _Block("assistant", text_of(children, "CONTENT"), calls=calls)

    def results(self, children: list[Any]) -> _Block:
        return _Block("results", results=[c[1] for c in children if isinstance(c, tuple)])

    def generation(self, _: list[Any]) -> _Block:
        return _Block("generation")


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Granite 4.0 prompt tree."""
    blocks: list[_Block] = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    generation = bool(blocks) and blocks[-1].kind == "generation"
    if generation:
        blocks = blocks[:-1]
    tools: list[dict[str, Any]] = []
    if spec.layout == NO_DEFAULT_SYSTEM:
        blocks, tools = _without_default(blocks)
    elif blocks and blocks[0].kind == "system":
        system, tools = _first_system(blocks[0], alone=len(blocks) == 1 or blocks[1].kind == "system")
        blocks = ([_Block("system", system)] if system is not None else []) + blocks[1:]
    return Conversation(messages=tuple(_messages(blocks)), tools=tuple(tools), add_generation_prompt=generation)


def _first_system(block: _Block, alone: bool) -> tuple[str | None, list[dict[str, Any]]]:
    """The caller's system text (``None``: there was no system message; the default text is
    kept alone or before another system block, which would otherwise come first) and the tools."""
    if block.after is None:
        return (None if block.text == DEFAULT_SYSTEM and not alone else block.text), []
    if block.after != AFTER_TOOLS:
        raise ValueError(f"not a tools instruction the template writes: {block.after[:40]!r}")
    return _tools(block.text)


def _without_default(blocks: list[_Block]) -> tuple[list[_Block], list[dict[str, Any]]]:
    """Granite 4.1's first system block, which the template writes only for system text or
    tools: an empty one came after an empty system message the template skipped; no block at
    all, an empty system message alone (the template wrote nothing of it)."""
    if not blocks:
        return [_Block("system")], []
    first = blocks[0]
    if first.kind != "system":
        return blocks, []
    if first.after is None:
        return ([_Block("system")] if first.text == "" else []) + blocks, []
    system, tools = _first_system(first, alone=False)
    return ([_Block("system", system)] if system is not None else []) + blocks[1:], tools


def _tools(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The caller's system text and the tools: ``ns.system_message + '\\n\\n' +
    ns.tools_system_message``, one JSON line per tool (``tojson`` escapes every newline, so the
    last instruction is the real one)."""
    start = text.rfind(TOOLS_PREAMBLE)
    if start < 0 or not text.endswith(TOOLS_END):
        raise ValueError("not a tools listing the template writes")
    listing = text[start + len(TOOLS_PREAMBLE) : len(text) - len(TOOLS_END)]
    tools = [json.loads(line) for line in listing.split("\n") if line]
    before = text[:start]
    return (before[:-2] if before else None), tools


def _messages(blocks: list[_Block]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    for block in blocks:
        if block.kind == "system":
            messages.append(SystemMessage(content=block.text))
        elif block.kind == "user":
            messages.append(UserMessage(content=block.text))
        elif block.kind == "assistant":
            calls = tuple(call_of(text, new_id) for text in block.calls)
            messages.append(AssistantMessage(content=block.text, tool_calls=calls))
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
