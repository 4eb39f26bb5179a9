"""What every family's prompt reader shares (``codec/formats/<family>/prompt.py``).

``parse_prompt`` gets the Lark tree of a whole prompt from ``codec.engine.whole_prompt``; each
family's reader (a Lark ``Transformer`` with a small method per rule) turns it into a
``Conversation`` with these helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from lark import Token, Transformer

from codec.models import Content, ContentPart, MediaPart, TextPart


def text_of(children: Iterable[Any], *terminals: str) -> str:
    """The text of the children that are tokens of ``terminals``, joined (a run of free text
    arrives as several tokens)."""
    return "".join(str(c) for c in children if isinstance(c, Token) and c.type in terminals)


def content_of(parts: Sequence[str | MediaPart]) -> Content:
    """Content from text pieces and media placeholders: a string when there is no media,
    else a list of parts with adjacent text joined."""
    if all(isinstance(part, str) for part in parts):
        return "".join(str(part) for part in parts)
    merged: list[ContentPart] = []
    for part in parts:
        if part == "":
            continue  # an empty text part leaves nothing in the prompt
        if isinstance(part, str) and merged and isinstance(merged[-1], TextPart):
            merged[-1] = TextPart(text=merged[-1].text + part)
        elif isinstance(part, str):
            merged.append(TextPart(text=part))
        else:
            merged.append(part)
    return tuple(merged)


def media(kind: str) -> MediaPart:
    """A media placeholder part (the prompt shows only that there was one)."""
    return MediaPart(type=kind)  # type: ignore[arg-type]


class MediaRules(Transformer[Token, Any]):
    """The media rules every prompt grammar shares (``image``, ``audio``, ``video``): each is a
    placeholder part. A format's reader subclasses it with its own rules."""

    def image(self, _: list[Any]) -> MediaPart:
        return media("image")

    def audio(self, _: list[Any]) -> MediaPart:
        return media("audio")

    def video(self, _: list[Any]) -> MediaPart:
        return media("video")


def sequential_ids() -> Callable[[str], str]:
    """Ids for calls the format writes without one: ``call_0``, ``call_1``, ... in prompt order
    (``canonical`` numbers them the same way)."""
    counter = iter(range(1 << 62))
    return lambda _name: f"call_{next(counter)}"


def wrap_tool(function: Mapping[str, Any]) -> dict[str, Any]:
    """A tool in the OpenAI shape around a function declaration."""
    return {"type": "function", "function": dict(function)}
