"""The Qwen3-Coder family (``qwen3-coder``): ``grammars/qwen3_coder.lark``,
``templates/qwen3_coder.jinja``.

Qwen3-Coder writes its calls as XML-like blocks, one ``<parameter=KEY>`` per argument with the
value as raw text, inside ``<function=NAME>`` inside ``<tool_call>``; it has no thinking block.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.qwen3_coder import canonical, constraint, demo, prompt
from codec.formats.qwen3_coder.arguments import Parameters

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "qwen3_coder.lark"

FAMILY = Family(
    name="qwen3_coder",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=Parameters,
    constraint=constraint.call,
)


def _call(name: str, arguments: str) -> str:
    return f"<tool_call>\n<function={name}>\n{arguments}</function>\n</tool_call>"


def _parameter(key: str, value: str) -> str:
    return f"<parameter={key}>\n{value}\n</parameter>\n"


# The prompt ends with `<|im_start|>assistant\n`: a completion starts with the content or a call.
EXAMPLES = Examples(
    one_call=_call("get_weather", _parameter("city", "Paris")),
    two_calls=(
        _call("get_weather", _parameter("city", "Paris")) + "\n" + _call("get_weather", _parameter("city", "Rome"))
    ),
    code_head="<tool_call>\n<function=run_code>\n<parameter=code>\n",
    code_tail="\n</parameter>\n</function>\n</tool_call>",
    typing_trap=_call("get_weather", _parameter("city", "123") + _parameter("days", "123")),
)
