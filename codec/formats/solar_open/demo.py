"""Solar Open's part of ``codec demo``: the model writes the call ids."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import REASONING

COMPLETION = (
    f"<|think|>{REASONING}<|end|><|begin|>assistant<|tool_calls|>"
    "<|tool_call:begin|>q7w2e9r4t1<|tool_call:name|>search_places<|tool_call:args|>"
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}'
    "<|tool_call:end|>"
    "<|tool_call:begin|>z5x8c3v6b0<|tool_call:name|>convert_currency<|tool_call:args|>"
    '{"amount": 60, "from_currency": "EUR", "to_currency": "USD"}'
    "<|tool_call:end|><|calls|>"
)

SOLAR_OPEN = DemoCase("Upstage Solar Open 100B — the model writes the call ids", COMPLETION)
