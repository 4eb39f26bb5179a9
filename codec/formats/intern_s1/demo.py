"""Intern-S1's part of ``codec demo``: the model thinks, answers, then calls (the prompt ends
with ``<|im_start|>assistant\\n<think>``: thinking is on by default)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER, REASONING

COMPLETION = (
    f"\n{REASONING}\n</think>\n{ANSWER}"
    "<|action_start|><|plugin|>\n"
    '{"name": "search_places", "parameters": '
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}}'
    "\n<|action_end|>\n<|action_start|><|plugin|>\n"
    '{"name": "convert_currency", "parameters": {"amount": 60, "from_currency": "EUR", "to_currency": "USD"}}'
    "\n<|action_end|><|im_end|>"
)

INTERN_S1 = DemoCase("Intern-S1 — InternLM2's action block with a JSON call, after <think>", COMPLETION)
