"""What the Kimi K2.5 template writes of a message (``templates/kimi_k2_5.jinja``): its content
(``render_content``), the header's name, a tool result's head, and which turns keep their thought.
``canonical`` and ``prompt`` share these, so what one writes the other reads."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from codec._resources import read_text
from codec.formats._prompt import content_of, media
from codec.models import AnyMessage, AssistantMessage, Content, ContentPart, MediaPart, TextPart
from codec.render.environment import template_variables

# ``{% if content['type'] == 'image' or content['type'] == 'image_url' -%}`` /
# ``{% elif content['type'] == 'video' or content['type']== 'video_url'-%}``; any other part is
# written as ``{{ content['text'] }}``, which an audio part lacks: it is written as nothing.
_KINDS = {"image": "image", "image_url": "image", "video": "video", "video_url": "video"}

# ``## Return of {{ tool_call_id }}`` + a new line + the content.
RESULT_HEAD = "## Return of "
RESULT_BREAK = "\n"
# ``<|im_system|>tool_declare<|im_middle|>{{ tools | tojson(separators=(',', ':')) }}<|im_end|>``
TOOLS_NAME = "tool_declare"


def written(content: Content | None) -> list[str | MediaPart]:
    """The pieces ``render_content`` writes: text, and a bare part per placeholder."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    return [_piece(part) for part in content]


def _piece(part: ContentPart) -> str | MediaPart:
    if isinstance(part, TextPart):
        return part.text
    kind = _KINDS.get(part.type)
    return media(kind) if kind else ""


def as_written(content: Content | None) -> Content:
    """Content as it reads back: text joined, media as bare placeholders, a list without media
    as its text."""
    return content_of(written(content))


def header(name: str | None, role: str) -> str:
    """The header's name: ``{%- set role_name = message.get('name') or message['role'] -%}``."""
    return name or role


def result_parts(pieces: Sequence[str | MediaPart]) -> tuple[str, list[str | MediaPart]] | None:
    """The id and content of a system block's text that reads as a tool result (``## Return of
    ID`` and a new line first), or ``None``."""
    if not pieces or not isinstance(pieces[0], str):
        return None
    first = pieces[0]
    if not first.startswith(RESULT_HEAD) or RESULT_BREAK not in first:
        return None
    written_id, rest = first[len(RESULT_HEAD) :].split(RESULT_BREAK, 1)
    return written_id, [rest, *pieces[1:]]


def last_answer(messages: Sequence[AnyMessage]) -> int:
    """The index of the last assistant message without calls (``-1``: none): the turns up to it
    are history, written with an empty thought.

    ``{%- if messages[idx]['role'] == 'assistant' and not messages[idx].get('tool_calls') -%}``
    """
    found = (i for i in reversed(range(len(messages))) if _answer(messages[i]))
    return next(found, -1)


def _answer(message: AnyMessage) -> bool:
    return isinstance(message, AssistantMessage) and not message.tool_calls


@cache
def reads(template: str, variable: str) -> bool:
    """Whether the bundled ``template`` reads ``variable`` (Kimi K2.6's reads
    ``preserve_thinking``, K2.5's does not)."""
    return variable in template_variables(read_text("templates", template), True)


TOOLS_TEXT = "tools_ts_str"
"""The option whose text the template writes in place of the tools' JSON."""
HIDDEN_TOOLS: dict[str, Any] = {"declared_in": TOOLS_TEXT}
"""What stands for tools the prompt declares only as ``tools_ts_str`` text (they are not written)."""


def tools_json(tools: Sequence[Mapping[str, Any]]) -> str:
    """The tools as written: ``{{ tools | tojson(separators=(',', ':')) }}``."""
    return json.dumps(list(tools), ensure_ascii=False, separators=(",", ":"))


def declared(text: str) -> tuple[list[dict[str, Any]], str | None]:
    """The tools and ``tools_ts_str`` a tools block's text reads as: its tools where it is their
    JSON as the template writes it, else the stand-in and the text."""
    try:
        tools = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        tools = None
    if isinstance(tools, list) and tools and all(isinstance(t, dict) for t in tools) and tools_json(tools) == text:
        return tools, None
    return [dict(HIDDEN_TOOLS)], text
