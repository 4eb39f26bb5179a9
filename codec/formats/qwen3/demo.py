"""Qwen3's part of ``codec demo``: the model thinks, answers, then calls (the prompt ends with
``<|im_start|>assistant\\n``)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER, REASONING

COMPLETION = (
    f"<think>\n{REASONING}\n</think>\n\n{ANSWER}\n"
    "<tool_call>\n"
    '{"name": "search_places", "arguments": '
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}}'
    "\n</tool_call>\n<tool_call>\n"
    '{"name": "convert_currency", "arguments": {"amount": 60, "from_currency": "EUR", "to_currency": "USD"}}'
    "\n</tool_call>"
)

QWEN3 = DemoCase("Qwen3 — a JSON call object inside <tool_call>, after <think>", COMPLETION)
