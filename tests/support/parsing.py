"""Helpers shared by the parse tests: loading goldens, feeding in chunks, folding events."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from typing import Any

import codec
from codec.engine.grammar import COMPLETION_START, compiled
from codec.events import ContentDelta, Event, ReasoningDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from codec.registry import FORMATS
from support import goldens

TOOLS: list[dict[str, Any]] = json.loads((goldens.ROOT / "parse" / "tools.json").read_text(encoding="utf-8"))


def golden_cases() -> list[tuple[str, str]]:
    """``(case, format)`` for every golden completion; each file's format comes from the registry."""
    return goldens.entries("parse")


def load_golden(case: str, fmt: str) -> tuple[str, dict[str, Any]]:
    """The completion text and its expectation."""
    completion = goldens.path("parse", case, fmt, "txt").read_text(encoding="utf-8")
    expected = json.loads(goldens.path("parse", case, fmt, "json").read_text(encoding="utf-8"))
    return completion, expected


def ids(index: int) -> str:
    """The deterministic id factory the goldens use."""
    return f"call_{index}"


def stream_chunks(
    fmt: str, chunks: Iterable[str], *, tools: list[dict[str, Any]] | None = None, **options: Any
) -> tuple[list[Event], codec.AssistantMessage, list[str]]:
    """Feed ``chunks`` one by one; the events, the final message and the diagnostic codes."""
    parser = codec.load(fmt).stream(tools=TOOLS if tools is None else tools, id_factory=ids, **options)
    events: list[Event] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.close()
    return events, parser.message, [d.code for d in parser.diagnostics]


def chunked(text: str, size: int) -> list[str]:
    """``text`` in pieces of ``size`` characters."""
    return [text[start : start + size] for start in range(0, len(text), size)]


def outcome(reply: codec.AssistantMessage) -> tuple[object, ...]:
    """What a reading decided, without the call ids (made up anew by each parser): the calls,
    the content and where each diagnostic is."""
    calls = [(call.name, call.arguments) for call in reply.tool_calls]
    return calls, reply.content, [(d.code, d.offset) for d in reply.diagnostics]


def is_json(text: str) -> bool:
    """Whether ``text`` is one JSON value."""
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def fold(events: list[Event]) -> dict[str, Any]:
    """Rebuild the OpenAI message a streaming client would hold from the events alone, checking
    the event protocol on the way (start before deltas, fragments join to the final JSON)."""
    content, reasoning = "", ""
    calls: dict[int, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, ContentDelta):
            content += event.text
        elif isinstance(event, ReasoningDelta):
            reasoning += event.text
        elif isinstance(event, ToolCallStart):
            assert event.index == len(calls), "calls are numbered in order of appearance"
            calls[event.index] = {"id": event.id, "name": event.name, "arguments": "", "ended": False}
        elif isinstance(event, ToolCallDelta):
            assert not calls[event.index]["ended"]
            calls[event.index]["arguments"] += event.arguments
        elif isinstance(event, ToolCallEnd):
            call = calls[event.index]
            if event.complete:
                assert call["arguments"] == event.call.arguments_json, "fragments join to the final JSON"
            else:  # an unfinished call's fragments never close its JSON: no client can run it
                assert not is_json(call["arguments"]), f"unfinished call streamed as JSON: {call['arguments']!r}"
                assert event.call.arguments_json.startswith(call["arguments"])
            assert (call["id"], call["name"]) == (event.call.id, event.call.name)
            call["ended"] = True
            call["complete"] = event.complete
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    assert all(call["ended"] for call in calls.values()), "every started call ends"
    finished = [c for c in calls.values() if c["complete"]]  # an unfinished call is not one to run
    if finished:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in finished
        ]
    return message


def how_it_ended(message: codec.AssistantMessage) -> dict[str, Any]:
    """What a parse says beyond the message: ``finish_reason`` and the cut-off call."""
    truncated = message.truncated_call
    return {
        "finish_reason": message.finish_reason,
        "truncated_call": None if truncated is None else truncated.to_openai(),
    }


def delta_signature(events: list[Event]) -> list[tuple[Any, ...]]:
    """The event sequence up to how text deltas are split: adjacent deltas of one kind merged."""
    merged: list[tuple[Any, ...]] = []
    for event in events:
        if isinstance(event, (ContentDelta, ReasoningDelta, ToolCallDelta)):
            kind = (type(event).__name__, getattr(event, "index", None))
            text = event.arguments if isinstance(event, ToolCallDelta) else event.text
            if merged and merged[-1][:2] == kind:
                merged[-1] = (*kind, merged[-1][2] + text)
                continue
            merged.append((*kind, text))
        else:
            merged.append((type(event).__name__, event))
    return merged


WORD = re.compile(r"[^\W\d_]{2,}")
"""A word, as the "no text lost" checks count them: a run of 2+ letters."""

_CHARACTER_CLASS = re.compile(r"\[[^\]]*\]")


@cache
def header_words(fmt: str) -> frozenset[str]:
    """The words of the fixed headers a completion may hold (Solar's ``assistant`` role, Gemma's
    ``model``, ``thought`` and ``call:``): the words of each non-marker terminal that the
    grammar's completion rule can reach (outside character classes), which the parser reads as
    structure where it expects them. Malformed variants (``BAD_*``) are left out: they are
    repairs, and repairs keep text."""
    grammar = compiled(FORMATS[fmt].grammar)
    expansions: dict[str, list[Any]] = {}
    for rule in grammar.parser.rules:
        expansions.setdefault(rule.origin.name, []).append(rule.expansion)
    reached, todo = set(), [COMPLETION_START]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += [symbol.name for expansion in expansions.get(name, []) for symbol in expansion]
    sources = {term.name: str(term.pattern.value) for term in grammar.parser.terminals}
    return frozenset(
        word
        for name in reached & set(grammar.patterns)
        if not name.startswith("BAD_")
        for word in WORD.findall(_CHARACTER_CLASS.sub(" ", sources[name]))
    )
