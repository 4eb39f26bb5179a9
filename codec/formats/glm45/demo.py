"""GLM-4.5's part of ``codec demo``: the model opens its own ``<think>`` after the generation
prompt ``<|assistant|>``, and writes each call's markers on lines of their own. GLM-4.7's: the
prompt opens ``<think>``, and a call's markers follow each other."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER, REASONING


def _arguments(**arguments: str) -> str:
    return "".join(f"\n<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>" for key, value in arguments.items())


COMPLETION = (
    f"\n<think>{REASONING}</think>\n{ANSWER}"
    "\n<tool_call>search_places"
    + _arguments(query="late dinner restaurant", city="Porto", open_after="22:00", limit="2")
    + "\n</tool_call>\n<tool_call>convert_currency"
    + _arguments(amount="60", from_currency="EUR", to_currency="USD")
    + "\n</tool_call>"
)

GLM45 = DemoCase("Z.ai GLM-4.5 — the model opens <think>; one marker a line in calls", COMPLETION)


def _arguments_47(**arguments: str) -> str:
    return "".join(f"<arg_key>{key}</arg_key><arg_value>{value}</arg_value>" for key, value in arguments.items())


# GLM-4.7: the generation prompt `<|assistant|><think>` opens the thought; no new lines in calls.
COMPLETION_47 = (
    f"{REASONING}</think>{ANSWER}"
    "<tool_call>search_places"
    + _arguments_47(query="late dinner restaurant", city="Porto", open_after="22:00", limit="2")
    + "</tool_call><tool_call>convert_currency"
    + _arguments_47(amount="60", from_currency="EUR", to_currency="USD")
    + "</tool_call>"
)

GLM47 = DemoCase("Z.ai GLM-4.7 — the prompt ends inside <think>; calls without new lines", COMPLETION_47)
