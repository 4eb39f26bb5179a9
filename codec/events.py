"""Streaming events and their OpenAI ``delta`` form.

A ``StreamParser`` turns model output into these, in order. For one tool call the sequence is
``ToolCallStart`` (as soon as the name is complete), any number of ``ToolCallDelta`` whose
``arguments`` fragments concatenate to exactly ``call.arguments_json``, then ``ToolCallEnd``.
``index`` is the call's position in the message (0, 1, 2, ...), never the tool's position in the
tool list, so parallel calls to one tool stay apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codec.models import ToolCall

# The events made once per streamed chunk set their fields through the slots themselves: a
# frozen dataclass's own ``__init__`` goes through ``object.__setattr__`` per field, which costs
# a third of the event. They stay frozen (``FrozenInstanceError`` on assignment).


@dataclass(frozen=True, slots=True, init=False)
class ReasoningDelta:
    """More hidden reasoning text."""

    text: str

    def __init__(self, text: str) -> None:
        _set_reasoning_text(self, text)


@dataclass(frozen=True, slots=True, init=False)
class ContentDelta:
    """More visible answer text."""

    text: str

    def __init__(self, text: str) -> None:
        _set_content_text(self, text)


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call began; its name is complete."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True, init=False)
class ToolCallDelta:
    """A fragment of the call's arguments JSON text."""

    index: int
    arguments: str

    def __init__(self, index: int, arguments: str) -> None:
        _set_delta_index(self, index)
        _set_delta_arguments(self, arguments)


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """The call ended; ``call`` holds the typed arguments. ``complete`` is false when the output
    was cut off inside the call: ``call`` is then what arrived, and it is not a call to run (the
    final message keeps it as ``truncated_call``, not in ``tool_calls``)."""

    index: int
    call: ToolCall
    complete: bool = True


Event = ReasoningDelta | ContentDelta | ToolCallStart | ToolCallDelta | ToolCallEnd


def _slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The setter of the slot ``name`` of ``cls`` (its member descriptor's ``__set__``)."""
    setter: Callable[[Any, Any], None] = vars(cls)[name].__set__
    return setter


_set_reasoning_text = _slot_setter(ReasoningDelta, "text")
_set_content_text = _slot_setter(ContentDelta, "text")
_set_delta_index = _slot_setter(ToolCallDelta, "index")
_set_delta_arguments = _slot_setter(ToolCallDelta, "arguments")


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
