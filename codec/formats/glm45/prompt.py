"""Reads a GLM-4.5 prompt's tree (``glm45.lark``, rule ``conversation``) into a
``Conversation``. What the prompt shows, literally::

    [gMASK]<sop><|system|>\\n# Tools…<tools>\\n{tool JSON}\\n</tools>…</tool_call><|system|>\\nsystem text
    <|user|>\\ntext<|assistant|>\\n<think>R</think>\\nanswer\\n<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>
    <|observation|>\\n<tool_response>\\nresult\\n</tool_response><|assistant|>

The new lines belong to the markers (the grammar's spellings), so the reader sees the text as
the caller gave it. The tools block is the system block that ends with the template's call
example; each tool is one JSON line. Calls carry no ids: they are numbered ``call_0``,
``call_1``, ... and a tool result takes the id of the call at its position after its turn.

The generation prompt with thinking off, ``<|assistant|>\\n<think></think>``, reads as an
empty last assistant turn; it is the generation prompt when every user message ends with the
``/nothink`` the template then writes (``canonical`` decides the same way).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of
from codec.formats.glm.prompt import typed_arguments
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

NO_THINK = "/nothink"
"""What the template writes after every user message when ``enable_thinking`` is false, unless
the message ends with it already: ``{{- '/nothink' if (enable_thinking is defined and not
enable_thinking and not visible_text(m.content).endswith("/nothink")) else '' -}}``"""


@dataclass
class _Block:
    kind: str
    text: str = ""
    reasoning: str = ""
    calls: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    responses: list[str] = field(default_factory=list)
    example: bool = False


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``glm45.lark``'s prompt section."""

    def tools_example(self, _: list[Any]) -> str:
        return "example"

    def reasoning(self, children: list[Any]) -> str:
        return text_of(children, "REASONING")

    def argument(self, children: list[Any]) -> tuple[str, str]:
        return (text_of(children, "ARG_KEY"), text_of(children, "ARG_VALUE"))

    def tool_call(self, children: list[Any]) -> tuple[str, list[tuple[str, str]]]:
        return (text_of(children, "TOOL_NAME"), [c for c in children if isinstance(c, tuple)])

    def response(self, children: list[Any]) -> str:
        return text_of(children, "CONTENT")

    def system(self, children: list[Any]) -> _Block:
        return _Block("system", text_of(children, "CONTENT"), example="example" in children)

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> _Block:
        reasoning = next(c for c in children if isinstance(c, str) and not isinstance(c, Token))
        calls = [c for c in children if isinstance(c, tuple)]
        return _Block("assistant", text_of(children, "CONTENT"), reasoning=reasoning, calls=calls)

    def observation(self, children: list[Any]) -> _Block:
        return _Block("observation", responses=[c for c in children if isinstance(c, str) and not isinstance(c, Token)])

    def generation(self, _: list[Any]) -> _Block:
        return _Block("generation")


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a GLM-4.5 prompt tree."""
    blocks: list[_Block] = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    tools, blocks = _tools(blocks)
    options: dict[str, Any] = {}
    generation = bool(blocks) and blocks[-1].kind == "generation"
    if generation:
        blocks = blocks[:-1]
    elif blocks and _empty_assistant(blocks[-1]) and thinking_off_shown([b.text for b in blocks if b.kind == "user"]):
        blocks, generation, options = blocks[:-1], True, {"enable_thinking": False}
        blocks = [_Block("user", without_no_think(b.text)) if b.kind == "user" else b for b in blocks]
    messages = _messages(blocks, tools)
    return Conversation(messages=tuple(messages), tools=tuple(tools), options=options, add_generation_prompt=generation)


def thinking_off_shown(user_texts: list[str]) -> bool:
    """Whether the prompt's user messages all end with ``/nothink``, as they do with thinking
    off (so an empty last turn, ``<|assistant|>\\n<think></think>``, is the generation prompt)."""
    return all(text.endswith(NO_THINK) for text in user_texts)


def without_no_think(text: str) -> str:
    """A user message's text without the ``/nothink`` written after it."""
    return text[: -len(NO_THINK)] if text.endswith(NO_THINK) else text


def _tools(blocks: list[_Block]) -> tuple[list[dict[str, Any]], list[_Block]]:
    """The tools block: one tool as JSON per line between ``<tools>\\n`` and ``</tools>``
    (``{{ tool | tojson(ensure_ascii=False) }}``)."""
    for index, block in enumerate(blocks):
        if block.kind == "system" and block.example:
            listing = block.text.split("<tools>\n", 1)[1].rsplit("</tools>", 1)[0]
            tools = [json.loads(line) for line in listing.split("\n") if line]
            return tools, blocks[:index] + blocks[index + 1 :]
    return [], blocks


def _empty_assistant(block: _Block) -> bool:
    return block.kind == "assistant" and not block.reasoning and not block.text and not block.calls


def _messages(blocks: list[_Block], tools: list[dict[str, Any]]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    for block in blocks:
        if block.kind == "system":
            messages.append(SystemMessage(content=block.text))
        elif block.kind == "user":
            messages.append(UserMessage(content=block.text))
        elif block.kind == "assistant":
            calls = tuple(
                ToolCall(id=new_id(name), name=name, arguments=typed_arguments(tools, name, pairs))
                for name, pairs in block.calls
            )
            messages.append(
                AssistantMessage(content=block.text or None, reasoning=block.reasoning or None, tool_calls=calls)
            )
        else:
            messages += _results(block, messages)
    return messages


def _results(block: _Block, messages: list[AnyMessage]) -> list[ToolMessage]:
    previous = messages[-1] if messages else None
    calls = previous.tool_calls if isinstance(previous, AssistantMessage) else ()
    return [
        ToolMessage(content=text, tool_call_id=calls[i].id if i < len(calls) else None)
        for i, text in enumerate(block.responses)
    ]
