"""Whole OpenAI ``chat.completion.chunk`` dicts from a stream parser, and the final
``chat.completion``: the envelope a streaming endpoint sends, so that serving ``codec`` is a
loop over the model's text, not thirty lines of glue.

What the envelope decides, once, here:

- the first chunk carries ``{"role": "assistant", "content": ""}`` (what OpenAI sends);
- a chunk is sent only when its delta has something in it (``ToolCallEnd`` adds nothing to the
  wire, so it sends nothing), and the deltas of one ``feed`` are merged where OpenAI's
  clients would merge them anyway (text after text of one kind, arguments of one call);
- the last chunk carries ``finish_reason``: ``"length"`` when the engine stopped at its token
  limit or the output ended inside a structure (a cut-off call is never sent as finished),
  else ``"tool_calls"`` when there are calls, else ``"stop"``;
- ``usage``, when token counts are given, comes in a chunk of its own with no choices (as
  OpenAI sends it for ``stream_options={"include_usage": true}``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any, Literal

from codec.engine.stream import ENGINE_LENGTH, StreamParser
from codec.events import ContentDelta, Event, ReasoningDelta, ToolCallDelta, ToolCallStart
from codec.models import AssistantMessage, FinishReason, content_to_openai

ReasoningField = Literal["reasoning_content", "reasoning"]
REASONING_FIELDS: tuple[ReasoningField, ...] = ("reasoning_content", "reasoning")


def finish_reason(message: AssistantMessage, upstream: str | None = None) -> FinishReason:
    """How the reply ended, as OpenAI reports it: ``"length"`` when the engine says it stopped
    at its token limit or the parse found the output cut off inside a structure; otherwise
    ``"tool_calls"`` when the reply has calls, else ``"stop"``."""
    if upstream in ENGINE_LENGTH or message.finish_reason == "length":
        return "length"
    return "tool_calls" if message.tool_calls else "stop"


def usage_dict(usage: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """OpenAI's ``usage`` object from the engine's token counts (``total_tokens`` filled in when
    missing); ``None`` stays ``None``."""
    if usage is None:
        return None
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    return {
        **usage,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": int(usage.get("total_tokens") or prompt + completion),
    }


def message_dict(message: AssistantMessage, reasoning_field: ReasoningField = "reasoning_content") -> dict[str, Any]:
    """``choices[0].message`` of a ``chat.completion``: content (``None`` when the reply is only
    calls), the reasoning under ``reasoning_field``, and ``tool_calls`` when there are any. A
    call the output cut off is not among them (it was never finished, so it must not run)."""
    wire: dict[str, Any] = {"role": "assistant", "content": content_to_openai(message.content)}
    if message.reasoning is not None:
        wire[reasoning_field] = message.reasoning
    if message.tool_calls:
        wire["tool_calls"] = [call.to_openai() for call in message.tool_calls]
    return wire


def completion_dict(
    message: AssistantMessage,
    *,
    model: str,
    upstream_finish_reason: str | None = None,
    usage: Mapping[str, Any] | None = None,
    reasoning_field: ReasoningField = "reasoning_content",
    completion_id: str | None = None,
    created: int | None = None,
) -> dict[str, Any]:
    """The whole ``chat.completion`` dict for a parsed reply."""
    _check_reasoning_field(reasoning_field)
    body: dict[str, Any] = {
        "id": completion_id or new_completion_id(),
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message_dict(message, reasoning_field),
                "logprobs": None,
                "finish_reason": finish_reason(message, upstream_finish_reason),
            }
        ],
    }
    if usage is not None:
        body["usage"] = usage_dict(usage)
    return body


def new_completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


class ChunkStream:
    """The incremental form: ``feed(text)`` and ``close()`` give whole chunk dicts.

    Wraps one ``StreamParser`` (get one from ``Turn.chunk_stream``). After ``close``, ``message``
    is the final reply and ``completion()`` its ``chat.completion`` dict.
    """

    def __init__(
        self,
        parser: StreamParser,
        *,
        model: str,
        reasoning_field: ReasoningField = "reasoning_content",
        completion_id: str | None = None,
        created: int | None = None,
    ) -> None:
        _check_reasoning_field(reasoning_field)
        self._parser = parser
        self.model = model
        self.reasoning_field: ReasoningField = reasoning_field
        self.id = completion_id or new_completion_id()
        self.created = int(time.time()) if created is None else created
        self._started = False
        self._upstream_finish_reason: str | None = None
        self._usage: Mapping[str, Any] | None = None

    @property
    def message(self) -> AssistantMessage:
        """The reply so far (final after ``close``)."""
        return self._parser.message

    def feed(self, text: str) -> list[dict[str, Any]]:
        """The chunks for the next piece of model output (none while a marker is still
        ambiguous; the role chunk comes first, before any delta)."""
        return self._chunks(self._parser.feed(text))

    def close(
        self, *, upstream_finish_reason: str | None = None, usage: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """The last chunks: what the parser held back, the one carrying ``finish_reason``, and
        the ``usage`` chunk when ``usage`` (the engine's token counts) is given."""
        self._upstream_finish_reason = upstream_finish_reason
        self._usage = usage
        chunks = self._chunks(self._parser.close(upstream_finish_reason))
        reason = finish_reason(self._parser.message, upstream_finish_reason)
        chunks.append(self._chunk({}, reason))
        if usage is not None:
            chunks.append({**self._envelope(), "choices": [], "usage": usage_dict(usage)})
        return chunks

    def completion(self) -> dict[str, Any]:
        """The final reply as a ``chat.completion`` dict (same id, model and usage)."""
        return completion_dict(
            self._parser.message,
            model=self.model,
            upstream_finish_reason=self._upstream_finish_reason,
            usage=self._usage,
            reasoning_field=self.reasoning_field,
            completion_id=self.id,
            created=self.created,
        )

    def _chunks(self, events: list[Event]) -> list[dict[str, Any]]:
        chunks = []
        if not self._started:
            self._started = True
            chunks.append(self._chunk({"role": "assistant", "content": ""}))
        chunks.extend(self._chunk(delta) for delta in merged_deltas(events, self.reasoning_field))
        return chunks

    def _envelope(self) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model}

    def _chunk(self, delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
        return {**self._envelope(), "choices": [choice]}


def merged_deltas(events: list[Event], reasoning_field: ReasoningField = "reasoning_content") -> list[dict[str, Any]]:
    """The ``delta`` dicts for ``events``, none empty: text after text of the same kind and
    argument fragments of the same call are joined (into the call's first delta too, which
    carries its id and name), so a client sees one delta where the parser made several in one
    ``feed``. A new call always begins a delta of its own."""
    deltas: list[dict[str, Any]] = []
    for event in events:
        delta = _delta(event, reasoning_field)
        if delta is None:
            continue
        last = deltas[-1] if deltas else None
        if last is not None and _join(last, delta):
            continue
        deltas.append(delta)
    return deltas


def _delta(event: Event, reasoning_field: ReasoningField) -> dict[str, Any] | None:
    if isinstance(event, ReasoningDelta):
        return {reasoning_field: event.text} if event.text else None
    if isinstance(event, ContentDelta):
        return {"content": event.text} if event.text else None
    if isinstance(event, ToolCallStart):
        function = {"name": event.name, "arguments": ""}
        return {"tool_calls": [{"index": event.index, "id": event.id, "type": "function", "function": function}]}
    if isinstance(event, ToolCallDelta):
        if not event.arguments:
            return None
        return {"tool_calls": [{"index": event.index, "function": {"arguments": event.arguments}}]}
    return None  # ToolCallEnd: OpenAI has no end-of-call delta


def _join(last: dict[str, Any], delta: dict[str, Any]) -> bool:
    """Append ``delta`` to ``last`` when they are the same kind; whether it did."""
    (key,) = delta
    if set(last) != {key}:
        return False
    if key != "tool_calls":
        last[key] += delta[key]
        return True
    before, after = last[key][0], delta[key][0]
    if before["index"] != after["index"] or "id" in after:
        return False
    before["function"]["arguments"] += after["function"]["arguments"]
    return True


def _check_reasoning_field(name: str) -> None:
    if name not in REASONING_FIELDS:
        raise ValueError(f"reasoning_field must be one of {', '.join(REASONING_FIELDS)}, got {name!r}")
