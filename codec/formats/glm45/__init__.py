"""The GLM-4.5 family (``glm-4-5``, for GLM-4.5, 4.5-Air and 4.6; ``glm-4-7``, for GLM-4.7 and
4.7-Flash): ``grammars/glm45.lark``, ``templates/glm45.jinja``, ``templates/glm47.jinja``.

GLM-4.5 and 4.6 write GLM-5's tokens in a layout of their own: a new line before ``<think>``,
the content and each call, and between a call's name and each of its markers. Their prompts
differ too: the whole tool object listed, ``\\n`` after each role header, ``/nothink`` after
every user message when thinking is off, a think block in every assistant turn.

GLM-4.7 keeps the prompt's tokens and drops the new lines (``<tool_call>NAME<arg_key>K</arg_key>``),
writes ``</think>`` alone for a turn whose reasoning is not shown, and opens ``<think>`` in its
generation prompt (closes it, ``</think>``, with thinking off) instead of writing ``/nothink``.
"""

from __future__ import annotations

from dataclasses import replace

from codec.formats import Examples, Family
from codec.formats.glm45 import canonical, constraint, demo, prompt
from codec.formats.glm45.arguments import LinedKeyValueArguments

__all__ = ["EXAMPLES", "EXAMPLES_47", "FAMILY", "FAMILY_47", "GRAMMAR", "demo"]

GRAMMAR = "glm45.lark"

FAMILY = Family(
    name="glm45",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=LinedKeyValueArguments,
    constraint=constraint.call,
)

# GLM-4.7: the same code, but a constrained call is written without GLM-4.5's new lines (the
# call syntax is given no FormatSpec to read a fact from).
FAMILY_47 = replace(FAMILY, constraint=constraint.call_47)


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


def _call_47(name: str, **arguments: str) -> str:
    pairs = "".join(f"<arg_key>{key}</arg_key><arg_value>{value}</arg_value>" for key, value in arguments.items())
    return f"<tool_call>{name}{pairs}</tool_call>"


# GLM-4.7's prompt ends inside `<think>`: a completion without reasoning closes it first.
EXAMPLES_47 = Examples(
    one_call="</think>" + _call_47("get_weather", city="Paris"),
    two_calls="</think>" + _call_47("get_weather", city="Paris") + _call_47("get_weather", city="Rome"),
    code_head="</think><tool_call>run_code<arg_key>code</arg_key><arg_value>",
    code_tail="</arg_value></tool_call>",
    typing_trap="</think>" + _call_47("get_weather", city="123", days="123"),
)
