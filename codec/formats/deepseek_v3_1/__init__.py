"""The DeepSeek-V3.1 family (``deepseek-v3-1``): ``grammars/deepseek_v3_1.lark``,
``templates/deepseek_v3_1.jinja``.

DeepSeek-V3.1 writes each call as its name and a JSON object between its own special tokens,
inside one block of calls, after an optional thought (``reasoning</think>``: the generation
prompt opens the thought). Its arguments are read as Solar Open's are (``arguments``).
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.deepseek_v3_1 import canonical, constraint, demo, prompt
from codec.formats.deepseek_v3_1.arguments import JsonArguments

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "deepseek_v3_1.lark"

FAMILY = Family(
    name="deepseek_v3_1",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=JsonArguments,
    constraint=constraint.call,
)


def _call(name: str, arguments: str) -> str:
    return f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arguments}<｜tool▁call▁end｜>"


def _calls(*calls: str) -> str:
    return "<｜tool▁calls▁begin｜>" + "".join(calls) + "<｜tool▁calls▁end｜><｜end▁of▁sentence｜>"


EXAMPLES = Examples(
    one_call=_calls(_call("get_weather", '{"city": "Paris"}')),
    two_calls=_calls(_call("get_weather", '{"city": "Paris"}'), _call("get_weather", '{"city": "Rome"}')),
    code_head='<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>run_code<｜tool▁sep｜>{"code": "',
    code_tail='"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
    typing_trap=_calls(_call("get_weather", '{"city": "123", "days": 123}')),
)
