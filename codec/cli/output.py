"""What the CLI prints: parsed replies and events as JSON, repairs as lines on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import codec
from codec.models import Diagnostic


def result_json(reply: codec.AssistantMessage) -> dict[str, Any]:
    """A parsed reply with how it ended: the message, ``finish_reason``, the cut-off call (if
    any, not to be run) and the repairs, each with its code, offset and message."""
    truncated = reply.truncated_call
    return {
        "message": reply.to_openai(),
        "finish_reason": reply.finish_reason,
        "truncated_call": None if truncated is None else truncated.to_openai(),
        "diagnostics": [{"code": d.code, "offset": d.offset, "message": d.message} for d in reply.diagnostics],
    }


def event_json(event: codec.Event) -> dict[str, Any]:
    """An event as one JSON object: its type, its fields, and its OpenAI ``delta``."""
    record: dict[str, Any] = {"event": type(event).__name__}
    for field in fields(event):
        value = getattr(event, field.name)
        record[field.name] = value.to_openai() if isinstance(value, codec.ToolCall) else value
    record["delta"] = codec.openai_delta(event)
    return record


def json_text(value: Any, indent: int | None = None) -> str:
    """``value`` as JSON with text kept as it is, unless it holds a lone surrogate (the model
    wrote ``"\\ud800"`` in a JSON argument): UTF-8 cannot carry one, so then every non-ASCII
    character is written as a ``\\u`` escape, which can."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, indent=indent)
    return text


def emit(events: list[codec.Event]) -> None:
    """One JSON line per event on stdout, flushed, so a pipe sees each as it is parsed."""
    for event in events:
        sys.stdout.write(json_text(event_json(event)) + "\n")
    if events:
        sys.stdout.flush()


def report(diagnostics: Sequence[Diagnostic], seen: int = 0) -> int:
    """Print the diagnostics after the first ``seen`` to stderr; how many there are now."""
    for diagnostic in diagnostics[seen:]:
        sys.stderr.write(f"codec: repaired {diagnostic.code} at offset {diagnostic.offset}: {diagnostic.message}\n")
    return len(diagnostics)
