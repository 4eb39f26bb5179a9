"""The Mistral family (``mistral``): ``grammars/mistral.lark``, ``templates/mistral.jinja``.

Mistral's models write each call as ``[TOOL_CALLS]NAME[ARGS]{json}``, one ``[TOOL_CALLS]`` per
call and nothing after the arguments (the JSON object ends the call); the reasoning models
think first, in ``[THINK]…[/THINK]``. Mistral-Small-3.2 writes an id too,
``[TOOL_CALLS]NAME[CALL_ID]a1b2c3d4e[ARGS]{json}``. The arguments are read as Solar Open's are
(``arguments``).
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.mistral import canonical, constraint, demo, prompt
from codec.formats.mistral.arguments import JsonArguments
from codec.formats.mistral.ids import new_id

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "mistral.lark"

FAMILY = Family(
    name="mistral",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=JsonArguments,
    constraint=constraint.call,
    new_id=new_id,
)


def _call(name: str, arguments: str) -> str:
    return f"[TOOL_CALLS]{name}[ARGS]{arguments}"


EXAMPLES = Examples(
    one_call=_call("get_weather", '{"city": "Paris"}') + "</s>",
    two_calls=_call("get_weather", '{"city": "Paris"}') + _call("get_weather", '{"city": "Rome"}') + "</s>",
    code_head='[TOOL_CALLS]run_code[ARGS]{"code": "',
    code_tail='"}</s>',
    typing_trap=_call("get_weather", '{"city": "123", "days": 123}') + "</s>",
)
