"""Reads a Mistral prompt's tree (``mistral.lark``, rule ``conversation``) into a
``Conversation``. What the prompt shows, literally::

    <s>[SYSTEM_PROMPT]text[/SYSTEM_PROMPT][AVAILABLE_TOOLS][{tool}, …][/AVAILABLE_TOOLS][INST]text[/INST]
    [THINK]reasoning[/THINK]answer[TOOL_CALLS]NAME[ARGS]{json}</s>[TOOL_RESULTS]result[/TOOL_RESULTS]answer</s>

The tools are one JSON list (``'[AVAILABLE_TOOLS]' + (tools| tojson) + '[/AVAILABLE_TOOLS]'``).
Calls and results carry no ids; the calls are numbered ``call_0``, ``call_1``, ... as
``canonical`` numbers them, and each result takes the id of the call at its place. The template
writes its own system prompt when the first message is not a system message: that block reads as
no message when a message that is not a system message follows it (``canonical`` drops a first
system message of that text in the same case). The template writes no generation prompt, so none
is read (``add_generation_prompt`` is always false).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lark import Token, Tree

from codec.formats import RenderFn
from codec.formats._prompt import MediaRules, content_of, sequential_ids, text_of
from codec.formats.mistral.system import added_system, default_system
from codec.models import (
    AnyMessage,
    AssistantMessage,
    Conversation,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from codec.registry import FormatSpec

_SYSTEM_TERMINALS = ("SYSTEM_TEXT", "THINK_OPEN", "THINK_CLOSE")  # the default prompt quotes [THINK]


class _Tools(list[dict[str, Any]]):
    """The tools block's declarations."""


class _Tree(MediaRules):
    """One small method per rule of ``mistral.lark``'s prompt section."""

    def __init__(self) -> None:
        super().__init__()
        self._new_id = sequential_ids()

    def tools(self, children: list[Any]) -> _Tools:
        return _Tools(json.loads(text_of(children, "TOOL_JSON")))

    def system(self, children: list[Any]) -> SystemMessage:
        return SystemMessage(content=text_of(children, *_SYSTEM_TERMINALS))

    def user(self, children: list[Any]) -> UserMessage:
        parts = [c if not isinstance(c, Token) else str(c) for c in children if not _marker(c)]
        return UserMessage(content=content_of(parts))

    def assistant(self, children: list[Any]) -> AssistantMessage:
        calls = tuple(c for c in children if isinstance(c, ToolCall))
        pieces = [c for c in children if isinstance(c, _Thought) or (isinstance(c, Token) and c.type == "CONTENT")]
        first = pieces[0] if pieces and isinstance(pieces[0], _Thought) else None
        if first is not None:
            pieces = pieces[1:]
        # A later thought (of a message joined to this one) stays in the content as written.
        content = "".join(p.written if isinstance(p, _Thought) else str(p) for p in pieces)
        reasoning = first.reasoning if first is not None else None
        return AssistantMessage(content=content, reasoning=reasoning, tool_calls=calls)

    def written_thought(self, children: list[Any]) -> _Thought:
        return _Thought(text_of(children, "REASONING"), text_of(children, "THINK_OPEN", "REASONING", "THINK_CLOSE"))

    def written_call(self, children: list[Any]) -> ToolCall:
        name = text_of(children, "TOOL_NAME")
        arguments = json.loads(text_of(children, "ARGS_JSON"))
        return ToolCall(id=self._new_id(name), name=name, arguments=arguments)

    def result(self, children: list[Any]) -> ToolMessage:
        return ToolMessage(content=text_of(children, "RESULT_TEXT"))


@dataclass(frozen=True)
class _Thought:
    """A thought in an assistant message: its ``reasoning`` and its text as ``written``."""

    reasoning: str
    written: str


def _marker(child: Any) -> bool:
    return isinstance(child, Token) and child.type in ("INST", "INST_CLOSE")


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Mistral prompt tree."""
    items = list(_Tree().transform(tree).children)
    items = [item for item in items if not isinstance(item, Token)]  # the <s>
    tools = next((item for item in items if isinstance(item, _Tools)), _Tools())
    messages: list[AnyMessage] = [m for m in items if not isinstance(m, _Tools)]
    if added_system(messages, default_system(spec)):
        messages = messages[1:]
    return Conversation(messages=tuple(_result_ids(messages)), tools=tuple(tools), add_generation_prompt=False)


def _result_ids(messages: list[AnyMessage]) -> list[AnyMessage]:
    """Each result takes the id of the call at its place in the run of results after a message
    with calls (``number_calls``, which ``canonical`` applies)."""
    calls: tuple[ToolCall, ...] = ()
    position = 0
    out: list[AnyMessage] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            calls, position = message.tool_calls, 0
        elif isinstance(message, ToolMessage):
            written = calls[position].id if position < len(calls) else None
            message = message.model_copy(update={"tool_call_id": written})
            position += 1
        else:
            calls = ()
        out.append(message)
    return out
