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
``canonical_gemma4``). Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... and a
result takes the id of the call its printed name matches.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING

from lark import Token, Tree

from codec.models import (
    AnyMessage,
    AssistantMessage,
    Content,
    Conversation,
    MediaPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from codec.formats import RenderFn
from codec.formats._prompt import MediaRules, content_of, sequential_ids, text_of, wrap_tool

if TYPE_CHECKING:
    from codec.registry import FormatSpec

HIDDEN_REASONING = "(reasoning not shown)"
"""The reasoning of a history message that opens a model turn with thinking off, when the
template dropped it: only its absence shows (no empty thought channel), not its text."""


@dataclass(frozen=True)
class Channel:
    """A thought channel: its reasoning, or ``None`` for the empty one."""

    text: str | None


@dataclass(frozen=True)
class Response:
    """A tool result block: the tool name printed and the ``{…}`` body."""

    name: str
    value: Any


@dataclass(frozen=True)
class Bare:
    """A ``<|tool_response>`` with no result after it (a call whose result is missing)."""


Item = Channel | ToolCall | Response | Bare | str | MediaPart


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
        return wrap_tool(_function(text_of(children, "FUNC_NAME"), children[-2]))

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
        return _Block("model", items=items, closed=any(_is(c, "TURN_CLOSE") for c in children),
                      open_thought="open_thought" in children)


def _is(child: Any, *terminals: str) -> bool:
    return isinstance(child, Token) and child.type in terminals


def _parts(children: list[Any]) -> list[str | MediaPart]:
    return [c if isinstance(c, MediaPart) else str(c)
            for c in children if isinstance(c, MediaPart) or _is(c, "CONTENT")]


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
    return Conversation(messages=tuple(messages), tools=tuple(tools), options=options,
                        add_generation_prompt=generation)


def _system_message_shown(header: _Block, blocks: list[_Block]) -> bool:
    """An empty system text is a system message unless thinking or tools opened the turn anyway
    — or the next turn is a system message's (only the first one is written here)."""
    return bool(header.parts) or not (header.think or header.tools) or (
        bool(blocks) and blocks[0].kind == "system")


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
    return block.kind == "model" and not block.closed and not block.open_thought \
        and block.items in ([], [Channel(None)])


def _history_reasoning_shown(blocks: list[_Block]) -> bool:
    """Reasoning shown before the last user turn: only ``preserve_thinking`` keeps it."""
    users = [i for i, b in enumerate(blocks) if b.kind == "user"]
    return any(isinstance(item, Channel) and item.text is not None
               for block in blocks[: users[-1] if users else 0] for item in block.items)


def _block_messages(block: _Block, thinking: bool, plain_last: bool) -> list[AnyMessage]:
    if block.kind == "user":
        return [UserMessage(content=content_of(block.parts))]
    if block.kind == "system":
        return [SystemMessage(content=content_of(block.parts))]
    return split_turn(block.items, thinking=thinking, closed=block.closed, plain_last=plain_last)


@dataclass
class _Draft:
    exists: bool = True
    header: bool = False
    channel: bool = False
    reasoning: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    results: list[tuple[str, Any, list[MediaPart]]] = field(default_factory=list)
    parts: list[str | MediaPart] = field(default_factory=list)

    def used(self) -> bool:
        return self.channel or bool(self.calls or self.results or self.parts)


class _Turn:
    """Splits a model turn into messages. The template writes, per assistant message::

        [thought channel] calls [results] content, then <|tool_response> (calls without results),
        "\\n" (another assistant message follows) or <turn|>\\n (the last; none after results
        with no content)

    so a message starts at the turn, after a bare <|tool_response>, and at each "\\n" that cannot
    belong to trimmed content: at either end of a text run between markers.
    """

    def __init__(self) -> None:
        self.done: list[_Draft] = []
        self.current = _Draft(header=True)
        self._after_result = False

    def item(self, item: Item) -> None:
        after_result, self._after_result = self._after_result, isinstance(item, Response)
        if isinstance(item, Channel):
            self._fresh(self.current.used()).channel = True
            self.current.reasoning = item.text
        elif isinstance(item, ToolCall):
            self._fresh(bool(self.current.parts or self.current.results)).calls.append(item)
        elif isinstance(item, Response):
            self.current.results.append((item.name, item.value, []))
        elif isinstance(item, Bare):
            self._next(exists=False)
        elif isinstance(item, MediaPart) and after_result:
            self.current.results[-1][2].append(item)
            self._after_result = True
        elif isinstance(item, MediaPart):
            self.current.parts.append(item)
        else:
            self._text(item)

    def _fresh(self, needed: bool) -> _Draft:
        if needed:
            self._next(exists=True)
        return self.current

    def _next(self, exists: bool) -> None:
        self.done.append(self.current)
        self.current = _Draft(exists=exists)

    def _text(self, text: str) -> None:
        core = text.strip("\n")
        if not core:
            for _ in text:
                self._next(exists=True)
            return
        for _ in range(len(text) - len(text.lstrip("\n"))):
            self._next(exists=True)
        self.current.parts.append(core)
        for _ in range(len(text) - len(text.rstrip("\n"))):
            self._next(exists=True)

    def end(self, closed: bool, plain_last: bool) -> list[_Draft]:
        if plain_last and self.current.results:
            self._split_after_results()
        if closed and self.current.results and not self.current.parts:
            # <turn|> shows content (``has_content``): the placeholders after the last result
            # were the message's, not the result's.
            name, value, placeholders = self.current.results[-1]
            self.current.results[-1] = (name, value, [])
            self.current.parts = list(placeholders)
        if closed or self.current.exists or self.current.used():
            self.done.append(self.current)
        return self.done

    def _split_after_results(self) -> None:
        """A ``<|turn>model`` generation prompt follows, so the turn's last message has no
        results (``prev_message_type``): the text after them holds a separator; the first one
        between two lines is taken."""
        for index, part in enumerate(self.current.parts):
            found = re.search(r"(?<=\S)\n+(?=\S)", part) if isinstance(part, str) else None
            if found is not None:
                rest = self.current.parts[index + 1 :]
                self.current.parts[index:] = [found.string[: found.start()]]
                self._text(found.string[found.start() :])
                self.current.parts += rest
                return


def split_turn(items: Sequence[Item], *, thinking: bool, closed: bool, plain_last: bool) -> list[AnyMessage]:
    """The messages of one model turn (see ``_Turn``); ``closed``: it ends with ``<turn|>``."""
    turn = _Turn()
    for item in _joined(items):
        turn.item(item)
    messages: list[AnyMessage] = []
    for draft in turn.end(closed, plain_last):
        messages.append(_assistant(draft, thinking))
        messages += _results(draft)
    return messages


def _joined(items: Sequence[Item]) -> list[Item]:
    joined: list[Item] = []
    for item in items:
        if isinstance(item, str) and joined and isinstance(joined[-1], str):
            joined[-1] += item
        elif not isinstance(item, str) or item:
            joined.append(item)
    return joined


def _assistant(draft: _Draft, thinking: bool) -> AssistantMessage:
    reasoning = draft.reasoning
    if draft.header and not thinking and not draft.channel:
        reasoning = HIDDEN_REASONING  # not even the empty channel: the template dropped one
    return AssistantMessage(content=content_of(draft.parts) or None, reasoning=reasoning,
                            tool_calls=tuple(draft.calls))


def _results(draft: _Draft) -> list[ToolMessage]:
    """Results in order; each takes the id of the next unanswered call of the printed name
    (the template printed the name of the call whose id the result gave)."""
    answered: dict[str, int] = {}
    messages = []
    for name, value, placeholders in draft.results:
        calls = [call for call in draft.calls if call.name == name]
        index = answered[name] = answered.get(name, -1) + 1
        call_id, shown = (calls[index].id, None) if index < len(calls) else (None, name)
        messages.append(ToolMessage(content=result_content(value, placeholders),
                                    tool_call_id=call_id, name=shown))
    return messages


def result_content(value: Any, placeholders: Sequence[MediaPart]) -> Content:
    """A result's content: ``{value:<|"|>text<|"|>}`` is a string result (a mapping result
    reads as its JSON text), followed by the placeholders of its media parts."""
    if isinstance(value, dict) and list(value) == ["value"] and isinstance(value["value"], str):
        text = value["value"]
    else:
        text = json.dumps(value, ensure_ascii=False)
    return content_of(([text] if text else []) + list(placeholders))


def type_from_text(text: str) -> Any:
    """A schema ``type`` as the declaration prints it (``value['type'] | upper``), lower-cased;
    a list type prints as a Python list (``['STRING', 'NULL']``)."""
    if text.startswith("[") and text.endswith("]"):
        try:
            listed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            listed = None
        if isinstance(listed, list) and all(isinstance(kind, str) for kind in listed):
            return [kind.lower() for kind in listed]
    return text.lower()


def _function(name: str, declared: dict[str, Any]) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if declared.get("description"):
        function["description"] = declared["description"]
    if "parameters" in declared:
        function["parameters"] = _schema(declared["parameters"])
    if "response" in declared:
        function["response"] = _schema(declared["response"])
    return function


def _schema(declared: dict[str, Any]) -> dict[str, Any]:
    """A property (``format_parameters``): ``type`` lower-cased, nested ``properties`` and
    ``items`` read the same way, other keys as written."""
    schema = dict(declared)
    if "properties" in schema:
        schema["properties"] = {key: _schema(value) for key, value in schema["properties"].items()}
    if "items" in schema:
        schema["items"] = _items(schema["items"])
    if "type" in schema:
        kind = type_from_text(schema.pop("type"))
        if kind:
            schema["type"] = kind
    return schema


def _items(declared: dict[str, Any]) -> dict[str, Any]:
    """``items``: its ``properties`` as properties, its ``type`` written through
    ``format_argument`` (a string or a list of strings, upper-cased), the rest as values."""
    items = dict(declared)
    if isinstance(items.get("properties"), dict):
        items["properties"] = {key: _schema(value) for key, value in items["properties"].items()}
    kind = items.get("type")
    if isinstance(kind, str):
        items["type"] = kind.lower()
    elif isinstance(kind, list):
        items["type"] = [str(each).lower() for each in kind]
    return items
