"""Qwen3.5's part of ``codec demo``: the model thinks, answers, then calls (the prompt ends with
``<|im_start|>assistant\\n<think>\\n`` under ``enable_thinking``)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER, REASONING


def _call(name: str, **arguments: str) -> str:
    body = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in arguments.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


COMPLETION = (
    f"{REASONING}\n</think>\n\n{ANSWER}\n\n"
    + _call("search_places", query="late dinner restaurant", city="Porto", open_after="22:00", limit="2")
    + "\n"
    + _call("convert_currency", amount="60", from_currency="EUR", to_currency="USD")
)

QWEN3_5 = DemoCase(
    "Qwen3.5 — a thought, then Qwen3-Coder's XML-style <function=…> calls", COMPLETION, {"enable_thinking": True}
)

# Nemotron 3 Nano's template writes `<think>\nR\n</think>\n` + answer, then `'\n'` and each call
# followed by a new line (`'</function>\n</tool_call>\n'`); the prompt pre-opens `<think>\n`.
NEMOTRON_COMPLETION = (
    f"{REASONING}\n</think>\n{ANSWER}\n"
    + _call("search_places", query="late dinner restaurant", city="Porto", open_after="22:00", limit="2")
    + "\n"
    + _call("convert_currency", amount="60", from_currency="EUR", to_currency="USD")
    + "\n"
)

NEMOTRON_3_NANO = DemoCase(
    "Nemotron 3 Nano — a thought, then Qwen3-Coder's XML-style <function=…> calls, a new line after each",
    NEMOTRON_COMPLETION,
)
