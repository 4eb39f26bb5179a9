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
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

import codec

NOW = datetime(2026, 1, 31, 9, 30)
CHUNK = 7


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Any:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }}


TOOLS = [
    _tool("get_weather", "Daily forecast for a city.", {
        "city": {"type": "string", "description": "City name, e.g. Lisbon"},
        "date": {"type": "string", "description": "Day as YYYY-MM-DD"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    }, ["city", "date"]),
    _tool("search_places", "Find restaurants, museums or shops in a city.", {
        "query": {"type": "string", "description": "What to look for"},
        "city": {"type": "string"},
        "open_after": {"type": "string",
                       "description": "Local time HH:MM the place must be open after"},
        "limit": {"type": "integer", "description": "At most this many results"},
    }, ["query", "city"]),
    _tool("convert_currency", "Convert an amount between currencies at today's rate.", {
        "amount": {"type": "number"},
        "from_currency": {"type": "string", "description": "ISO 4217 code"},
        "to_currency": {"type": "string", "description": "ISO 4217 code"},
    }, ["amount", "from_currency", "to_currency"]),
]

HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "You are Atlas, a concise travel assistant. Use the tools for "
                                  "facts; never guess the weather or exchange rates."},
    {"role": "user", "content": "I'm in Lisbon on 2026-02-02 and in Porto on 2026-02-03. "
                                "Will I need an umbrella?"},
    {"role": "assistant", "content": None,
     "reasoning_content": "Two cities on two dates: one forecast each. Celsius, since both are "
                          "in Portugal. The calls are independent, so make them together.",
     "tool_calls": [
         {"id": "k3m9x2p7qa", "type": "function", "function": {"name": "get_weather", "arguments":
             '{"city": "Lisbon", "date": "2026-02-02", "unit": "celsius"}'}},
         {"id": "b8v4n1c6zt", "type": "function", "function": {"name": "get_weather", "arguments":
             '{"city": "Porto", "date": "2026-02-03", "unit": "celsius"}'}},
     ]},
    {"role": "tool", "tool_call_id": "k3m9x2p7qa", "name": "get_weather",
     "content": '{"high": 16, "low": 10, "rain_probability": 0.2}'},
    {"role": "tool", "tool_call_id": "b8v4n1c6zt", "name": "get_weather",
     "content": '{"high": 13, "low": 8, "rain_probability": 0.85}'},
    {"role": "assistant", "content": "Lisbon on Monday looks dry: 16 °C and a 20% chance of rain. "
                                     "Pack the umbrella for Porto on Tuesday: 85% chance of rain, "
                                     "13 °C at most."},
    {"role": "user", "content": "Thanks! Find me two places in Porto for a late dinner, open "
                                "after 22:00, and tell me what 60 EUR is in dollars."},
]

TOOL_RESULTS = {
    "search_places": '[{"name": "Taberna do Barqueiro", "closes": "01:00"}, '
                     '{"name": "Cantinho do Avillez", "closes": "23:30"}]',
    "convert_currency": '{"amount": 65.1, "currency": "USD"}',
}

REASONING = (
    "The user wants two things: late-dinner places in Porto open after 22:00, and 60 EUR in "
    "US dollars. Both are independent, so I can call search_places and convert_currency in "
    "parallel. Two results are enough for dinner."
)
ANSWER = "I'll look up late dinner spots in Porto and convert your budget at the same time."


def _glm_arguments(**arguments: str) -> str:
    return "".join(f"<arg_key>{key}</arg_key><arg_value>{value}</arg_value>"
                   for key, value in arguments.items())


GLM_COMPLETION = (
    f"{REASONING}</think>{ANSWER}"
    "<tool_call>search_places"
    + _glm_arguments(query="late dinner restaurant", city="Porto", open_after="22:00", limit="2")
    + "</tool_call><tool_call>convert_currency"
    + _glm_arguments(amount="60", from_currency="EUR", to_currency="USD")
    + "</tool_call>"
)

SOLAR_COMPLETION = (
    f"<|think|>{REASONING}<|end|><|begin|>assistant<|tool_calls|>"
    "<|tool_call:begin|>q7w2e9r4t1<|tool_call:name|>search_places<|tool_call:args|>"
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}'
    "<|tool_call:end|>"
    "<|tool_call:begin|>z5x8c3v6b0<|tool_call:name|>convert_currency<|tool_call:args|>"
    '{"amount": 60, "from_currency": "EUR", "to_currency": "USD"}'
    "<|tool_call:end|><|calls|>"
)

# No text before the calls: the template would move it after the tool results and close the
# turn, where the model writes its calls, results and answer in one turn.
GEMMA_COMPLETION = (
    f"<|channel>thought\n{REASONING}\n<channel|>"
    '<|tool_call>call:search_places{city:<|"|>Porto<|"|>,limit:2,open_after:<|"|>22:00<|"|>,'
    'query:<|"|>late dinner restaurant<|"|>}<tool_call|>'
    '<|tool_call>call:convert_currency{amount:60,from_currency:<|"|>EUR<|"|>,'
    'to_currency:<|"|>USD<|"|>}<tool_call|>'
)


@dataclass(frozen=True)
class Case:
    """One format's part of the demo: what it is, its options, and a completion in its syntax."""

    title: str
    completion: str
    options: dict[str, Any] = field(default_factory=dict)


CASES = {
    "glm": Case("Z.ai GLM-5.3-Flash — the prompt ends inside <think>", GLM_COMPLETION),
    "glm-effort": Case("GLM-5.3 with reasoning-effort personas (reasoning_effort='low')",
                       GLM_COMPLETION, {"reasoning_effort": "low"}),
    "solar-open": Case("Upstage Solar Open 100B — the model writes the call ids", SOLAR_COMPLETION),
    "gemma4": Case("Google Gemma 4 -it (enable_thinking=True)", GEMMA_COMPLETION,
                   {"enable_thinking": True}),
}


def run(out: TextIO, names: Sequence[str] | None = None) -> None:
    """Print the demo for ``names`` (default: every format) to ``out``."""
    for name in names or codec.formats():
        fmt = codec.load(name)
        show(out, fmt, CASES.get(fmt.name, Case("(no demo completion for this format yet)", "")))


def show(out: TextIO, fmt: codec.Codec, case: Case) -> None:
    """The demo for one format: prompt, streamed completion, parsed reply, follow-up turn."""
    _rule(out, f"{fmt.name}: {case.title}", "=")
    prompt = fmt.render(HISTORY, tools=TOOLS, now=NOW, **case.options)
    _section(out, f"prompt ({len(prompt)} characters)", prompt)
    if not case.completion:
        return
    reply = _stream(out, fmt, case)
    _section(out, "parsed message (AssistantMessage.to_openai())",
             json.dumps(reply.to_openai(), ensure_ascii=False, indent=2))
    history = [*HISTORY, reply, *_results(reply)]
    follow_up = fmt.render(history, tools=TOOLS, now=NOW, **case.options)
    same = _common_prefix(prompt, follow_up)
    _section(out, f"follow-up prompt after the tools ran (from character {same}; "
                  "the first ones are as above)", follow_up[same:])
    out.write("\n")


def _stream(out: TextIO, fmt: codec.Codec, case: Case) -> codec.AssistantMessage:
    parser = fmt.stream(tools=TOOLS, id_factory=lambda i: f"call_{i}", **case.options)
    text = case.completion
    events: list[codec.Event] = []
    for start in range(0, len(text), CHUNK):
        events += parser.feed(text[start : start + CHUNK])
    events += parser.close()
    chunks = -(-len(text) // CHUNK)
    _rule(out, f"completion streamed in {chunks} chunks of {CHUNK} characters "
               f"-> {len(events)} events")
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


def _results(reply: codec.AssistantMessage) -> list[dict[str, Any]]:
    """What the host sends back after running the reply's calls."""
    return [
        {"role": "tool", "tool_call_id": call.id, "name": call.name,
         "content": TOOL_RESULTS.get(call.name, '{"error": "unknown tool"}')}
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
