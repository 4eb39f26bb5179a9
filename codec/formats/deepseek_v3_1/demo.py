"""DeepSeek-V3.1's part of ``codec demo``: thinking on, the model thinks, answers, then calls
(the prompt ends with ``<｜Assistant｜><think>``)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER, REASONING

COMPLETION = (
    f"{REASONING}</think>{ANSWER}"
    "<｜tool▁calls▁begin｜>"
    "<｜tool▁call▁begin｜>search_places<｜tool▁sep｜>"
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}'
    "<｜tool▁call▁end｜>"
    "<｜tool▁call▁begin｜>convert_currency<｜tool▁sep｜>"
    '{"amount": 60, "from_currency": "EUR", "to_currency": "USD"}'
    "<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>"
)

DEEPSEEK_V3_1 = DemoCase(
    "DeepSeek-V3.1 — name and JSON between fullwidth-bar tokens, after the thought",
    COMPLETION,
    {"thinking": True},
)
