"""Kimi K2.5's part of ``codec demo``: the model thinks, answers, then calls (the prompt ends
with ``<|im_assistant|>assistant<|im_middle|><think>``); each call's id carries the tool's name."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER, REASONING

COMPLETION = (
    f"{REASONING}</think>{ANSWER}<|tool_calls_section_begin|>"
    "<|tool_call_begin|>functions.search_places:0<|tool_call_argument_begin|>"
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}'
    "<|tool_call_end|>"
    "<|tool_call_begin|>functions.convert_currency:1<|tool_call_argument_begin|>"
    '{"amount": 60, "from_currency": "EUR", "to_currency": "USD"}'
    "<|tool_call_end|><|tool_calls_section_end|>"
)

KIMI_K2_5 = DemoCase("Kimi K2.5 — a thought, then the tool's name inside the call id functions.NAME:IDX", COMPLETION)

KIMI_K2_6 = DemoCase(
    "Kimi K2.6 — as K2.5; preserve_thinking keeps every turn's thought",
    COMPLETION,
    {"preserve_thinking": True},
)
