"""Reads a DeepSeek-V3.1 prompt's tree (``deepseek_v3_1.lark``, rule ``conversation``) into a
``Conversation``. What the prompt shows, literally::

    <｜begin▁of▁sentence｜>S1\\n\\nS2<｜User｜>text<｜Assistant｜><think></think>answer<｜end▁of▁sentence｜>
    <｜User｜>text<｜Assistant｜><think></think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>
    <｜tool▁output▁begin｜>result<｜tool▁output▁end｜>answer<｜end▁of▁sentence｜>
    <｜User｜>text<｜Assistant｜><think>

The text after ``<｜begin▁of▁sentence｜>`` is every system message joined: it comes back as one
system message. An assistant message before any user message has no header and runs on from
that text: it comes back as an assistant message holding all of it. Calls carry no ids: they
are numbered ``call_0``, ``call_1``, ... and a tool result takes the id of the call at its
position in the assistant message before its run of results. ``canonical`` states the same
rules from the other side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec


@dataclass
class _Call:
    name: str
    arguments: dict[str, Any]


@dataclass
class _Reply:
    text: str
    calls: list[_Call]
    opening: bool = False  # before any user message: its text is the system text


@dataclass
class _Result:
    text: str


@dataclass
class _Generation:
    thinking: bool


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``deepseek_v3_1.lark``'s prompt section."""

    def user(self, children: list[Any]) -> UserMessage:
        return UserMessage(content=text_of(children, "CONTENT"))

    def tool_call(self, children: list[Any]) -> _Call:
        return _Call(text_of(children, "TOOL_NAME"), json.loads(text_of(children, "ARGS_JSON")))

    def written_calls(self, children: list[Any]) -> list[_Call]:
        return [c for c in children if isinstance(c, _Call)]

    def answer(self, children: list[Any]) -> _Reply:
        return _Reply(text_of(children, "CONTENT"), _calls_in(children))

    def reply(self, children: list[Any]) -> _Reply:
        return self.answer(children)

    def opening(self, children: list[Any]) -> _Reply:
        return _Reply("", _calls_in(children), opening=True)

    def result(self, children: list[Any]) -> _Result:
        return _Result(text_of(children, "RESULT_TEXT"))

    def generation(self, children: list[Any]) -> _Generation:
        # `<think>` alone is thinking's prompt; `<think></think>` the pre-filled empty thought.
        return _Generation(thinking=len(children) == 2)


def _calls_in(children: list[Any]) -> list[_Call]:
    return next((c for c in children if isinstance(c, list)), [])


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a DeepSeek-V3.1 prompt tree."""
    children: list[Any] = list(_Tree().transform(tree).children)
    system = text_of(children, "SYSTEM_TEXT")
    items = [c for c in children if not isinstance(c, Token)]
    generation = items.pop() if items and isinstance(items[-1], _Generation) else None
    messages: list[AnyMessage] = []
    if items and isinstance(items[0], _Reply) and items[0].opening:
        items[0].text, system = system, ""
    if system:
        messages.append(SystemMessage(content=system))
    messages += _messages(items)
    options = {"thinking": True} if generation is not None and generation.thinking else {}
    return Conversation(messages=tuple(messages), options=options, add_generation_prompt=generation is not None)


def _messages(items: list[Any]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    calls: tuple[ToolCall, ...] = ()
    position = 0
    for item in items:
        if isinstance(item, _Reply):
            calls = tuple(ToolCall(id=new_id(c.name), name=c.name, arguments=c.arguments) for c in item.calls)
            content = item.text or (None if calls else "")
            messages.append(AssistantMessage(content=content, tool_calls=calls))
            position = 0
        elif isinstance(item, _Result):
            own = calls[position].id if position < len(calls) else None
            messages.append(ToolMessage(content=item.text, tool_call_id=own))
            position += 1
        else:
            messages.append(item)
            calls = ()
    return messages
