"""Reads a Llama 4 prompt's tree (``llama4.lark``, rule ``conversation``) into a ``Conversation``.

What the prompt shows, literally::

    <|begin_of_text|><|header_start|>system<|header_end|>\\n\\nEnvironment: ipython\\nS<|eot|>
    <|header_start|>user<|header_end|>\\n\\nGiven the following functions, …\\n\\n{tool}\\n\\nU<|eot|>
    <|header_start|>assistant<|header_end|>\\n\\n<|python_start|>text<|python_end|>{"name": "f", …}<|eot|>
    <|header_start|>ipython<|header_end|>\\n\\n"result"<|eot|>
    <|header_start|>assistant<|header_end|>\\n\\n

The tools are listed as Llama 3's template lists them (the same instruction text, each tool
``tojson(indent=4)`` and a blank line), in the first user block, or in the system block when
``tools_in_user_message`` is false; ``Environment: ipython`` opens a system block when tools were
given. Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... and a tool result takes
the id of the call at its position in the run of results after the assistant message. A tool
result is written as JSON (``tojson``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of
from codec.formats.llama3.prompt import ENVIRONMENT, SYSTEM_TOOLS, USER_TOOLS, listing
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec


@dataclass
class _Block:
    kind: str
    text: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments JSON)
    called: bool = False  # written with `<|python_start|>…<|python_end|>` and calls


def _tokens(tree: Any) -> str:
    """The text of a subtree's tokens, joined (white space between them is the template's
    layout; inside a string it is part of the string's token)."""
    if isinstance(tree, Token):
        return str(tree)
    return "".join(_tokens(child) for child in tree.children if child is not None)  # None: `[…]` left out


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``llama4.lark``'s prompt section."""

    def tool_call(self, children: list[Any]) -> tuple[str, str]:
        name = next(str(c) for c in children if isinstance(c, Token) and c.type == "TOOL_NAME")
        body = next(c for c in children if isinstance(c, Tree))
        return (name[1:-1], _tokens(body))

    def system(self, children: list[Any]) -> _Block:
        return _Block("system", text_of(children, "SYSTEM_TEXT"))

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> _Block:
        calls = [c for c in children if isinstance(c, tuple)]
        return _Block("assistant", text_of(children, "CONTENT"), calls, bool(calls))

    def results(self, children: list[Any]) -> _Block:
        return _Block("results", text_of(children, "RESULT_TEXT"))

    def generation(self, _: list[Any]) -> _Block:
        return _Block("generation")


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Llama 4 prompt tree."""
    blocks: list[_Block] = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    generation = bool(blocks) and blocks[-1].kind == "generation"
    if generation:
        blocks = blocks[:-1]
    tools: list[dict[str, Any]] = []
    options: dict[str, Any] = {}
    listed = False
    head: list[AnyMessage] = []
    if blocks and blocks[0].kind == "system":  # the first system message (none: no block)
        system, blocks = blocks[0].text, blocks[1:]
        has_tools = system.startswith(ENVIRONMENT)
        system = system[len(ENVIRONMENT) :] if has_tools else system
        if has_tools and system.startswith(SYSTEM_TOOLS):
            tools, system = listing(system[len(SYSTEM_TOOLS) :])
            options["tools_in_user_message"], listed = False, True
        head = [SystemMessage(content=system)]
    if not listed and blocks and blocks[0].kind == "user" and blocks[0].text.startswith(USER_TOOLS):
        tools, first = listing(blocks[0].text[len(USER_TOOLS) :])
        blocks, listed = [_Block("user", first), *blocks[1:]], True
    if listed and not tools:  # ``tools=[]`` writes the block: a conversation's tools cannot say so
        options["custom_tools"] = []
    return Conversation(
        messages=tuple(head + _messages(blocks)),
        tools=tuple(tools),
        options=options,
        add_generation_prompt=generation,
    )


def _messages(blocks: list[_Block]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    calls: tuple[ToolCall, ...] = ()
    position = 0
    for block in blocks:
        if block.kind == "results":
            own = calls[position].id if position < len(calls) else None
            messages.append(ToolMessage(content=json.loads(block.text), tool_call_id=own))
            position += 1
            continue
        calls, position = (), 0
        if block.kind == "system":
            messages.append(SystemMessage(content=block.text))
        elif block.kind == "user":
            messages.append(UserMessage(content=block.text))
        else:
            calls = tuple(
                ToolCall(id=new_id(name), name=name, arguments=json.loads(arguments)) for name, arguments in block.calls
            )
            messages.append(AssistantMessage(content=block.text, tool_calls=calls))
    return messages
