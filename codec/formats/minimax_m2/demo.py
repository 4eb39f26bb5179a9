"""MiniMax-M2's part of ``codec demo``: the model thinks, answers, then calls in one block (the
prompt ends with ``]~b]ai\\n<think>\\n``: the completion starts inside the thought)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER, REASONING


def _invoke(name: str, **arguments: str) -> str:
    body = "".join(f'<parameter name="{key}">{value}</parameter>\n' for key, value in arguments.items())
    return f'<invoke name="{name}">\n{body}</invoke>\n'


COMPLETION = (
    f"{REASONING}\n</think>\n\n{ANSWER}\n<minimax:tool_call>\n"
    + _invoke("search_places", query="late dinner restaurant", city="Porto", open_after="22:00", limit="2")
    + _invoke("convert_currency", amount="60", from_currency="EUR", to_currency="USD")
    + "</minimax:tool_call>"
)

MINIMAX_M2 = DemoCase(
    "MiniMax-M2 — <think> reasoning, then <invoke> calls in one <minimax:tool_call> block", COMPLETION
)
MINIMAX_M2_1 = DemoCase("MiniMax-M2.1 — the M2 syntax, its own default system text", COMPLETION)
MINIMAX_M2_5 = DemoCase("MiniMax-M2.5 — the M2 syntax, its own default system text", COMPLETION)
MINIMAX_M2_7 = DemoCase("MiniMax-M2.7 — the M2 syntax, its own default system text", COMPLETION)
