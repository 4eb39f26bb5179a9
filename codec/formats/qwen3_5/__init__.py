"""The Qwen3.5 family (``qwen3.5``): ``grammars/qwen3_5.lark``, ``templates/qwen3_5.jinja``.

Qwen3.5 writes Qwen3-Coder's XML-like calls (one ``<parameter=KEY>`` per argument, the value as
raw text, inside ``<function=NAME>`` inside ``<tool_call>``) after Qwen3's ``<think>`` block,
and its template lists the tools as JSON lines and writes images and videos as placeholders. The
argument reader, the value typing and the constraint are Qwen3-Coder's
(``codec/formats/qwen3_coder/``), imported, not copied.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.qwen3_5 import constraint, demo, layouts
from codec.formats.qwen3_5.arguments import Parameters

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "NEMOTRON_EXAMPLES", "NEMOTRON_GRAMMAR", "demo"]

GRAMMAR = "qwen3_5.lark"
# Nemotron 3 Nano's spellings of the same tokens (the grammar's header says why it has its own).
NEMOTRON_GRAMMAR = "nemotron_3_nano.lark"

FAMILY = Family(
    name="qwen3_5",
    read_prompt=layouts.read,
    rules=layouts.rules,
    arguments=Parameters,
    constraint=constraint.call,
)


def _call(name: str, arguments: str) -> str:
    return f"<tool_call>\n<function={name}>\n{arguments}</function>\n</tool_call>"


def _parameter(key: str, value: str) -> str:
    return f"<parameter={key}>\n{value}\n</parameter>\n"


# By default (enable_thinking not true) the prompt ends with the empty thought
# `<|im_start|>assistant\n<think>\n\n</think>\n\n`: a completion starts with the content or a call.
EXAMPLES = Examples(
    one_call=_call("get_weather", _parameter("city", "Paris")),
    two_calls=(
        _call("get_weather", _parameter("city", "Paris")) + "\n" + _call("get_weather", _parameter("city", "Rome"))
    ),
    code_head="<tool_call>\n<function=run_code>\n<parameter=code>\n",
    code_tail="\n</parameter>\n</function>\n</tool_call>",
    typing_trap=_call("get_weather", _parameter("city", "123") + _parameter("days", "123")),
)

# Nemotron 3 Nano's prompt ends inside the thought by default (`<|im_start|>assistant\n<think>\n`,
# enable_thinking is true unless given): a completion closes it first. Its template writes a new
# line after each `</tool_call>`, which the model writes too.
NEMOTRON_EXAMPLES = Examples(
    one_call="</think>\n" + EXAMPLES.one_call,
    two_calls="</think>\n" + EXAMPLES.two_calls,
    code_head="</think>\n" + EXAMPLES.code_head,
    code_tail=EXAMPLES.code_tail,
    typing_trap="</think>\n" + EXAMPLES.typing_trap,
)
