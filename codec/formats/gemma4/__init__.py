"""The Gemma 4 family (``gemma4``): ``grammars/gemma4.lark``, ``templates/gemma4.jinja``."""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.gemma4 import canonical, constraint, demo, prompt
from codec.formats.gemma4.arguments import GemmaArguments

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "gemma4.lark"

FAMILY = Family(
    name="gemma4", read_prompt=prompt.read, rules=canonical.rules, arguments=GemmaArguments, constraint=constraint.call
)

_Q = '<|"|>'  # Gemma's string quote

EXAMPLES = Examples(
    one_call=f"<|tool_call>call:get_weather{{city:{_Q}Paris{_Q}}}<tool_call|>",
    two_calls=(
        f"<|tool_call>call:get_weather{{city:{_Q}Paris{_Q}}}<tool_call|>"
        f"<|tool_call>call:get_weather{{city:{_Q}Rome{_Q}}}<tool_call|><|tool_response>"
    ),
    code_head=f"<|tool_call>call:run_code{{code:{_Q}",
    code_tail=f"{_Q}}}<tool_call|>",
    typing_trap=f"<|tool_call>call:get_weather{{city:{_Q}123{_Q},days:123}}<tool_call|>",
)
