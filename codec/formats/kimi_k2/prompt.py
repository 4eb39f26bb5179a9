"""Reads a Kimi K2 prompt's tree (``kimi_k2.lark``, rule ``conversation``) into a
``Conversation``. What the prompt shows, literally::

    <|im_system|>tool_declare<|im_middle|>[{tool}, …]<|im_end|>
    <|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|>
    <|im_user|>user<|im_middle|>text<|im_end|>
    <|im_assistant|>assistant<|im_middle|>answer<|tool_calls_section_begin|>…<|tool_calls_section_end|><|im_end|>
    <|im_system|>tool<|im_middle|>## Return of ID\\nresult<|im_end|>
    <|im_assistant|>assistant<|im_middle|>

The tools are one JSON list (``{{ tools | tojson }}``). A call's name is read from its id
(``functions.NAME:IDX``); a result's id is the caller's ``tool_call_id``, up to the two
characters ``\\n``. The template writes its own system message when the first message is not a
system message: the same block reads as no message when a message that is not a system message
follows it (``canonical`` drops a first system message of that text in the same case).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec.formats import RenderFn
from codec.formats._prompt import text_of
from codec.formats.kimi_k2.ids import name_of
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# templates/kimi_k2.jinja, line 9: the system message the template adds.
DEFAULT_SYSTEM = "You are a helpful assistant"
# Line 35: ``## Return of {{ message.tool_call_id }}\n{{ message['content'] }}``; the ``\n`` is
# template text, so it is written as the two characters.
RESULT_HEAD = "## Return of "
RESULT_BREAK = "\\n"


class _Tools(list[dict[str, Any]]):
    """The tools block's declarations."""


class _Generation:
    """The generation prompt."""


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``kimi_k2.lark``'s prompt section."""

    def tools(self, children: list[Any]) -> _Tools:
        return _Tools(json.loads(text_of(children, "TOOL_JSON")))

    def system(self, children: list[Any]) -> SystemMessage:
        return SystemMessage(content=text_of(children, "CONTENT"))

    def user(self, children: list[Any]) -> UserMessage:
        return UserMessage(content=text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> AssistantMessage:
        calls = next((c for c in children if isinstance(c, tuple)), ())
        return AssistantMessage(content=text_of(children, "CONTENT"), tool_calls=calls)

    def written_calls(self, children: list[Any]) -> tuple[ToolCall, ...]:
        return tuple(c for c in children if isinstance(c, ToolCall))

    def written_call(self, children: list[Any]) -> ToolCall:
        written = text_of(children, "WRITTEN_ID")
        arguments = json.loads(text_of(children, "ARGS_JSON"))
        return ToolCall(id=written, name=name_of(written), arguments=arguments)

    def result(self, children: list[Any]) -> ToolMessage:
        text = text_of(children, "RESULT_TEXT")
        if not text.startswith(RESULT_HEAD) or RESULT_BREAK not in text:
            raise ValueError(f"not a result the template writes: {text[:40]!r}")
        written, content = text[len(RESULT_HEAD) :].split(RESULT_BREAK, 1)
        return ToolMessage(content=content, tool_call_id=written or None)

    def generation(self, _: list[Any]) -> _Generation:
        return _Generation()


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Kimi K2 prompt tree."""
    items = list(_Tree().transform(tree).children)
    tools = items.pop(0) if items and isinstance(items[0], _Tools) else _Tools()
    generation = bool(items) and isinstance(items[-1], _Generation)
    messages: list[AnyMessage] = [m for m in items if not isinstance(m, _Generation)]
    if added_system(messages):
        messages = messages[1:]
    return Conversation(messages=tuple(messages), tools=tuple(tools), add_generation_prompt=generation)


def added_system(messages: list[AnyMessage]) -> bool:
    """Whether the first message is the one the template adds before a first message that is
    not a system message (``{%- if loop.first and messages[0]['role'] != 'system' -%}``)."""
    if len(messages) < 2 or isinstance(messages[1], SystemMessage):
        return False
    first = messages[0]
    return isinstance(first, SystemMessage) and first.role == "system" and first.content == DEFAULT_SYSTEM
