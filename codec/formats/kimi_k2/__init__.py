"""The Kimi K2 family (``kimi-k2``): ``grammars/kimi_k2.lark``, ``templates/kimi_k2.jinja``.

Moonshot AI's Kimi K2 writes its calls in a section of special tokens; each call's id,
``functions.NAME:IDX``, is the only place the tool's name shows, and its arguments are one
JSON object (read as Solar Open's are).
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.kimi_k2 import canonical, constraint, demo, prompt
from codec.formats.kimi_k2.arguments import IdNamedArguments

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "kimi_k2.lark"

FAMILY = Family(
    name="kimi_k2",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=IdNamedArguments,
    constraint=constraint.call,
)

_CALL = "<|tool_call_begin|>functions.{name}:{index}<|tool_call_argument_begin|>{args}<|tool_call_end|>"


def _section(*calls: str) -> str:
    return "<|tool_calls_section_begin|>" + "".join(calls) + "<|tool_calls_section_end|>"


EXAMPLES = Examples(
    one_call=_section(_CALL.format(name="get_weather", index=0, args='{"city": "Paris"}')),
    two_calls=_section(
        _CALL.format(name="get_weather", index=0, args='{"city": "Paris"}'),
        _CALL.format(name="get_weather", index=1, args='{"city": "Rome"}'),
    ),
    code_head=(
        '<|tool_calls_section_begin|><|tool_call_begin|>functions.run_code:0<|tool_call_argument_begin|>{"code": "'
    ),
    code_tail='"}<|tool_call_end|><|tool_calls_section_end|>',
    typing_trap=_section(_CALL.format(name="get_weather", index=0, args='{"city": "123", "days": 123}')),
)
