"""How the Qwen3.5 template writes a message's content (``render_content`` in
``templates/qwen3_5.jinja``): text parts as they are, each image or video as its placeholder
(after its number with ``add_vision_id``), the whole then trimmed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from codec.formats._prompt import content_of, media
from codec.models import AnyMessage, Content, ContentPart, MediaPart, TextPart

# ``{%- if 'image' in item or 'image_url' in item or item.type == 'image' %}`` /
# ``{%- elif 'video' in item or item.type == 'video' %}``: any other media part fails the template.
_KINDS = {"image": "image", "image_url": "image", "video": "video"}
_NUMBERED = {"image": "Picture", "video": "Video"}


def kind(part: ContentPart) -> str | None:
    """``image`` or ``video`` for a part the template writes as that placeholder."""
    return _KINDS.get(part.type) if isinstance(part, MediaPart) else None


def placeholders(content: Sequence[ContentPart]) -> tuple[ContentPart, ...]:
    """Each image or video part as a bare placeholder part."""
    return tuple(media(found) if (found := kind(part)) else part for part in content)


def trimmed(content: Content) -> Content:
    """``|trim`` of the written content: white space off both ends, across text parts."""
    if isinstance(content, str):
        return content.strip()
    parts: list[str | MediaPart] = [p.text if isinstance(p, TextPart) else p for p in content]
    parts = _stripped(parts, 0, str.lstrip)
    parts.reverse()
    parts = _stripped(parts, 0, str.rstrip)
    parts.reverse()
    return content_of(parts)


def _stripped(parts: list[str | MediaPart], at: int, strip: Any) -> list[str | MediaPart]:
    """Strip text from the front until something is left or a media part comes."""
    while at < len(parts) and isinstance(parts[at], str):
        parts[at] = strip(parts[at])
        if parts[at]:
            break
        at += 1
    return parts


def flat(content: Content) -> str:
    """The content's text with a character no text holds for each media part."""
    if isinstance(content, str):
        return content
    return "".join(p.text if isinstance(p, TextPart) else "\0" for p in content)


def vision_ids(messages: list[AnyMessage]) -> None:
    """Writes ``Picture N: `` / ``Video N: `` before each image or video, counted in order."""
    counts = {"image": 0, "video": 0}
    for index, message in enumerate(messages):
        if not isinstance(message.content, tuple):
            continue
        parts: list[ContentPart] = []
        for part in message.content:
            if (found := kind(part)) is not None:
                counts[found] += 1
                parts.append(TextPart(text=f"{_NUMBERED[found]} {counts[found]}: "))
            parts.append(part)
        messages[index] = message.model_copy(update={"content": tuple(parts)})
