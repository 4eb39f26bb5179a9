"""The Llama 4 family (``llama-4``): ``grammars/llama4.lark``, ``templates/llama4.jinja``.

Meta's Llama 4 Scout and Maverick Instruct models call tools by writing a Python list of calls
with keyword arguments as their whole reply, ``[get_weather(city="Paris"), get_time(city='Rome')]``,
sometimes between ``<|python_start|>`` and ``<|python_end|>``; the turn ends with ``<|eot|>``
(or ``<|eom|>``). The template writes an assistant message's calls as JSON objects instead,
``<|python_start|>text<|python_end|>{"name": "NAME", "parameters": {…}}``, one after the other.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.llama4 import canonical, demo, prompt
from codec.formats.llama4.arguments import PythonicCall

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "llama4.lark"

FAMILY = Family(
    name="llama4",
    read_prompt=prompt.read,
    rules=canonical.rules,
    arguments=PythonicCall,
    # No constraint: the Python list's `[` and `(` are patterns that look ahead (llguidance runs
    # no look-around), and a constraint of the JSON form alone would leave the list unconstrained.
)

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

# The prompt ends with `<|header_start|>assistant<|header_end|>\n\n`: a completion is the reply
# itself, a Python list of calls as the models write them.
EXAMPLES = Examples(
    one_call='[get_weather(city="Paris")]<|eot|>',
    two_calls='[get_weather(city="Paris"), get_weather(city="Rome")]<|eot|>',
    code_head='[run_code(code="',
    code_tail='")]<|eot|>',
    typing_trap='[get_weather(city="123", days=123)]<|eot|>',
)
