"""Llama 3's part of ``codec demo``: the model calls one tool, its whole reply (the prompt ends
with ``<|start_header_id|>assistant<|end_header_id|>\\n\\n``; the template writes one call per
message)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import HISTORY, one_call_each

COMPLETION = (
    '{"name": "search_places", "parameters": '
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}}'
    "<|eot_id|>"
)

LLAMA_3 = DemoCase(
    "Llama 3.1 — a bare JSON object, the whole reply, no marker before it",
    COMPLETION,
    history=one_call_each(HISTORY),  # the template refuses a reply with two calls
)

LLAMA_3_2 = DemoCase(
    "Llama 3.2 — the same bare JSON call; the prompt carries today's date",
    COMPLETION,
    history=one_call_each(HISTORY),
)
