"""The Solar Open family (``solar-open``): ``grammars/solar_open.lark``, ``templates/solar_open.jinja``."""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.solar_open import canonical, constraint, demo, prompt
from codec.formats.solar_open.arguments import JsonArguments

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "solar_open.lark"

FAMILY = Family(
    name="solar_open",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=JsonArguments,
    constraint=constraint.call,
)

_CALL = "<|tool_call:begin|>{id}<|tool_call:name|>{name}<|tool_call:args|>{args}<|tool_call:end|>"

EXAMPLES = Examples(
    one_call=(
        "<|tool_calls|>" + _CALL.format(id="aaaaaaaaa1", name="get_weather", args='{"city": "Paris"}') + "<|calls|>"
    ),
    two_calls=(
        "<|tool_calls|>"
        + _CALL.format(id="aaaaaaaaa1", name="get_weather", args='{"city": "Paris"}')
        + _CALL.format(id="aaaaaaaaa2", name="get_weather", args='{"city": "Rome"}')
        + "<|calls|>"
    ),
    code_head='<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>run_code<|tool_call:args|>{"code": "',
    code_tail='"}<|tool_call:end|><|calls|>',
    typing_trap=(
        "<|tool_calls|>"
        + _CALL.format(id="aaaaaaaaa1", name="get_weather", args='{"city": "123", "days": 123}')
        + "<|calls|>"
    ),
)
