"""The MiniMax-M2 family (``minimax-m2``, and the revisions ``minimax-m2-1``, ``minimax-m2-5``,
``minimax-m2-7``): ``grammars/minimax_m2.lark``, the templates ``minimax_m2*.jinja``.

MiniMax-M2 thinks first (the generation prompt opens ``<think>``), then writes content, then
every call of the turn in one ``<minimax:tool_call>`` block, one ``<invoke name="NAME">`` per
call with one ``<parameter name="KEY">`` per argument, its value raw text. The revisions differ
only in their default system text (``prompt.identity``), which is data read from each template.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.minimax_m2 import canonical, demo, prompt
from codec.formats.minimax_m2.arguments import Parameters

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "minimax_m2.lark"

FAMILY = Family(
    name="minimax_m2",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=Parameters,
    # No call syntax for Codec.constraint(): llguidance names a special token only in the
    # `<…>` shape, and MiniMax's stop token `[e~[` has another.
)


def _block(*invokes: str) -> str:
    return "\n</think>\n\n<minimax:tool_call>\n" + "".join(invokes) + "</minimax:tool_call>"


def _invoke(name: str, arguments: str) -> str:
    return f'<invoke name="{name}">\n{arguments}</invoke>\n'


def _parameter(key: str, value: str) -> str:
    return f'<parameter name="{key}">{value}</parameter>\n'


# The prompt ends with `]~b]ai\n<think>\n`: a completion starts in the reasoning.
EXAMPLES = Examples(
    one_call=_block(_invoke("get_weather", _parameter("city", "Paris"))),
    two_calls=_block(
        _invoke("get_weather", _parameter("city", "Paris")), _invoke("get_weather", _parameter("city", "Rome"))
    ),
    code_head='\n</think>\n\n<minimax:tool_call>\n<invoke name="run_code">\n<parameter name="code">',
    code_tail="</parameter>\n</invoke>\n</minimax:tool_call>",
    typing_trap=_block(_invoke("get_weather", _parameter("city", "123") + _parameter("days", "123"))),
)
