"""The DeepSeek-V3.2 family (``deepseek-v3-2``): ``grammars/deepseek_v3_2.lark``,
``templates/deepseek_v3_2.jinja``.

DeepSeek-V3.2 thinks first when thinking is on (the generation prompt opens ``<think>``), then
writes content, then every call of the turn in one ``<｜DSML｜function_calls>`` block: one
``<｜DSML｜invoke name="NAME">`` per call, one ``<｜DSML｜parameter name="KEY" string="true|false">``
per argument, its value raw text (``string="true"``) or JSON (``string="false"``). The layout is
MiniMax-M2's (``codec.formats.minimax_m2``, whose reader this family's extends); the tokens
around it are DeepSeek's (fullwidth bars, ``<｜end▁of▁sentence｜>``, as DeepSeek-V3.1's).
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.deepseek_v3_2 import canonical, demo, prompt
from codec.formats.deepseek_v3_2.arguments import Parameters

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "deepseek_v3_2.lark"

FAMILY = Family(
    name="deepseek_v3_2",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=Parameters,
    # No call syntax for Codec.constraint() yet: each value's grammar would depend on its
    # string attribute (raw text after string="true", JSON after string="false").
)


def _block(*invokes: str) -> str:
    return "\n\n<｜DSML｜function_calls>\n" + "".join(invokes) + "</｜DSML｜function_calls><｜end▁of▁sentence｜>"


def _invoke(name: str, arguments: str) -> str:
    return f'<｜DSML｜invoke name="{name}">\n{arguments}</｜DSML｜invoke>\n'


def _parameter(key: str, value: str, string: bool = True) -> str:
    kind = "true" if string else "false"
    return f'<｜DSML｜parameter name="{key}" string="{kind}">{value}</｜DSML｜parameter>\n'


# The prompt ends with `<｜Assistant｜><think></think>` (thinking off, the default).
EXAMPLES = Examples(
    one_call=_block(_invoke("get_weather", _parameter("city", "Paris"))),
    two_calls=_block(
        _invoke("get_weather", _parameter("city", "Paris")), _invoke("get_weather", _parameter("city", "Rome"))
    ),
    code_head=(
        '\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="run_code">\n<｜DSML｜parameter name="code" string="true">'
    ),
    code_tail="</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls><｜end▁of▁sentence｜>",
    typing_trap=_block(_invoke("get_weather", _parameter("city", "123") + _parameter("days", "123", string=False))),
)
