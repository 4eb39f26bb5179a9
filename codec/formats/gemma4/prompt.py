"""Reads a Gemma 4 prompt's tree (``gemma4.lark``, rule ``conversation``) into a ``Conversation``.

What the prompt shows, literally::

    <bos><|turn>system\\n<|think|>\\nsystem text<|tool>declaration:NAME{description:<|"|>…<|"|>,
    parameters:{properties:{city:{type:<|"|>STRING<|"|>}},type:<|"|>OBJECT<|"|>}}<tool|><turn|>\\n
    <|turn>user\\ntext<|image|><turn|>\\n
    <|turn>model\\n<|channel>thought\\n<channel|><|tool_call>call:NAME{city:<|"|>Paris<|"|>}<tool_call|>
    <|tool_response>response:NAME{value:<|"|>18 C<|"|>}<tool_response|>answer\\nnext answer<turn|>\\n
    <|turn>model\\n<|channel>thought\\n<channel|>

The first system turn carries ``<|think|>`` (``enable_thinking``), the first system message and
the tool declarations, whose syntax is read back into JSON schemas (types lower-cased). A model
turn holds every assistant message that follows another one, their tool results folded in; it
is split back into messages where the template's separators show (``split_turn``, shared with
``canonical``). Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... and a
result takes the id of the call its printed name matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Tree

from codec.formats import RenderFn
from codec.formats._prompt import MediaRules, content_of, sequential_ids, text_of, wrap_tool
from codec.formats.gemma4.declarations import read_function
from codec.formats.gemma4.turns import Bare, Channel, Item, Response, split_turn
from codec.models import (
    AnyMessage,
    Content,
    Conversation,
    MediaPart,
    SystemMessage,
    TextPart,
    ToolCall,
    UserMessage,
)

if TYPE_CHECKING:
    from codec.registry import FormatSpec


@dataclass
class _Block:
    kind: str
    parts: list[str | MediaPart] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    think: bool = False
    closed: bool = False
    open_thought: bool = False


class _Tree(MediaRules):
    """One small method per rule of ``gemma4.lark``'s prompt section (and its value syntax)."""

    def __init__(self) -> None:
        super().__init__()
        self._new_id = sequential_ids()  # calls are transformed in prompt order

    def string(self, children: list[Any]) -> str:
        return text_of(children, "STRING_TEXT")

    bad_quoted_key = string

    def array(self, children: list[Any]) -> list[Any]:
        return [_value(c) for c in children[1:-1] if c is not None and not _is(c, "COMMA")]

    def member(self, children: list[Any]) -> tuple[str, Any]:
        return (str(children[0]), _value(children[-1]))

    def object(self, children: list[Any]) -> dict[str, Any]:
        return dict(c for c in children if isinstance(c, tuple))

    def tool_call(self, children: list[Any]) -> ToolCall:
        name = text_of(children, "FUNC_NAME")
        return ToolCall(id=self._new_id(name), name=name, arguments=children[-2])

    def response(self, children: list[Any]) -> Response:
        return Response(text_of(children, "FUNC_NAME"), children[-2])

    def bare(self, _: list[Any]) -> Bare:
        return Bare()

    def thought(self, children: list[Any]) -> Channel:
        return Channel(text_of(children, "REASONING") or None)

    def open_thought(self, _: list[Any]) -> str:
        return "open_thought"

    def think(self, _: list[Any]) -> str:
        return "think"

    def declaration(self, children: list[Any]) -> dict[str, Any]:
        return wrap_tool(read_function(text_of(children, "FUNC_NAME"), children[-2]))

    def system(self, children: list[Any]) -> _Block:
        tools = [c for c in children if isinstance(c, dict)]
        return _Block("system", _parts(children), tools=tools, think="think" in children)

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", _parts(children))

    def model(self, children: list[Any]) -> _Block:
        items: list[Item] = []
        for child in children[2:]:
            if _is(child, "CONTENT", "AFTER_BARE") and items and isinstance(items[-1], str):
                items[-1] += str(child)
            elif _is(child, "CONTENT", "AFTER_BARE"):
                items.append(str(child))
            elif not isinstance(child, Token) and child != "open_thought":
                items.append(child)
        return _Block(
            "model",
            items=items,
            closed=any(_is(c, "TURN_CLOSE") for c in children),
            open_thought="open_thought" in children,
        )


def _is(child: Any, *terminals: str) -> bool:
    return isinstance(child, Token) and child.type in terminals


def _parts(children: list[Any]) -> list[str | MediaPart]:
    return [
        c if isinstance(c, MediaPart) else str(c) for c in children if isinstance(c, MediaPart) or _is(c, "CONTENT")
    ]


_SCALARS = {"TRUE": True, "FALSE": False, "NULL": None}


def _value(child: Any) -> Any:
    """A value of the syntax: a transformed string/object/array, or a scalar token (numbers as
    Python printed them: ``3``, ``2.5``, ``1e-05``, ``inf``)."""
    if not isinstance(child, Token):
        return child
    if child.type == "NUMBER":
        return int(child) if re.fullmatch(r"-?\d+", child) else float(child)
    return _SCALARS[child.type]


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Gemma 4 prompt tree."""
    blocks = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    header = blocks.pop(0) if blocks and blocks[0].kind == "system" else None
    thinking = header is not None and header.think
    tools = header.tools if header is not None else []
    messages: list[AnyMessage] = []
    if header is not None and _system_message_shown(header, blocks):
        messages.append(SystemMessage(content=header_content("".join(map(str, header.parts)))))
    turn_prompt = bool(blocks) and _turn_prompt(blocks[-1])
    if turn_prompt:
        blocks = blocks[:-1]
    for index, block in enumerate(blocks):
        messages += _block_messages(block, thinking, plain_last=turn_prompt and index == len(blocks) - 1)
    generation = turn_prompt or any(block.open_thought for block in blocks)
    options: dict[str, Any] = {"enable_thinking": True} if thinking else {}
    if _history_reasoning_shown(blocks):
        options["preserve_thinking"] = True
    return Conversation(messages=tuple(messages), tools=tuple(tools), options=options, add_generation_prompt=generation)


def _system_message_shown(header: _Block, blocks: list[_Block]) -> bool:
    """An empty system text is a system message unless thinking or tools opened the turn anyway
    — or the next turn is a system message's (only the first one is written here)."""
    return bool(header.parts) or not (header.think or header.tools) or (bool(blocks) and blocks[0].kind == "system")


def header_content(text: str) -> Content:
    """The first system message from its text: a string is trimmed, while a list of text parts
    is written ``part | trim + ' '`` each — so text ending in a space came from parts."""
    if not text.endswith(" "):
        return text
    body = text[:-1]
    core = body.strip(" ")
    if not core:
        return tuple(TextPart(text="") for _ in text)
    lead, trail = len(body) - len(body.lstrip(" ")), len(body) - len(body.rstrip(" "))
    return tuple([TextPart(text="")] * lead + [TextPart(text=core)] + [TextPart(text="")] * trail)


def _turn_prompt(block: _Block) -> bool:
    """The generation prompt ``<|turn>model\\n`` (+ the empty thought channel): a last model
    turn with nothing else and no close (the other generation prompt, an open thought channel
    after tool results, ends a model turn: ``open_thought``)."""
    return (
        block.kind == "model" and not block.closed and not block.open_thought and block.items in ([], [Channel(None)])
    )


def _history_reasoning_shown(blocks: list[_Block]) -> bool:
    """Reasoning shown before the last user turn: only ``preserve_thinking`` keeps it."""
    users = [i for i, b in enumerate(blocks) if b.kind == "user"]
    return any(
        isinstance(item, Channel) and item.text is not None
        for block in blocks[: users[-1] if users else 0]
        for item in block.items
    )


def _block_messages(block: _Block, thinking: bool, plain_last: bool) -> list[AnyMessage]:
    if block.kind == "user":
        return [UserMessage(content=content_of(block.parts))]
    if block.kind == "system":
        return [SystemMessage(content=content_of(block.parts))]
    return split_turn(block.items, thinking=thinking, closed=block.closed, plain_last=plain_last)
