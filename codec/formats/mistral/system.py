"""The system prompt a Mistral template writes when the first message is not a system message::

    {%- if messages[0]['role'] != 'system' and default_system_message != '' %}
        {{- '[SYSTEM_PROMPT]' + default_system_message + '[/SYSTEM_PROMPT]' }}

Its text differs from model to model (the Reasoning-2512 one quotes ``[THINK]`` and ``[/THINK]``
as text), so it is read from the format's own template: a one-message conversation, rendered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codec.engine.grammar import compiled
from codec.models import AnyMessage, SystemMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

_KNOWN: dict[str, str] = {}


def default_system(spec: FormatSpec) -> str:
    """The default system prompt's text for ``spec`` (``""``: the template writes none)."""
    known = _KNOWN.get(spec.name)
    if known is None:
        from codec.api import Codec  # the registry imports this family: import the API late

        prompt = Codec(spec).render([{"role": "user", "content": "x"}], add_generation_prompt=False)
        grammar = compiled(spec.grammar)
        opener, closer = grammar.display("SYSTEM_OPEN"), grammar.display("SYSTEM_CLOSE")
        start = prompt.find(opener)
        known = "" if start < 0 else prompt[start + len(opener) : prompt.find(closer, start)]
        _KNOWN[spec.name] = known
    return known


def added_system(messages: list[AnyMessage], default: str) -> bool:
    """Whether the first message is the one the template adds: a system message of the default
    text, followed by a message that is not a system message (the same block is written again
    without it)."""
    if not default or len(messages) < 2 or isinstance(messages[1], SystemMessage):
        return False
    first = messages[0]
    return isinstance(first, SystemMessage) and first.role == "system" and first.content == default
