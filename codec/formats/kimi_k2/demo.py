"""Kimi K2's part of ``codec demo``: the model answers, then calls (the prompt ends with
``<|im_assistant|>assistant<|im_middle|>``); each call's id carries the tool's name."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER

COMPLETION = (
    f"{ANSWER}<|tool_calls_section_begin|>"
    "<|tool_call_begin|>functions.search_places:0<|tool_call_argument_begin|>"
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}'
    "<|tool_call_end|>"
    "<|tool_call_begin|>functions.convert_currency:1<|tool_call_argument_begin|>"
    '{"amount": 60, "from_currency": "EUR", "to_currency": "USD"}'
    "<|tool_call_end|><|tool_calls_section_end|>"
)

KIMI_K2 = DemoCase("Kimi K2 — the tool's name inside the call id functions.NAME:IDX", COMPLETION)
