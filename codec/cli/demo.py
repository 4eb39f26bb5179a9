"""``codec demo``: one agent conversation through every format, end to end.

For each format: render the conversation (a travel assistant that has already called two tools
and answered, then gets a new request), stream a completion written in the format's own syntax
through ``Codec.stream`` in 7-character chunks, show the events and the parsed message, then
render the follow-up turn (the parsed reply plus the tools' results). Everything is fixed — the
date, the completions, the call ids — so the output is the same on every run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

import codec
from codec.formats import DemoCase
from codec.formats._demo_scenario import NOW, TOOL_RESULTS, TOOLS

CHUNK = 7


def run(out: TextIO, names: Sequence[str] | None = None) -> None:
    """Print the demo for ``names`` (default: every format) to ``out``."""
    for name in names or codec.formats():
        fmt = codec.load(name)
        show(out, fmt, fmt.spec.demo)


def show(out: TextIO, fmt: codec.Codec, case: DemoCase) -> None:
    """The demo for one format: prompt, streamed completion, parsed reply, follow-up turn."""
    _rule(out, f"{fmt.name}: {case.title}", "=")
    prompt = fmt.render(case.messages, tools=TOOLS, now=NOW, **case.options)
    _section(out, f"prompt ({len(prompt)} characters)", prompt)
    if not case.completion:
        return
    reply = _stream(out, fmt, case)
    _section(
        out,
        "parsed message (AssistantMessage.to_openai())",
        json.dumps(reply.to_openai(), ensure_ascii=False, indent=2),
    )
    history = [*case.messages, *_as_messages(fmt, reply), *_results(reply)]
    follow_up = fmt.render(history, tools=TOOLS, now=NOW, **case.options)
    same = _common_prefix(prompt, follow_up)
    _section(
        out,
        f"follow-up prompt after the tools ran (from character {same}; the first ones are as above)",
        follow_up[same:],
    )
    out.write("\n")


def _stream(out: TextIO, fmt: codec.Codec, case: DemoCase) -> codec.AssistantMessage:
    length = fmt.spec.call_id_length  # ids of the length the template requires (Mistral v0.3's nine)
    parser = fmt.stream(
        tools=TOOLS, id_factory=lambda i: f"call_{i}" if length is None else f"call{i:0{length - 4}d}", **case.options
    )
    text = case.completion
    events: list[codec.Event] = []
    for start in range(0, len(text), CHUNK):
        events += parser.feed(text[start : start + CHUNK])
    events += parser.close()
    chunks = -(-len(text) // CHUNK)
    _rule(out, f"completion streamed in {chunks} chunks of {CHUNK} characters -> {len(events)} events")
    for line in _compact(events):
        out.write(f"  {line}\n")
    for found in parser.diagnostics:
        out.write(f"  repaired {found.code} at offset {found.offset}: {found.message}\n")
    return parser.message


def _compact(events: list[codec.Event]) -> list[str]:
    """One line per run of same-kind deltas (their text joined), one per call start and end."""
    lines: list[str] = []
    run_key: tuple[str, int] | None = None
    text, count = "", 0
    for event in [*events, None]:
        key = _delta_key(event)
        if key != run_key and run_key is not None:
            kind, index = run_key
            label = kind if index < 0 else f"{kind}[{index}]"
            lines.append(f"{label} x{count}: {_clip(text)}")
            text, count = "", 0
        run_key = key
        if key is not None:
            text += _delta_text(event)
            count += 1
        elif isinstance(event, codec.ToolCallStart):
            lines.append(f"ToolCallStart[{event.index}]: {event.name} (id {event.id})")
        elif isinstance(event, codec.ToolCallEnd):
            call = event.call
            lines.append(f"ToolCallEnd[{event.index}]: {call.name}({call.arguments_json})")
    return lines


def _delta_key(event: codec.Event | None) -> tuple[str, int] | None:
    if isinstance(event, codec.ToolCallDelta):
        return ("ToolCallDelta", event.index)
    if isinstance(event, (codec.ReasoningDelta, codec.ContentDelta)):
        return (type(event).__name__, -1)
    return None


def _delta_text(event: codec.Event | None) -> str:
    if isinstance(event, codec.ToolCallDelta):
        return event.arguments
    return event.text if isinstance(event, (codec.ReasoningDelta, codec.ContentDelta)) else ""


def _clip(text: str, limit: int = 72) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else f"{shown[: limit - 20]} ... {shown[-15:]}"


def _as_messages(fmt: codec.Codec, reply: codec.AssistantMessage) -> list[dict[str, Any]]:
    """The reply as the messages its template writes: one, or where the template writes at most
    ``calls_per_message`` calls of a message (gpt-oss's, one), a message per that many calls, the
    first with the reply's text and reasoning."""
    message = reply.to_openai()
    per = fmt.spec.calls_per_message
    calls = message.get("tool_calls") or []
    if per is None or len(calls) <= per:
        return [message]
    groups = [calls[i : i + per] for i in range(0, len(calls), per)]
    return [{**message, "tool_calls": groups[0]}, *({"role": "assistant", "tool_calls": g} for g in groups[1:])]


def _results(reply: codec.AssistantMessage) -> list[dict[str, Any]]:
    """What the host sends back after running the reply's calls."""
    return [
        {
            "role": "tool",
            "tool_call_id": call.id,
            "name": call.name,
            "content": TOOL_RESULTS.get(call.name, '{"error": "unknown tool"}'),
        }
        for call in reply.tool_calls
    ]


def _common_prefix(a: str, b: str) -> int:
    pairs = enumerate(zip(a, b, strict=False))
    return next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))


def _rule(out: TextIO, title: str, char: str = "-") -> None:
    out.write(f"{char * 3} {title} {char * max(3, 96 - len(title))}\n")


def _section(out: TextIO, title: str, body: str) -> None:
    _rule(out, title)
    out.write(body if body.endswith("\n") else body + "\n")
