"""Reads a MiniMax-M2 prompt's tree (``minimax_m2.lark``, rule ``conversation``) into a
``Conversation``.

What the prompt shows, literally::

    ]~!b[]~b]system\\nS\\n\\n# Tools\\nYou may call…<tools>\\n<tool>{function}</tool>\\n</tools>…[e~[\\n
    ]~b]user\\ntext[e~[\\n
    ]~b]ai\\n<think>\\nR\\n</think>\\n\\nanswer\\n<minimax:tool_call>\\n<invoke name="NAME">\\n
        <parameter name="K">V</parameter>\\n</invoke>\\n</minimax:tool_call>[e~[\\n
    ]~b]tool\\n<response>result</response>[e~[\\n
    ]~b]ai\\n<think>\\n

The template always writes a system block: the first system message's text, else its own
default (``identity``), or the ``model_identity`` option in its place, which reads back as a
system message. Tools are one JSON object per ``<tool>`` line. Argument values are typed back by the
listed tool's schema as GLM's are (the same ``tojson`` line: ``glm.prompt.typed_arguments``).
Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... and a tool result takes the id
of the call at its position in the assistant turn before its block.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec._resources import read_text
from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of, wrap_tool
from codec.formats.glm.prompt import typed_arguments
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# The template's text around the tools (``templates/minimax_m2.jinja``):
# ``{{- '\n\n' ~ '# Tools' ~ '\n' ~ 'You may call one or more tools…' ~ '\n' }}`` and
# ``{{- '\n' ~ '<tools>' ~ '\n' }}``
TOOLS_PREAMBLE = (
    "\n\n# Tools\nYou may call one or more tools to assist with the user query.\n"
    "Here are the tools available in JSONSchema format:\n\n<tools>\n"
)
TOOLS_END = "</tools>\n\n"
_IDENTITY = re.compile(r'set model_identity = "([^"]*)"')

_Call = tuple[str, list[tuple[str, str]]]


@cache
def identity(template: str) -> str:
    """The template's default system text, written when there is no system message and no
    ``model_identity`` (``{%- set model_identity = "You are MiniMax-M2, …" -%}``): each
    revision names its own model."""
    found = _IDENTITY.search(read_text("templates", template))
    return found.group(1) if found else ""


def unquoted(written: str) -> str:
    """A name or key as the template writes it, ``"NAME"``, without its quotes."""
    return written[1:-1] if len(written) >= 2 and written[0] == written[-1] == '"' else written


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``minimax_m2.lark``'s prompt section."""

    def parameter(self, children: list[Any]) -> tuple[str, str]:
        return (unquoted(text_of(children, "ARG_KEY")), text_of(children, "ARG_VALUE"))

    def tool_call(self, children: list[Any]) -> _Call:
        return (unquoted(text_of(children, "FUNC_NAME")), [c for c in children if isinstance(c, tuple)])

    def calls(self, children: list[Any]) -> list[_Call]:
        return [c for c in children if isinstance(c, tuple)]

    def thought(self, children: list[Any]) -> Tree[Any]:
        return Tree("thought", [text_of(children, "REASONING")])

    def result(self, children: list[Any]) -> str:
        return text_of(children, "RESULT_TEXT")

    def system(self, children: list[Any]) -> Tree[Any]:
        return Tree("system", ["".join(str(c) for c in children[2:-1])])

    def user(self, children: list[Any]) -> UserMessage:
        return UserMessage(content=text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> Tree[Any]:
        return Tree("assistant", children)

    def results(self, children: list[Any]) -> Tree[Any]:
        return Tree("results", [c for c in children if isinstance(c, str) and not isinstance(c, Token)])

    def generation(self, _: list[Any]) -> Tree[Any]:
        return Tree("generation", [])


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a MiniMax-M2 prompt tree."""
    items = [c for c in _Tree().transform(tree).children if not isinstance(c, Token)]
    generation = bool(items) and isinstance(items[-1], Tree) and items[-1].data == "generation"
    if generation:
        items = items[:-1]
    system_text, tools = _tools(items.pop(0).children[0])
    messages = _messages(items, tools, _system(system_text, identity(spec.template)))
    # An empty system block: only an empty ``model_identity`` writes one (an empty system
    # message gets the default text).
    options = {"model_identity": ""} if system_text == "" else {}
    return Conversation(messages=tuple(messages), tools=tuple(tools), options=options, add_generation_prompt=generation)


def _tools(text: str) -> tuple[str, list[dict[str, Any]]]:
    """The system text before the tools block, and the tools (one ``<tool>{…}</tool>`` line
    each: JSON holds no raw new line)."""
    start = text.rfind(TOOLS_PREAMBLE)
    if start < 0:
        return text, []
    listing = text[start + len(TOOLS_PREAMBLE) : text.rindex(TOOLS_END)]
    lines = listing.split("\n")[:-1]
    return text[:start], [wrap_tool(json.loads(line[len("<tool>") : -len("</tool>")])) for line in lines]


def _system(text: str, default: str) -> list[AnyMessage]:
    """The system message the block stands for: none for the template's default text."""
    return [] if text in ("", default) else [SystemMessage(content=text)]


def _messages(items: list[Any], tools: list[dict[str, Any]], first: list[AnyMessage]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = list(first)
    for item in items:
        if isinstance(item, UserMessage):
            messages.append(item)
        elif item.data == "assistant":
            messages.append(_assistant(item.children, tools, new_id))
        else:
            messages += _results(item.children, messages)
    return messages


def _assistant(children: list[Any], tools: list[dict[str, Any]], new_id: Any) -> AssistantMessage:
    reasoning: str | None = next((str(c.children[0]) for c in children if isinstance(c, Tree)), None)
    written = [call for c in children if isinstance(c, list) for call in c]
    calls = tuple(
        ToolCall(id=new_id(name), name=name, arguments=typed_arguments(tools, name, pairs)) for name, pairs in written
    )
    content = text_of(children, "CONTENT")
    return AssistantMessage(content=content or None if calls else content, reasoning=reasoning, tool_calls=calls)


def _results(texts: list[str], messages: list[AnyMessage]) -> list[ToolMessage]:
    previous = messages[-1] if messages else None
    calls = previous.tool_calls if isinstance(previous, AssistantMessage) else ()
    return [
        ToolMessage(content=text, tool_call_id=calls[i].id if i < len(calls) else None) for i, text in enumerate(texts)
    ]
