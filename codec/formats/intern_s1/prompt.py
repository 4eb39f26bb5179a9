"""Reads an Intern-S1 prompt's tree (``intern_s1.lark``, rule ``conversation``) into a
``Conversation``.

What the prompt shows, literally::

    <|im_start|>system name=<|plugin|>\\nS\\n\\nYour response should consist of…tools:\\n[…]<|im_end|>\\n
    <|im_start|>user\\ntext\\n<IMG_CONTEXT><|im_end|>\\n
    <|im_start|>assistant\\nanswer<|action_start|><|plugin|>\\n{…}\\n<|action_end|><|im_end|>\\n
    <|im_start|>environment name=<|plugin|>\\nresult<|im_end|>\\n
    <|im_start|>assistant\\n<think>

The tools are the indented JSON array at the end of the first system block (``tools |
tojson(indent=2)``), after the caller's system text and the template's instruction. The default
system prompt (thinking on) reads back as no system message. Calls carry no ids: they are
numbered ``call_0``, ``call_1``, ... and a tool result takes the id of the call at its position
in the run of results after the assistant turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Tree

from codec.formats import RenderFn
from codec.formats._prompt import MediaRules, sequential_ids, text_of
from codec.formats.intern_s1.texts import INSTRUCTION_HEAD, TOOLS_HEAD, default_system, read_back
from codec.formats.qwen3.prompt import _call as call_of
from codec.models import AnyMessage, AssistantMessage, Conversation, MediaPart, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

_OFF = {"enable_thinking": False}
_Pieces = list[str | MediaPart]
# The system block's text: the markers in it are the default prompt's and the tools instruction's.
_SYSTEM_TEXT = ("SYSTEM_TEXT", "THINK_OPEN", "THINK_CLOSE", "CALL_OPEN", "PLUGIN", "CALL_CLOSE")


@dataclass
class _Block:
    kind: str
    pieces: _Pieces = field(default_factory=list)
    reasoning: str | None = None
    calls: list[str] = field(default_factory=list)
    thinking: bool = False


def _pieces(children: list[Any], *terminals: str) -> _Pieces:
    """Text (tokens of ``terminals``, as written: a marker's with the white space of its
    spelling) and image placeholders, in order."""
    return [
        child if isinstance(child, MediaPart) else str(child)
        for child in children
        if isinstance(child, MediaPart) or (isinstance(child, Token) and child.type in terminals)
    ]


class _Tree(MediaRules):
    """One small method per rule of ``intern_s1.lark``'s prompt section."""

    def thought(self, children: list[Any]) -> tuple[str, str]:
        return ("thought", text_of(children, "REASONING"))

    def tool_call(self, children: list[Any]) -> tuple[str, str]:
        return ("call", text_of(children, "CALL_HEAD", "CALL_JSON"))

    def system(self, children: list[Any]) -> _Block:
        body = children[4:] if children[1].type == "TOOLS_ROLE" else children[2:]  # after the header
        return _Block("system", _pieces(body, *_SYSTEM_TEXT))

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", _pieces(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> _Block:
        parts = [c for c in children if isinstance(c, tuple)]
        reasoning = next((text for kind, text in parts if kind == "thought"), None)
        calls = [text for kind, text in parts if kind == "call"]
        return _Block("assistant", _pieces(children, "CONTENT"), reasoning=reasoning or None, calls=calls)

    def result(self, children: list[Any]) -> _Block:
        return _Block("result", _pieces(children, "RESULT_TEXT"))

    def generation(self, children: list[Any]) -> _Block:
        return _Block("generation", thinking=any(isinstance(c, Token) and c.type == "THINK_OPEN" for c in children))


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of an Intern-S1 prompt tree."""
    blocks: list[_Block] = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    generation = blocks[-1] if blocks and blocks[-1].kind == "generation" else None
    if generation is not None:
        blocks = blocks[:-1]
    tools: list[dict[str, Any]] = []
    system: Any = None
    if blocks and blocks[0].kind == "system":
        system, tools = _system(blocks[0].pieces)
        blocks = blocks[1:]
    thinking = generation.thinking if generation is not None else None
    head, options = _first(system, thinking, bool(blocks) or system is not None, bool(tools) and not blocks)
    messages = ([SystemMessage(content=head)] if head is not None else []) + _messages(blocks)
    return Conversation(
        messages=tuple(messages), tools=tuple(tools), options=options, add_generation_prompt=generation is not None
    )


def _system(pieces: _Pieces) -> tuple[Any, list[dict[str, Any]]]:
    """The system block's text (the caller's, or the default prompt) and the tools: ``system_prompt.rstrip('\\n')
    + '\\n\\n' + tool_instruction``, the whole stripped of new lines; the instruction, after the
    last image, ends with the tools' JSON array."""
    last_image = max((at for at, piece in enumerate(pieces) if isinstance(piece, MediaPart)), default=-1)
    tail = "".join(str(piece) for piece in pieces[last_image + 1 :])
    if TOOLS_HEAD not in tail:
        return read_back(pieces), []
    start = tail.rfind(INSTRUCTION_HEAD, 0, tail.rfind(TOOLS_HEAD))
    if start < 0:
        raise ValueError("not a tools instruction the template writes")
    tools = json.loads(tail[tail.rfind(TOOLS_HEAD) + len(TOOLS_HEAD) :])
    return read_back([*pieces[: last_image + 1], tail[:start].removesuffix("\n\n")]), list(tools)


def _first(text: Any, thinking: bool | None, any_message: bool, alone: bool) -> tuple[Any, dict[str, Any]]:
    """The first system message (``None``: none) and the options, from the system block's text
    (``None``: no block) and the generation prompt's ``<think>`` (``None``: no generation prompt):
    an empty text or none is no system message unless thinking is on, where the default would
    have been written, or the block of tools is ``alone`` (a message must make the loop write
    it); the default text is no system message unless thinking is off."""
    if not any_message:
        return None, (_OFF if thinking is False else {})
    if text is None or text == "":
        if thinking or alone:
            return "", (dict(_OFF) if thinking is False else {})
        return None, dict(_OFF)
    if text == default_system():
        return (text, dict(_OFF)) if thinking is False else (None, {})
    return text, (dict(_OFF) if thinking is False else {})


def _messages(blocks: list[_Block]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    calls: tuple[Any, ...] = ()
    position = 0
    for block in blocks:
        content = read_back(block.pieces)
        if block.kind == "user":
            messages.append(UserMessage(content=content))
            calls = ()
        elif block.kind == "assistant":
            calls, position = tuple(call_of(text, new_id) for text in block.calls), 0
            messages.append(AssistantMessage(content=content, reasoning=block.reasoning, tool_calls=calls))
        elif block.kind == "result":
            own = calls[position].id if position < len(calls) else None
            messages.append(ToolMessage(content=content, tool_call_id=own))
            position += 1
        else:
            messages.append(SystemMessage(content=content))
    return messages
