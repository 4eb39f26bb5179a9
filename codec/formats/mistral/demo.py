"""Mistral's part of ``codec demo``: the reasoning model thinks, answers, then calls (the prompt
ends with ``[/INST]``: the template writes no generation prompt)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER, REASONING

COMPLETION = (
    f"[THINK]{REASONING}[/THINK]{ANSWER}"
    "[TOOL_CALLS]search_places[ARGS]"
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}'
    "[TOOL_CALLS]convert_currency[ARGS]"
    '{"amount": 60, "from_currency": "EUR", "to_currency": "USD"}'
    "</s>"
)

MISTRAL = DemoCase("Mistral — [TOOL_CALLS]NAME[ARGS]{json} per call, no closer, after [THINK]", COMPLETION)

MISTRAL_LARGE_3 = DemoCase("Mistral Large 3 — the same syntax, its own default system prompt (Le Chat)", COMPLETION)

ANSWER_AND_CALLS = COMPLETION[COMPLETION.index(ANSWER) :]
"""The same reply without the thought: the Instruct-2512 models do not think."""

MINISTRAL_3_INSTRUCT = DemoCase("Ministral 3 Instruct — the same calls, no thought", ANSWER_AND_CALLS)
DEVSTRAL_SMALL_2 = DemoCase(
    "Devstral Small 2 — the same calls, no thought, Mistral Vibe's system prompt", ANSWER_AND_CALLS
)
