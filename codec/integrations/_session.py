"""One request's codec parser, shared by an engine's reasoning parser and tool parser.

Engines split parsing in two: a reasoning parser sees the output until reasoning ends, a tool
parser sees the rest. ``codec`` parses both parts with one grammar, so both halves of a request
feed one ``Session``: whichever the engine calls feeds it the engine's text, and each takes the
events that are its own (``take_reasoning``, ``take``). Nothing here imports an engine.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from codec.api import Codec
from codec.engine.stream import StreamParser
from codec.errors import CodecError
from codec.events import ContentDelta, Event, ReasoningDelta, ToolCallDelta, ToolCallStart
from codec.models import AssistantMessage

logger = logging.getLogger(__name__)

PREFIX = "codec-"  # the engines' parser names: codec-<format>


@dataclass(slots=True)
class CallPart:
    """One call's piece of a delta: ``id`` and ``name`` when the call begins in it."""

    index: int
    arguments: str = ""
    id: str | None = None
    name: str | None = None


@dataclass(slots=True)
class Delta:
    """What a span of events adds to the reply, folded as a client folds it."""

    reasoning: str = ""
    content: str = ""
    calls: list[CallPart] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.reasoning or self.content or self.calls)

    def add(self, event: Event) -> None:
        """Fold ``event`` in; argument fragments of the call last begun join its part."""
        if isinstance(event, ReasoningDelta):
            self.reasoning += event.text
        elif isinstance(event, ContentDelta):
            self.content += event.text
        elif isinstance(event, ToolCallStart):
            self.calls.append(CallPart(event.index, id=event.id, name=event.name))
        elif isinstance(event, ToolCallDelta) and event.arguments:
            if not self.calls or self.calls[-1].index != event.index:
                self.calls.append(CallPart(event.index))
            self.calls[-1].arguments += event.arguments


def fold(events: Sequence[Event]) -> Delta:
    """The ``Delta`` of ``events``."""
    delta = Delta()
    for event in events:
        delta.add(event)
    return delta


def text_of(message: AssistantMessage) -> str | None:
    """The reply's content as text: a parsed reply's content is text or ``None``, never parts."""
    return message.content if isinstance(message.content, str) else None


def template_options(fmt: Codec, chat_template_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The request's template variables that are options of ``fmt`` (engines send others too)."""
    return {name: value for name, value in (chat_template_kwargs or {}).items() if name in fmt.options}


def tool_dicts(tools: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    """Engine tool objects (pydantic models or dicts) as OpenAI tool dicts, ``None`` for none."""
    if not tools:
        return None
    dumped = (tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else dict(tool) for tool in tools)
    return [tool for tool in dumped if isinstance(tool.get("function"), dict)] or None


class Session:
    """The codec parser of one request and the events its two engine parsers have not taken.

    The parser is made at the first ``feed``: by then the engine may have said which prompt the
    output follows (``prompt``), which tells the parser where generation began better than the
    options do (Gemma 4 goes on in the same turn after a tool result).
    """

    def __init__(self, fmt: Codec, tools: Sequence[Any] | None, options: Mapping[str, Any]) -> None:
        self.fmt = fmt
        self.tools = tool_dicts(tools)
        self.options = dict(options)
        self.prompt: str | None = None
        self.reasoning_over = False
        self._parser: StreamParser | None = None
        self._queue: list[Event] = []
        self._closed = False
        self._whole: AssistantMessage | None = None

    def feed(self, text: str) -> None:
        """Parse ``text``; its events wait for ``take_reasoning`` or ``take``."""
        if text and not self._closed:
            self._queue.extend(self._stream().feed(text))

    def close(self) -> None:
        """End the output. The engines do not say why it ended, so the parser is closed as
        ``close()`` with no reason closes it: a call whose closing marker is missing stays apart."""
        if not self._closed:
            self._closed = True
            self._queue.extend(self._stream().close())

    def take_reasoning(self) -> str:
        """The reasoning at the head of the waiting events; once anything else heads them,
        reasoning is over (``reasoning_over``) and the rest is left for ``take``."""
        taken = 0
        text = []
        for event in self._queue:
            if not isinstance(event, ReasoningDelta):
                self.reasoning_over = True
                break
            text.append(event.text)
            taken += 1
        del self._queue[:taken]
        return "".join(text)

    def take(self) -> Delta:
        """Every waiting event, folded."""
        events, self._queue = self._queue, []
        return fold(events)

    def parse(self, text: str) -> AssistantMessage:
        """The whole reply in ``text``, parsed once however many of the two parsers ask."""
        if self._whole is None:
            parser = self._stream()
            parser.feed(text)
            parser.close()
            self._whole = parser.message
        return self._whole

    def _stream(self) -> StreamParser:
        if self._parser is None:
            self._parser = self._new_parser()
        return self._parser

    def _new_parser(self) -> StreamParser:
        if self.prompt is not None:
            try:
                return self.fmt.stream(prompt=self.prompt, tools=self.tools)
            except CodecError as error:
                # A prompt the tokenizer did not decode to the template's text: the options
                # still say where generation begins, if less exactly.
                logger.warning("codec: %s; parsing from the options' generation prompt", error)
        return self.fmt.stream(tools=self.tools, unknown_options="ignore", **self.options)


def reasoning_opens(fmt: Codec, options: Mapping[str, Any]) -> bool:
    """Whether the generation prompt leaves the model inside its reasoning: text it writes
    first is reasoning (GLM's prompt ends in ``<think>``; Qwen3 with thinking off pre-fills an
    empty thought)."""
    parser = fmt.stream(unknown_options="ignore", **options)
    events = parser.feed("x")
    events += parser.close()
    return bool(events) and isinstance(events[0], ReasoningDelta)
