"""GLM's part of ``codec demo``: a completion in GLM's syntax (the prompt ends inside ``<think>``)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER, REASONING


def _arguments(**arguments: str) -> str:
    return "".join(f"<arg_key>{key}</arg_key><arg_value>{value}</arg_value>" for key, value in arguments.items())


COMPLETION = (
    f"{REASONING}</think>{ANSWER}"
    "<tool_call>search_places"
    + _arguments(query="late dinner restaurant", city="Porto", open_after="22:00", limit="2")
    + "</tool_call><tool_call>convert_currency"
    + _arguments(amount="60", from_currency="EUR", to_currency="USD")
    + "</tool_call>"
)

GLM = DemoCase("Z.ai GLM-5.3-Flash — the prompt ends inside <think>", COMPLETION)
GLM_EFFORT = DemoCase(
    "GLM-5.3 with reasoning-effort personas (reasoning_effort='low')", COMPLETION, {"reasoning_effort": "low"}
)
