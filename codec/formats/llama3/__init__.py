"""The Llama 3 family (``llama-3``): ``grammars/llama3.lark``, ``templates/llama3.jinja``.

Meta's Llama 3.1, 3.2 and 3.3 Instruct models call a custom tool by writing a bare JSON object
as their whole reply, ``{"name": "NAME", "parameters": {…}}``, with no marker before it (the
``<|python_tag|>`` token may come first); the turn ends with ``<|eot_id|>``.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.llama3 import canonical, constraint, demo, prompt
from codec.formats.llama3.arguments import BareCallObject

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "llama3.lark"

FAMILY = Family(
    name="llama3",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=BareCallObject,
    constraint=constraint.call,
)


def _call(name: str, parameters: str) -> str:
    return f'{{"name": "{name}", "parameters": {parameters}}}<|eot_id|>'


# The prompt ends with `<|start_header_id|>assistant<|end_header_id|>\n\n`: a completion is the
# reply itself. The template writes one call per assistant message; a model that calls twice in
# one reply starts the second after `<|python_tag|>`, which is read as content (docs/formats.md).
# A tool passed as the template's `custom_tools` (it takes the place of `tools`).
CUSTOM_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The time in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]

EXAMPLES = Examples(
    one_call=_call("get_weather", '{"city": "Paris"}'),
    two_calls=_call("get_weather", '{"city": "Paris"}') + _call("get_weather", '{"city": "Rome"}'),
    code_head='{"name": "run_code", "parameters": {"code": "',
    code_tail='"}}<|eot_id|>',
    typing_trap=_call("get_weather", '{"city": "123", "days": 123}'),
)
