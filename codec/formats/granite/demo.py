"""Granite 4.0's part of ``codec demo``: the model answers, then calls (the prompt ends with
``<|start_of_role|>assistant<|end_of_role|>``; the template has no thinking block)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER

COMPLETION = (
    f"{ANSWER}\n"
    "<tool_call>\n"
    '{"name": "search_places", "arguments": '
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}}'
    "\n</tool_call>\n<tool_call>\n"
    '{"name": "convert_currency", "arguments": {"amount": 60, "from_currency": "EUR", "to_currency": "USD"}}'
    "\n</tool_call><|end_of_text|>"
)

GRANITE_4 = DemoCase("Granite 4.0 — a JSON call object inside <tool_call>, Hermes-style", COMPLETION)

# Granite 4.1 writes the same reply (its template differs only in its system turn).
GRANITE_4_1 = DemoCase("Granite 4.1 — Granite 4.0's calls; no default system text", COMPLETION)
