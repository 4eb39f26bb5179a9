"""One Gemma 4 model turn and the messages in it, both ways.

A tool-call turn, its results and the next assistant message share one model turn (joined by
``\n``); the prompt reader splits such a turn back into messages here, and the canonical rules
use the same split to state what a rendered turn reads back as.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from codec.formats._prompt import content_of
from codec.models import AnyMessage, AssistantMessage, Content, MediaPart, ToolCall, ToolMessage

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
    return AssistantMessage(content=content_of(draft.parts) or None, reasoning=reasoning, tool_calls=tuple(draft.calls))


def _results(draft: _Draft) -> list[ToolMessage]:
    """Results in order; each takes the id of the next unanswered call of the printed name
    (the template printed the name of the call whose id the result gave)."""
    answered: dict[str, int] = {}
    messages = []
    for name, value, placeholders in draft.results:
        calls = [call for call in draft.calls if call.name == name]
        index = answered[name] = answered.get(name, -1) + 1
        call_id, shown = (calls[index].id, None) if index < len(calls) else (None, name)
        messages.append(ToolMessage(content=result_content(value, placeholders), tool_call_id=call_id, name=shown))
    return messages


def result_content(value: Any, placeholders: Sequence[MediaPart]) -> Content:
    """A result's content: ``{value:<|"|>text<|"|>}`` is a string result (a mapping result
    reads as its JSON text), followed by the placeholders of its media parts."""
    if isinstance(value, dict) and list(value) == ["value"] and isinstance(value["value"], str):
        text = value["value"]
    else:
        text = json.dumps(value, ensure_ascii=False)
    return content_of(([text] if text else []) + list(placeholders))
