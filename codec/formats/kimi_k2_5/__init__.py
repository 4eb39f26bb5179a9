"""The Kimi K2.5 family (``kimi-k2-5``, ``kimi-k2-6``): ``grammars/kimi_k2_5.lark``,
``templates/kimi_k2_5.jinja`` and ``templates/kimi_k2_6.jinja``.

Kimi K2.5 writes its calls as Kimi K2 does (a section of special tokens; each call's id,
``functions.NAME:IDX``, the only place the tool's name shows; JSON arguments), after a thought
the generation prompt opens (``<think>``). Its template writes the caller's ids as they are,
each message's ``name`` in place of its role, and images and videos as placeholders.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.kimi_k2.ids import call_id
from codec.formats.kimi_k2_5 import canonical, constraint, demo, prompt
from codec.formats.kimi_k2_5.arguments import IdNamedArguments

__all__ = ["CALL_ID", "EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "kimi_k2_5.lark"

FAMILY = Family(
    name="kimi_k2_5",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=IdNamedArguments,
    constraint=constraint.call,
)

CALL_ID = call_id
"""The id a call needs for its name to show (``FormatSpec.call_id``): the template writes the
caller's id as it is, and the model's ids are Kimi K2's, ``functions.NAME:IDX``."""

_CALL = "<|tool_call_begin|>functions.{name}:{index}<|tool_call_argument_begin|>{args}<|tool_call_end|>"


def _section(*calls: str) -> str:
    return "</think><|tool_calls_section_begin|>" + "".join(calls) + "<|tool_calls_section_end|>"


EXAMPLES = Examples(
    one_call=_section(_CALL.format(name="get_weather", index=0, args='{"city": "Paris"}')),
    two_calls=_section(
        _CALL.format(name="get_weather", index=0, args='{"city": "Paris"}'),
        _CALL.format(name="get_weather", index=1, args='{"city": "Rome"}'),
    ),
    code_head=(
        "</think><|tool_calls_section_begin|><|tool_call_begin|>functions.run_code:0"
        '<|tool_call_argument_begin|>{"code": "'
    ),
    code_tail='"}<|tool_call_end|><|tool_calls_section_end|>',
    typing_trap=_section(_CALL.format(name="get_weather", index=0, args='{"city": "123", "days": 123}')),
)
