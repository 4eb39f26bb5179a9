"""Reads a Mistral v0.3 prompt's tree (``mistral_v0_3.lark``, rule ``conversation``) into a
``Conversation``. What the prompt shows, literally::

    <s>[INST] text[/INST] answer</s>[AVAILABLE_TOOLS] [{tool}, …][/AVAILABLE_TOOLS][INST] text[/INST]
    [TOOL_CALLS] [{"name": "f", "arguments": {…}, "id": "a1b2c3d4e"}]</s>
    [TOOL_RESULTS] {"content": result, "call_id": "a1b2c3d4e"}[/TOOL_RESULTS] answer</s>

The calls are JSON (``tool_call.function|tojson``), the tools and the results are not quite:
the template writes a tool's string members and a result's content as they are, unescaped
(``codec.formats.mistral_v0_3.tools``). The system message is part of the last user message's
text (``canonical`` puts it there), and a prompt of ``<s>`` alone is an empty system message; the
template writes no generation prompt, so none is read.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from lark import Token, Tree

from codec.errors import CodecError
from codec.formats import RenderFn
from codec.formats._prompt import MediaRules, text_of
from codec.formats.mistral_v0_3.tools import declarations
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

_RESULT_HEAD = '{"content": '  # ``'[TOOL_RESULTS] {"content": ' + content|string + ", " }}``
_RESULT_ID = ', "call_id": "'  # ``'"call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]'``
_RESULT_END = '"}'


class _Tools(list[dict[str, Any]]):
    """A tools block's declarations."""


class _Tree(MediaRules):
    """One small method per rule of ``mistral_v0_3.lark``'s prompt section."""

    def tools(self, children: list[Any]) -> _Tools:
        return _Tools(declarations(text_of(children, "TOOLS_TEXT")))

    def user(self, children: list[Any]) -> UserMessage:
        return UserMessage(content=text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> AssistantMessage:
        calls = next((c for c in children if isinstance(c, tuple)), None)
        if calls is not None:
            return AssistantMessage(content=None, tool_calls=calls)
        return AssistantMessage(content=text_of(children, "CONTENT"))

    def written_calls(self, children: list[Any]) -> tuple[ToolCall, ...]:
        listed = json.loads(text_of(children, "CALLS_TEXT"))
        return tuple(ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in listed)

    def result(self, children: list[Any]) -> ToolMessage:
        text = text_of(children, "RESULT_TEXT")
        split = text.rfind(_RESULT_ID)
        if not text.startswith(_RESULT_HEAD) or split < 0 or not text.endswith(_RESULT_END):
            raise CodecError(f"a tool result the template does not write: {text[:40]!r}")
        content = text[len(_RESULT_HEAD) : split]
        return ToolMessage(content=content, tool_call_id=text[split + len(_RESULT_ID) : -len(_RESULT_END)])


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Mistral v0.3 prompt tree."""
    items = [item for item in _Tree().transform(tree).children if not isinstance(item, Token)]  # the <s>
    tools = next((item for item in items if isinstance(item, _Tools)), _Tools())
    messages: list[AnyMessage] = [m for m in items if not isinstance(m, _Tools)] or [SystemMessage(content="")]
    return Conversation(messages=tuple(messages), tools=tuple(tools), add_generation_prompt=False)
