"""The GLM family (``glm``, and its variant ``glm-effort``): ``grammars/glm.lark``, the templates
``glm.jinja`` and ``glm_effort.jinja``.

The effort variant is data, not code: its registry entry sets ``control_tags`` (the template
reads ``[regular]`` / ``{REASON:x}`` / ``[MODE:x]`` from message text and writes personas), and
the rules and the prompt reader read that flag.
"""

from __future__ import annotations

from codec.formats import Examples, Family
from codec.formats.glm import canonical, constraint, demo, prompt
from codec.formats.glm.arguments import KeyValueArguments

__all__ = ["EXAMPLES", "FAMILY", "GRAMMAR", "demo"]

GRAMMAR = "glm.lark"

FAMILY = Family(
    name="glm", read_prompt=prompt.read, rules=canonical.rules, arguments=KeyValueArguments, constraint=constraint.call
)

# The prompt ends inside <think>: a completion starts in the reasoning.
EXAMPLES = Examples(
    one_call="</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
    two_calls=(
        "</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value></tool_call>"
    ),
    code_head="</think><tool_call>run_code<arg_key>code</arg_key><arg_value>",
    code_tail="</arg_value></tool_call>",
    typing_trap=(
        "</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>123</arg_value>"
        "<arg_key>days</arg_key><arg_value>123</arg_value></tool_call>"
    ),
)
