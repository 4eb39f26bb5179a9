"""``Turn``: one prepared request — the prompt, its stop strings, and a parser bound to it.

A server renders a prompt and later parses what the model wrote after it. The parse must know
where the prompt left the model (inside ``<think>``, after a tool result in Gemma's open turn,
...), and that is a fact of the rendered prompt, not of options a caller passes twice. So
``Codec.prepare`` renders once and keeps the generation prompt it rendered: ``Turn.stream``,
``Turn.parse`` and ``Turn.chunks`` take no template options at all, and ``follow_up`` renders the
next turn with the same ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from codec import constrain
from codec.chunks import ChunkStream, ReasoningField, completion_dict
from codec.constrain import ToolChoice
from codec.engine.stream import StreamParser
from codec.errors import RenderError
from codec.limits import DEFAULT_LIMITS, Limits
from codec.models import AnyMessage, AssistantMessage, Conversation, ToolMessage, to_message

if TYPE_CHECKING:
    from codec.api import Codec


@dataclass(frozen=True)
class Turn:
    """A rendered prompt and everything needed to read the reply to it.

    Made by ``Codec.prepare(messages, tools=..., **options)``. ``prompt`` is the text to send
    to the engine, ``stop`` the strings to stop generation at. ``messages``, ``tools`` and
    ``options`` are what was rendered (messages validated into codec models).
    """

    codec: Codec
    messages: tuple[AnyMessage, ...]
    tools: tuple[dict[str, Any], ...] | None
    options: Mapping[str, Any]
    prompt: str
    generation_prompt: str  # the tail of ``prompt`` the template adds to ask for a reply
    now: datetime

    @property
    def stop(self) -> tuple[str, ...]:
        """The strings generation stops at: pass them to the engine as ``stop``."""
        return self.codec.stop_tokens

    def stream(
        self,
        *,
        strict: bool = False,
        id_factory: Callable[[int], str] | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> StreamParser:
        """A sans-IO parser for the reply to this prompt (``feed`` / ``close`` give events)."""
        return self.codec._parser(
            self.generation_prompt, tools=self.tools, strict=strict, id_factory=id_factory, limits=limits
        )

    def parse(
        self,
        completion: str,
        *,
        strict: bool = False,
        id_factory: Callable[[int], str] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        finish_reason: str | None = None,
    ) -> AssistantMessage:
        """The reply in ``completion``: exactly what ``stream().feed(completion)`` +
        ``close(finish_reason)`` gives (that parser's events are not made: nobody reads them).
        ``finish_reason``: the engine's, as for ``Codec.parse``."""
        parser = self.codec._parser(
            self.generation_prompt, tools=self.tools, strict=strict, id_factory=id_factory, limits=limits, events=False
        )
        parser.feed(completion)
        parser.close(finish_reason)
        return parser.message

    def chunk_stream(
        self,
        *,
        model: str,
        reasoning_field: ReasoningField = "reasoning_content",
        completion_id: str | None = None,
        created: int | None = None,
        id_factory: Callable[[int], str] | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> ChunkStream:
        """The incremental form of ``chunks``: ``feed(text)`` / ``close(...)`` give whole
        ``chat.completion.chunk`` dicts."""
        return ChunkStream(
            self.stream(id_factory=id_factory, limits=limits),
            model=model,
            reasoning_field=reasoning_field,
            completion_id=completion_id,
            created=created,
        )

    def chunks(
        self,
        pieces: Iterable[str],
        *,
        model: str,
        finish_reason: str | None = None,
        usage: Mapping[str, Any] | None = None,
        reasoning_field: ReasoningField = "reasoning_content",
        completion_id: str | None = None,
        created: int | None = None,
        id_factory: Callable[[int], str] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """The ``chat.completion.chunk`` dicts for the model's output, given piece by piece.

        ``finish_reason`` is the engine's (``"length"`` when it hit its token limit, ``"stop"``
        when the model ended the output) and ``usage`` its token counts, when known; the
        chunks' own ``finish_reason`` also says ``"length"`` when a call was not finished.
        """
        stream = self.chunk_stream(
            model=model,
            reasoning_field=reasoning_field,
            completion_id=completion_id,
            created=created,
            id_factory=id_factory,
        )
        for piece in pieces:
            yield from stream.feed(piece)
        yield from stream.close(upstream_finish_reason=finish_reason, usage=usage)

    def completion(
        self,
        text: str,
        *,
        model: str,
        finish_reason: str | None = None,
        usage: Mapping[str, Any] | None = None,
        reasoning_field: ReasoningField = "reasoning_content",
        id_factory: Callable[[int], str] | None = None,
    ) -> dict[str, Any]:
        """The ``chat.completion`` dict for the whole output ``text``; ``finish_reason`` is the
        engine's, read as ``Codec.parse`` reads it."""
        message = self.parse(text, id_factory=id_factory, finish_reason=finish_reason)
        return completion_dict(
            message, model=model, upstream_finish_reason=finish_reason, usage=usage, reasoning_field=reasoning_field
        )

    def constraint(self, *, tool_choice: ToolChoice = "auto", parallel_tool_calls: bool = True) -> str:
        """The llguidance grammar for the reply to this prompt, with this turn's tools
        (``Codec.constraint``; it starts where the prompt left the model, history included)."""
        return constrain.build(
            self.codec,
            tools=self.tools,
            tool_choice=tool_choice,
            parallel_tool_calls=parallel_tool_calls,
            generation_prompt=self.generation_prompt,
        ).grammar

    def follow_up(self, reply: Any, tool_results: Mapping[str, Any] | Sequence[Any] = ()) -> Turn:
        """The next turn: this conversation, the model's ``reply`` (a parsed message, an OpenAI
        dict, or the raw completion text) and the tools' results, rendered with the same tools
        and options.

        ``tool_results`` maps call ids to results (a string is used as it is, anything else as
        JSON; one tool message per call, in call order), or is a list of tool messages.
        """
        message = self.parse(reply) if isinstance(reply, str) else to_message(reply, len(self.messages))
        results = _tool_messages(message, tool_results, len(self.messages) + 1)
        return self.codec.prepare(
            [*self.messages, message, *results], tools=self.tools, now=self.now, **dict(self.options)
        )


def _tool_messages(reply: AnyMessage, results: Mapping[str, Any] | Sequence[Any], first_index: int) -> list[AnyMessage]:
    if isinstance(results, str) or not isinstance(results, Mapping | Sequence):
        raise RenderError(
            f"follow_up(tool_results=...) takes a mapping of call ids to results or a list of tool "
            f"messages, got {type(results).__name__}"
        )
    if not isinstance(results, Mapping):
        return [to_message(result, first_index + i) for i, result in enumerate(results)]
    if not results:
        return []
    paired = Conversation(messages=(reply,)).with_tool_results(results)
    return [message for message in paired.messages[1:] if isinstance(message, ToolMessage)]
