"""Reads a DeepSeek-V3.2 prompt's tree (``deepseek_v3_2.lark``, rule ``conversation``) into a
``Conversation``.

What the prompt shows, literally::

    <｜begin▁of▁sentence｜>S1\\n\\nS2\\n\\n## Tools\\n\\nYou have access…<functions>\\n{function}\\n</functions>\\n
    <｜User｜>text<｜Assistant｜></think>answer\\n\\n<｜DSML｜function_calls>\\n<｜DSML｜invoke name="NAME">\\n
        <｜DSML｜parameter name="K" string="true">V</｜DSML｜parameter>\\n</｜DSML｜invoke>\\n
        </｜DSML｜function_calls><｜end▁of▁sentence｜>
    \\n\\n<function_results>\\n<result>R</result>\\n</function_results>\\n\\n<think>R</think>answer<｜end▁of▁sentence｜>
    <｜User｜>text<｜Assistant｜><think>

Every system message is joined into the text before the tools block (one JSON object per line
after ``<functions>``). An assistant message with no header runs on from what came before: the
first one, before any user message, from the system text (``opening``). ``<think>`` in a header
or in the generation prompt shows the ``thinking`` option. Argument values are typed back by
their ``string`` attribute, exactly (``typed``).
Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... and a tool result takes the id
of the call at its position in the run of results after its assistant message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec.arguments.schema import property_schema, tool_schema
from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of, wrap_tool
from codec.formats.glm.prompt import written_value
from codec.formats.minimax_m2.prompt import unquoted
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# The template's fixed text before its first marker and after its last one in the tools block
# (``templates/deepseek_v3_2.jinja``, ``tools_header``): ``'## Tools\n\nYou have access to a set
# of tools you can use to answer the user\'s question.\nYou can invoke functions by writing a "<'``
# and ``'\n\nHere are the functions available in JSONSchema format:\n<functions>\n'``; the
# block ends with ``tools_footer = '</functions>\n'``.
TOOLS_LEAD = (
    "## Tools\n\nYou have access to a set of tools you can use to answer the user's question.\n"
    'You can invoke functions by writing a "'
)
FUNCTIONS_LEAD = "\n\nHere are the functions available in JSONSchema format:\n<functions>\n"
FUNCTIONS_END = "</functions>"
_BLANK = "\n\n"


def typed(text: str, raw: bool | None, schema: Any) -> Any:
    """A value as the template writes it, read back: ``string="true"``, the text is the string;
    ``string="false"``, it is ``tojson``'s JSON; with no attribute (which the template never
    writes), by the key's schema (``glm.prompt.written_value``)."""
    if raw is None:
        return written_value(text, schema)
    return text if raw else json.loads(text)


@dataclass
class _Call:
    name: str
    pairs: list[tuple[str, bool | None, str]]


@dataclass
class _Reply:
    header: bool
    thinking: bool  # the header opened `<think>`
    reasoning: str
    text: str
    calls: list[_Call] = field(default_factory=list)
    opening: bool = False  # before any user message: its text is the system text's end


@dataclass
class _Result:
    text: str


@dataclass
class _Tools:
    schemas: list[dict[str, Any]]
    rest: str  # the text after the block: an opening reply's content


@dataclass
class _Generation:
    thinking: bool


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``deepseek_v3_2.lark``'s prompt section."""

    def parameter(self, children: list[Any]) -> tuple[str, bool | None, str]:
        said = [c.type for c in children if isinstance(c, Token) and c.type in ("RAW_VALUE", "JSON_VALUE")]
        raw = said[0] == "RAW_VALUE" if said else None
        return (unquoted(text_of(children, "ARG_KEY")), raw, text_of(children, "ARG_VALUE"))

    def tool_call(self, children: list[Any]) -> _Call:
        return _Call(unquoted(text_of(children, "FUNC_NAME")), [c for c in children if isinstance(c, tuple)])

    def written_calls(self, children: list[Any]) -> list[_Call]:
        return [c for c in children if isinstance(c, _Call)]

    def tools(self, children: list[Any]) -> _Tools:
        tail = "".join(str(c) for c in children[_last_marker(children) + 1 :])
        lines = tail.removeprefix(FUNCTIONS_LEAD).split("\n")
        end = lines.index(FUNCTIONS_END)
        return _Tools([wrap_tool(json.loads(line)) for line in lines[:end]], "\n".join(lines[end + 1 :]))

    def user(self, children: list[Any]) -> UserMessage:
        return UserMessage(content=text_of(children, "CONTENT"))

    def answer(self, children: list[Any]) -> _Reply:
        thinking = any(isinstance(c, Token) and c.type == "THINK_OPEN" for c in children)
        reasoning = text_of(children, "REASONING")
        return _Reply(True, thinking, reasoning, text_of(children, "CONTENT"), _calls_in(children))

    def reply(self, children: list[Any]) -> _Reply:
        return _Reply(False, False, "", text_of(children, "CONTENT"), _calls_in(children))

    def opening(self, children: list[Any]) -> _Reply:
        return _Reply(False, False, "", "", _calls_in(children), opening=True)

    def result(self, children: list[Any]) -> _Result:
        return _Result(text_of(children, "RESULT_TEXT"))

    def results_open(self, _: list[Any]) -> None:
        return None

    def results_close(self, _: list[Any]) -> None:
        return None

    def generation(self, children: list[Any]) -> _Generation:
        # `<think>` alone is thinking's prompt; `<think></think>` the pre-filled empty thought.
        return _Generation(thinking=not any(isinstance(c, Token) and c.type == "THINK_CLOSE" for c in children))


def _last_marker(children: list[Any]) -> int:
    return max(i for i, c in enumerate(children) if isinstance(c, Token) and c.type != "SYSTEM_TEXT")


def _calls_in(children: list[Any]) -> list[_Call]:
    return next((c for c in children if isinstance(c, list)), [])


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a DeepSeek-V3.2 prompt tree."""
    children: list[Any] = list(_Tree().transform(tree).children)
    system = text_of(children, "SYSTEM_TEXT")
    items = [c for c in children if not isinstance(c, Token) and c is not None]
    found = items.pop(0) if items and isinstance(items[0], _Tools) else None
    generation = items.pop() if items and isinstance(items[-1], _Generation) else None
    tools = found.schemas if found else []
    if found is not None:
        system = system.removesuffix(TOOLS_LEAD).removesuffix(_BLANK)
    opening = found.rest if found else system
    if items and isinstance(items[0], _Reply) and items[0].opening:
        items[0].text, system = opening, system if found else ""
    messages: list[AnyMessage] = [SystemMessage(content=system)] if system else []
    messages += _messages(items, tools)
    thinking = any(isinstance(i, _Reply) and i.thinking for i in items) or bool(generation and generation.thinking)
    return Conversation(
        messages=tuple(messages),
        tools=tuple(tools),
        options={"thinking": True} if thinking else {},
        add_generation_prompt=generation is not None,
    )


def _messages(items: list[Any], tools: list[dict[str, Any]]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    calls: tuple[ToolCall, ...] = ()
    position = 0
    for item in items:
        if isinstance(item, _Reply):
            calls = tuple(ToolCall(id=new_id(c.name), name=c.name, arguments=_arguments(tools, c)) for c in item.calls)
            content = item.text or (None if calls else "")
            messages.append(AssistantMessage(content=content, reasoning=item.reasoning or None, tool_calls=calls))
            position = 0
        elif isinstance(item, _Result):
            own = calls[position].id if position < len(calls) else None
            messages.append(ToolMessage(content=item.text, tool_call_id=own))
            position += 1
        else:
            messages.append(item)
            calls = ()
    return messages


def _arguments(tools: list[dict[str, Any]], call: _Call) -> dict[str, Any]:
    parameters = tool_schema(tools, call.name)
    return {key: typed(text, raw, property_schema(parameters, key)) for key, raw, text in call.pairs}
