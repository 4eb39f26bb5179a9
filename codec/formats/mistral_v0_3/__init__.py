"""The Mistral v0.3 family (``mistral-v0-3``): ``grammars/mistral_v0_3.lark``,
``templates/mistral_v0_3.jinja``.

Mistral-7B-Instruct-v0.3, Mistral-Small-Instruct-2409 and Mixtral-8x22B-Instruct-v0.1 (Mistral's
v3 tokenizer) write their calls as one JSON list after ``[TOOL_CALLS]``, each call an object
with its name inside and an id of nine letters or digits after the arguments::

    [TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}]</s>

The later Mistral templates (``codec.formats.mistral``) write ``[TOOL_CALLS]NAME[ARGS]{json}``
per call instead: a syntax of its own, so a family of its own. The ids ``codec`` makes are
Mistral's (``codec.formats.mistral.ids``): the template refuses any other.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.mistral.ids import new_id
from codec.formats.mistral_v0_3 import canonical, constraint, demo, prompt
from codec.formats.mistral_v0_3.arguments import ListedCallObject

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "mistral_v0_3.lark"

FAMILY = Family(
    name="mistral_v0_3",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=ListedCallObject,
    constraint=constraint.call,
    new_id=new_id,
)


def _call(name: str, arguments: str, call_id: str) -> str:
    return f'{{"name": "{name}", "arguments": {arguments}, "id": "{call_id}"}}'


def _calls(*calls: str) -> str:
    return "[TOOL_CALLS] [" + ", ".join(calls) + "]</s>"


EXAMPLES = Examples(
    one_call=_calls(_call("get_weather", '{"city": "Paris"}', "a1b2c3d4e")),
    two_calls=_calls(
        _call("get_weather", '{"city": "Paris"}', "a1b2c3d4e"), _call("get_weather", '{"city": "Rome"}', "f5g6h7i8j")
    ),
    code_head='[TOOL_CALLS] [{"name": "run_code", "arguments": {"code": "',
    code_tail='"}, "id": "c0d3c0d3c"}]</s>',
    typing_trap=_calls(_call("get_weather", '{"city": "123", "days": 123}', "a1b2c3d4e")),
)
