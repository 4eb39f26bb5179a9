"""Llama 4's part of ``codec demo``: the model calls one tool in Python's syntax, its whole reply
(the prompt ends with ``<|header_start|>assistant<|header_end|>\\n\\n``)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import HISTORY

LLAMA_4 = DemoCase(
    "Llama 4 — a Python list of calls, keyword arguments, no marker before it",
    '[search_places(query="late dinner restaurant", city="Porto", open_after="22:00", limit=2)]<|eot|>',
    history=HISTORY,
)
