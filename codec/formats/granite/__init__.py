"""The IBM Granite 4.0 family (``granite-4``): ``grammars/granite.lark``,
``templates/granite_4.jinja``.

Granite 4.0 writes turns as ``<|start_of_role|>ROLE<|end_of_role|>…<|end_of_text|>`` and its
calls as Qwen3 does (the Hermes-style block): a JSON object with the tool's name and its
arguments between ``<tool_call>`` and ``</tool_call>``, one block per call. It has no thinking
block. Its argument reader and constraint are Qwen3's. Granite 4.1 (``granite-4-1``) writes the
same turns and calls; its template writes no default system text (``NO_DEFAULT_SYSTEM``).
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.granite import canonical, constraint, demo, prompt
from codec.formats.granite.arguments import GraniteCall
from codec.formats.granite.prompt import NO_DEFAULT_SYSTEM

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "NO_DEFAULT_SYSTEM", "demo"]

GRAMMAR = "granite.lark"

FAMILY = Family(
    name="granite", read_prompt=prompt.read, rules=canonical.rules, arguments=GraniteCall, constraint=constraint.call
)


def _call(name: str, arguments: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


# The prompt ends with `<|start_of_role|>assistant<|end_of_role|>`: a completion starts with
# the model's answer or its first call.
EXAMPLES = Examples(
    one_call=_call("get_weather", '{"city": "Paris"}'),
    two_calls=_call("get_weather", '{"city": "Paris"}') + "\n" + _call("get_weather", '{"city": "Rome"}'),
    code_head='<tool_call>\n{"name": "run_code", "arguments": {"code": "',
    code_tail='"}}\n</tool_call>',
    typing_trap=_call("get_weather", '{"city": "123", "days": 123}'),
)
