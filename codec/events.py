"""Streaming events and their OpenAI ``delta`` form.

A ``StreamParser`` turns model output into these, in order. For one tool call the sequence is
``ToolCallStart`` (as soon as the name is complete), any number of ``ToolCallDelta`` whose
``arguments`` fragments concatenate to exactly ``call.arguments_json``, then ``ToolCallEnd``.
``index`` is the call's position in the message (0, 1, 2, ...), never the tool's position in the
tool list, so parallel calls to one tool stay apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from codec.models import ToolCall


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """More hidden reasoning text."""

    text: str


@dataclass(frozen=True, slots=True)
class ContentDelta:
    """More visible answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call began; its name is complete."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of the call's arguments JSON text."""

    index: int
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """The call ended; ``call`` holds the typed arguments. ``complete`` is false when the output
    was cut off inside the call: ``call`` is then what arrived, and it is not a call to run (the
    final message keeps it as ``truncated_call``, not in ``tool_calls``)."""

    index: int
    call: ToolCall
    complete: bool = True


Event = ReasoningDelta | ContentDelta | ToolCallStart | ToolCallDelta | ToolCallEnd


class Unread(list[Event]):
    """Where the events of a parse nobody streams go (``Codec.parse``): nowhere."""

    def append(self, event: Event) -> None:
        return None


def openai_delta(event: Event) -> dict[str, Any]:
    """The ``choices[0].delta`` dict of an OpenAI streaming chunk for ``event``.

    ``ToolCallEnd`` adds nothing to the wire (OpenAI has no end-of-call delta): it gives ``{}``.
    """
    if isinstance(event, ReasoningDelta):
        return {"reasoning_content": event.text}
    if isinstance(event, ContentDelta):
        return {"content": event.text}
    if isinstance(event, ToolCallStart):
        return {
            "tool_calls": [
                {
                    "index": event.index,
                    "id": event.id,
                    "type": "function",
                    "function": {"name": event.name, "arguments": ""},
                }
            ]
        }
    if isinstance(event, ToolCallDelta):
        return {"tool_calls": [{"index": event.index, "function": {"arguments": event.arguments}}]}
    return {}
