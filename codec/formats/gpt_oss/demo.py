"""gpt-oss's part of ``codec demo``: the model thinks on the analysis channel, then calls on the
commentary channel (``to=functions.NAME``; the prompt ends with ``<|start|>assistant``). The
template writes one call per assistant message, so the demo's second call is a message of its
own, written after the first call's ``<|call|>`` as a model that is not stopped there goes on.
No preamble: the template refuses an assistant message with calls that has both text and
reasoning (``Cannot pass both content and thinking``), so the follow-up could not be rendered."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import REASONING

COMPLETION = (
    f"<|channel|>analysis<|message|>{REASONING}<|end|>"
    "<|start|>assistant to=functions.search_places<|channel|>commentary json<|message|>"
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}'
    "<|call|>"
    "<|start|>assistant<|channel|>commentary to=functions.convert_currency <|constrain|>json<|message|>"
    '{"amount": 60, "from_currency": "EUR", "to_currency": "USD"}'
    "<|call|>"
)

GPT_OSS = DemoCase(
    "gpt-oss (harmony) — channels per message; the recipient to=functions.NAME names the call",
    COMPLETION,
    {"reasoning_effort": "low"},
)
