"""The gpt-oss family (``gpt-oss``): ``grammars/gpt_oss.lark``, ``templates/gpt_oss.jinja``.

OpenAI's gpt-oss writes the "harmony" format: a turn is a run of messages, each with a header
(role, channel ``analysis`` / ``commentary`` / ``final``, and for a call the recipient
``to=functions.NAME``) and a body. Reasoning is the analysis channel, the answer the final
channel, a call a commentary message addressed to a tool whose body is its JSON arguments.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.gpt_oss import canonical, constraint, demo, prompt
from codec.formats.gpt_oss.arguments import BodyArguments

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "gpt_oss.lark"

FAMILY = Family(
    name="gpt_oss",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=BodyArguments,
    constraint=constraint.call,
)

# The generation prompt ends with `<|start|>assistant`: a call as the template writes it goes on
# from there; a second call is a message of its own.
_CALL = " to=functions.{name}<|channel|>commentary json<|message|>{args}<|call|>"
_NEXT = "<|start|>assistant"

EXAMPLES = Examples(
    one_call=_CALL.format(name="get_weather", args='{"city": "Paris"}'),
    two_calls=_CALL.format(name="get_weather", args='{"city": "Paris"}')
    + _NEXT
    + _CALL.format(name="get_weather", args='{"city": "Rome"}'),
    code_head=' to=functions.run_code<|channel|>commentary json<|message|>{"code": "',
    code_tail='"}<|call|>',
    typing_trap=_CALL.format(name="get_weather", args='{"city": "123", "days": 123}'),
)
