"""Reads a Kimi K2.5 prompt's tree (``kimi_k2_5.lark``, rule ``conversation``) into a
``Conversation``. What the prompt shows, literally::

    <|im_system|>tool_declare<|im_middle|>[{tool},…]<|im_end|>
    <|im_system|>system<|im_middle|>text<|im_end|>
    <|im_user|>user<|im_middle|>text<|im_end|>
    <|im_assistant|>assistant<|im_middle|><think>reasoning</think>answer<|tool_calls_section_begin|>…<|tool_calls_section_end|><|im_end|>
    <|im_system|>tool<|im_middle|>## Return of ID
    result<|im_end|>
    <|im_assistant|>assistant<|im_middle|><think>

A header shows a message's ``name`` where it has one, else its role; a system block whose text
starts ``## Return of`` and a new line is a tool result. The first system block, when it is named
``tool_declare`` and holds a JSON list, is the tools. A call's name is read from its id
(``functions.NAME:IDX``). A generation prompt with an empty thought is ``thinking=false``; a
thought in a history turn shows K2.6's ``preserve_thinking``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Tree

from codec.formats import RenderFn
from codec.formats._prompt import MediaRules, content_of, text_of
from codec.formats.kimi_k2.ids import name_of
from codec.formats.kimi_k2_5.content import TOOLS_NAME, TOOLS_TEXT, declared, last_answer, reads, result_parts
from codec.models import (
    AnyMessage,
    AssistantMessage,
    Conversation,
    MediaPart,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from codec.registry import FormatSpec

PRESERVE = "preserve_thinking"
THINKING = "thinking"


@dataclass
class _Block:
    """A ``<|im_system|>`` or ``<|im_user|>`` block: its header's name and its pieces."""

    kind: str
    name: str
    pieces: list[str | MediaPart] = field(default_factory=list)


@dataclass
class _Generation:
    """The generation prompt: ``<think></think>`` when thinking is off."""

    thinking_off: bool


def _pieces(children: list[Any]) -> list[str | MediaPart]:
    return [str(c) if isinstance(c, Token) else c for c in children if _piece(c)]


def _piece(child: Any) -> bool:
    return isinstance(child, MediaPart) or (isinstance(child, Token) and child.type == "CONTENT")


class _Tree(MediaRules):
    """One small method per rule of ``kimi_k2_5.lark``'s prompt section."""

    def system(self, children: list[Any]) -> _Block:
        return _Block("system", text_of(children, "ROLE_NAME"), _pieces(children))

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", text_of(children, "ROLE_NAME"), _pieces(children))

    def assistant(self, children: list[Any]) -> AssistantMessage:
        calls = next((c for c in children if isinstance(c, tuple)), ())
        reasoning = text_of(children, "REASONING") or None
        return AssistantMessage(content=content_of(_pieces(children)), reasoning=reasoning, tool_calls=calls)

    def written_calls(self, children: list[Any]) -> tuple[ToolCall, ...]:
        return tuple(c for c in children if isinstance(c, ToolCall))

    def written_call(self, children: list[Any]) -> ToolCall:
        written = text_of(children, "WRITTEN_ID")
        arguments = json.loads(text_of(children, "ARGS_JSON"))
        return ToolCall(id=written or None, name=name_of(written), arguments=arguments)

    def generation(self, children: list[Any]) -> _Generation:
        return _Generation(thinking_off=any(isinstance(c, Token) and c.type == "THINK_CLOSE" for c in children))


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Kimi K2.5 prompt tree."""
    items = list(_Tree().transform(tree).children)
    block = _tools(items[0]) if items else None
    tools, text = block or ([], None)
    items = items[1:] if block is not None else items
    generation = items.pop() if items and isinstance(items[-1], _Generation) else None
    messages = [_message(item) if isinstance(item, _Block) else item for item in items]
    options = _options(messages, generation, spec) | ({TOOLS_TEXT: text} if text is not None else {})
    conversation = Conversation(messages=tuple(messages), tools=tuple(tools), options=options)
    return conversation.model_copy(update={"add_generation_prompt": generation is not None})


def _tools(first: Any) -> tuple[list[dict[str, Any]], str | None] | None:
    """The tools (and ``tools_ts_str``), when the first block is the template's tools block."""
    if not isinstance(first, _Block) or first.kind != "system" or first.name != TOOLS_NAME:
        return None
    if not all(isinstance(p, str) for p in first.pieces):
        return None  # a system message named tool_declare, with media
    return declared("".join(str(p) for p in first.pieces))


def _message(block: _Block) -> AnyMessage:
    """A block as the message the template wrote it from."""
    if block.kind == "user":
        return UserMessage(content=content_of(block.pieces), name=_unless(block.name, "user"))
    result = result_parts(block.pieces)
    if result is not None:
        written_id, rest = result
        return ToolMessage(content=content_of(rest), tool_call_id=written_id or None, name=_unless(block.name, "tool"))
    if block.name == "developer":
        return SystemMessage(role="developer", content=content_of(block.pieces))
    return SystemMessage(content=content_of(block.pieces), name=_unless(block.name, "system"))


def _unless(name: str, role: str) -> str | None:
    return None if name == role else name


def _options(messages: list[AnyMessage], generation: _Generation | None, spec: FormatSpec) -> dict[str, Any]:
    """``thinking=false`` from the generation prompt; ``preserve_thinking`` (K2.6) where a thought
    shows that only it writes."""
    options: dict[str, Any] = {}
    off = generation is not None and generation.thinking_off
    if off:
        options[THINKING] = False
    if reads(spec.template, PRESERVE) and kept_thought(messages, off):
        options[PRESERVE] = True
    return options


def kept_thought(messages: list[AnyMessage], thinking_off: bool) -> bool:
    """Whether a thought shows where only ``preserve_thinking`` writes one: in a history turn (up
    to the last answer), or in any turn with thinking off."""
    end = len(messages) if thinking_off else last_answer(messages) + 1
    return any(isinstance(m, AssistantMessage) and m.reasoning for m in messages[:end])
