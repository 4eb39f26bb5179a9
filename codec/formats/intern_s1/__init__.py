"""The Intern-S1 family (``intern-s1``): ``grammars/intern_s1.lark``, ``templates/intern_s1.jinja``.

Intern-S1 (and Intern-S1-mini) writes InternLM2's action block, not the Hermes ``<tool_call>``
block of Qwen3 and Intern-S1-Pro: the JSON object ``{"name": …, "parameters": {…}}`` between
``<|action_start|><|plugin|>`` and ``<|action_end|>``, after an optional ``<think>`` block. Tool
results are turns of the ``environment`` role. The argument reader is Qwen3's (it reads
``"parameters"`` as ``"arguments"``).
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.intern_s1 import canonical, constraint, demo, prompt
from codec.formats.intern_s1.arguments import ActionCall

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "intern_s1.lark"

FAMILY = Family(
    name="intern_s1", read_prompt=prompt.read, rules=canonical.rules, arguments=ActionCall, constraint=constraint.call
)


def _call(name: str, arguments: str) -> str:
    return f'<|action_start|><|plugin|>\n{{"name": "{name}", "parameters": {arguments}}}\n<|action_end|>'


# The prompt ends with `<|im_start|>assistant\n<think>` (thinking is on by default): a completion
# starts inside the thought.
_THOUGHT = "\nThe user wants the weather.\n</think>\n"

EXAMPLES = Examples(
    one_call=_THOUGHT + _call("get_weather", '{"city": "Paris"}'),
    two_calls=_THOUGHT + _call("get_weather", '{"city": "Paris"}') + "\n" + _call("get_weather", '{"city": "Rome"}'),
    code_head=_THOUGHT + '<|action_start|><|plugin|>\n{"name": "run_code", "parameters": {"code": "',
    code_tail='"}}\n<|action_end|>',
    typing_trap=_THOUGHT + _call("get_weather", '{"city": "123", "days": 123}'),
)
