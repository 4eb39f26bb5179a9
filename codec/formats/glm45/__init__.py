"""The GLM-4.5 family (``glm-4-5``, for GLM-4.5, 4.5-Air and 4.6): ``grammars/glm45.lark``,
``templates/glm45.jinja``.

GLM-4.5 and 4.6 write GLM-5's tokens in a layout of their own: a new line before ``<think>``,
the content and each call, and between a call's name and each of its markers. Their prompts
differ too: the whole tool object listed, ``\\n`` after each role header, ``/nothink`` after
every user message when thinking is off, a think block in every assistant turn.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.glm45 import canonical, constraint, demo, prompt
from codec.formats.glm45.arguments import LinedKeyValueArguments

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "glm45.lark"

FAMILY = Family(
    name="glm45",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=LinedKeyValueArguments,
    constraint=constraint.call,
)


def _call(name: str, **arguments: str) -> str:
    pairs = "".join(f"\n<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>" for key, value in arguments.items())
    return f"\n<tool_call>{name}{pairs}\n</tool_call>"


# The prompt ends at `<|assistant|>`: a completion opens its own think block.
EXAMPLES = Examples(
    one_call="\n<think></think>" + _call("get_weather", city="Paris"),
    two_calls="\n<think></think>" + _call("get_weather", city="Paris") + _call("get_weather", city="Rome"),
    code_head="\n<think></think>\n<tool_call>run_code\n<arg_key>code</arg_key>\n<arg_value>",
    code_tail="</arg_value>\n</tool_call>",
    typing_trap="\n<think></think>" + _call("get_weather", city="123", days="123"),
)
