"""Message keys real clients send that chat templates have no place for, and llama.cpp's
``tool_responses``: what ``codec.models`` makes of them before validation (docs/input.md).

openai's SDK dumps every assistant turn with all its fields, most of them null::

    {"role": "assistant", "content": "hi", "refusal": null, "annotations": null,
     "audio": null, "function_call": null, "tool_calls": null}

Null (or an empty list) means nothing was said, so the key is dropped. A value would be lost
by every template, so it is refused, naming the key, rather than dropped in silence.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from codec._nesting import unwritable

# What to do instead, for each key an assistant message may carry but no template prints.
_UNPRINTABLE = {
    "refusal": "put the refusal text in content",
    "annotations": "leave them out",
    "audio": "send the transcript as content",
    "function_call": "send it as tool_calls",
    "name": "leave it out",
}


def without_unprintable(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without the empty keys of ``_UNPRINTABLE``; ``ValueError`` naming one that is set."""
    kept = dict(data)
    for key, advice in _UNPRINTABLE.items():
        value = kept.pop(key, None)
        if value is not None and value != []:
            raise ValueError(
                f"{key!r} is set, but an assistant message's {key} has no place in a chat template "
                f"and would be lost; {advice}, or send it as null"
            )
    return kept


def with_responses_content(data: Mapping[str, Any]) -> dict[str, Any]:
    """A tool message's dict with ``content`` (and ``name``) made from its ``tool_responses``
    where missing (see ``ToolMessage``); ``ValueError`` for responses of the wrong shape."""
    responses = data["tool_responses"]
    if isinstance(responses, (str, bytes, Mapping)) or not isinstance(responses, Iterable):
        raise ValueError("tool_responses must be a list of {'name': ..., 'response': ...} objects")
    entries = [_entry(number, entry) for number, entry in enumerate(responses)]
    message = {**data, "tool_responses": entries}
    if message.get("content") is None:
        message["content"] = _responses_text(entries)
    if message.get("name") is None and len(entries) == 1 and isinstance(entries[0].get("name"), str):
        message["name"] = entries[0]["name"]
    return message


def _entry(number: int, entry: Any) -> dict[str, Any]:
    if not isinstance(entry, Mapping) or "response" not in entry:
        raise ValueError(f"tool_responses[{number}] must be an object with a 'response' key")
    problem = unwritable(entry)  # json.dumps and templates would fail on it
    if problem is not None:
        raise ValueError(f"tool_responses[{number}] {problem}")
    return dict(entry)


def _responses_text(entries: list[dict[str, Any]]) -> str:
    """One response's ``response`` (a string as it is, else JSON), or all entries as a JSON array."""
    value = entries[0]["response"] if len(entries) == 1 else entries
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as error:  # a set, a date, a cycle: not JSON
        raise ValueError(f"tool_responses are not JSON ({error}); give content, or JSON values") from None
