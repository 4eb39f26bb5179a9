"""The conversation ``codec demo`` runs through every format: a travel assistant that has
already called two tools and answered, then gets a new request. Each family writes its own
completion for it (``codec/formats/<family>/demo.py``) from the reasoning and answer here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

NOW = datetime(2026, 1, 31, 9, 30)


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Any:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS = [
    _tool(
        "get_weather",
        "Daily forecast for a city.",
        {
            "city": {"type": "string", "description": "City name, e.g. Lisbon"},
            "date": {"type": "string", "description": "Day as YYYY-MM-DD"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        ["city", "date"],
    ),
    _tool(
        "search_places",
        "Find restaurants, museums or shops in a city.",
        {
            "query": {"type": "string", "description": "What to look for"},
            "city": {"type": "string"},
            "open_after": {"type": "string", "description": "Local time HH:MM the place must be open after"},
            "limit": {"type": "integer", "description": "At most this many results"},
        },
        ["query", "city"],
    ),
    _tool(
        "convert_currency",
        "Convert an amount between currencies at today's rate.",
        {
            "amount": {"type": "number"},
            "from_currency": {"type": "string", "description": "ISO 4217 code"},
            "to_currency": {"type": "string", "description": "ISO 4217 code"},
        },
        ["amount", "from_currency", "to_currency"],
    ),
]

HISTORY: list[dict[str, Any]] = [
    {
        "role": "system",
        "content": "You are Atlas, a concise travel assistant. Use the tools for "
        "facts; never guess the weather or exchange rates.",
    },
    {"role": "user", "content": "I'm in Lisbon on 2026-02-02 and in Porto on 2026-02-03. Will I need an umbrella?"},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "Two cities on two dates: one forecast each. Celsius, since both are "
        "in Portugal. The calls are independent, so make them together.",
        "tool_calls": [
            {
                "id": "k3m9x2p7qa",
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "arguments": '{"city": "Lisbon", "date": "2026-02-02", "unit": "celsius"}',
                },
            },
            {
                "id": "b8v4n1c6zt",
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "arguments": '{"city": "Porto", "date": "2026-02-03", "unit": "celsius"}',
                },
            },
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "k3m9x2p7qa",
        "name": "get_weather",
        "content": '{"high": 16, "low": 10, "rain_probability": 0.2}',
    },
    {
        "role": "tool",
        "tool_call_id": "b8v4n1c6zt",
        "name": "get_weather",
        "content": '{"high": 13, "low": 8, "rain_probability": 0.85}',
    },
    {
        "role": "assistant",
        "content": "Lisbon on Monday looks dry: 16 °C and a 20% chance of rain. "
        "Pack the umbrella for Porto on Tuesday: 85% chance of rain, "
        "13 °C at most.",
    },
    {
        "role": "user",
        "content": "Thanks! Find me two places in Porto for a late dinner, open "
        "after 22:00, and tell me what 60 EUR is in dollars.",
    },
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


def one_call_each(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``history`` with each reply of several calls written as one reply per call, each followed
    by its result (for a template that writes one call per message, Llama 3's)."""
    results = {m["tool_call_id"]: m for m in history if m["role"] == "tool"}
    split: list[dict[str, Any]] = []
    for message in history:
        if message["role"] == "tool":
            continue
        for call in message.get("tool_calls", ()):
            split += [{**message, "tool_calls": [call]}, results[call["id"]]]
        if "tool_calls" not in message:
            split.append(message)
    return split
