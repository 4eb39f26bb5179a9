"""The Qwen3 family (``qwen3``): ``grammars/qwen3.lark``, ``templates/qwen3.jinja``.

Qwen3 writes the Hermes-style call (Qwen2.5, QwQ, InternLM/Intern-S1 and Granite 4 write the
same block): a JSON object with the tool's name and its arguments between ``<tool_call>`` and
``</tool_call>``, after an optional ``<think>`` block.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.qwen3 import canonical, constraint, demo, prompt
from codec.formats.qwen3.arguments import CallObject

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "qwen3.lark"

FAMILY = Family(
    name="qwen3", read_prompt=prompt.read, rules=canonical.rules, arguments=CallObject, constraint=constraint.call
)


def _call(name: str, arguments: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


# The prompt ends with `<|im_start|>assistant\n`: a completion starts with the model's thought.
_THOUGHT = "<think>\nThe user wants the weather.\n</think>\n\n"

EXAMPLES = Examples(
    one_call=_THOUGHT + _call("get_weather", '{"city": "Paris"}'),
    two_calls=_THOUGHT + _call("get_weather", '{"city": "Paris"}') + "\n" + _call("get_weather", '{"city": "Rome"}'),
    code_head=_THOUGHT + '<tool_call>\n{"name": "run_code", "arguments": {"code": "',
    code_tail='"}}\n</tool_call>',
    typing_trap=_THOUGHT + _call("get_weather", '{"city": "123", "days": 123}'),
)
