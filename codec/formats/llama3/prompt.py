"""Reads a Llama 3 prompt's tree (``llama3.lark``, rule ``conversation``) into a ``Conversation``.

What the prompt shows, literally::

    <|begin_of_text|><|start_header_id|>system<|end_header_id|>\\n\\nEnvironment: ipython\\n
    Cutting Knowledge Date: December 2023\\nToday Date: 26 Jul 2024\\n\\nS<|eot_id|>
    <|start_header_id|>user<|end_header_id|>\\n\\nGiven the following functions, …\\n\\n{tool}\\n\\nU<|eot_id|>
    <|start_header_id|>assistant<|end_header_id|>\\n\\n{"name": "f", "parameters": {…}}<|eot_id|>
    <|start_header_id|>ipython<|end_header_id|>\\n\\n"result"<|eot_id|>
    <|start_header_id|>assistant<|end_header_id|>\\n\\n

``Environment: ipython`` says tools were given; they are listed (``tojson(indent=4)``, each
followed by a blank line) in the first user block, after the template's instruction, or in the
system block when ``tools_in_user_message`` is false. Calls carry no ids: they are numbered
``call_0``, ``call_1``, ... and a tool result takes the id of the call at its position in the
run of results after the assistant message. A tool result is written as JSON (``tojson``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec._resources import read_text
from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of
from codec.formats.qwen3.head import read_head
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# The template's own text around the tools and the date (``templates/llama3.jinja``).
ENVIRONMENT = "Environment: ipython\n"
BUILTIN = "Tools: "  # ``{{- "Tools: " + builtin_tools | reject('equalto', 'code_interpreter') | join(", ") + "\n\n"}}``
DATE = "Cutting Knowledge Date: December 2023\nToday Date: "
DEFAULT_DATE = "26 Jul 2024"  # ``{%- set date_string = "26 Jul 2024" %}``
CLOCK_DATE = "%d %b %Y"  # Llama 3.2's ``{%- set date_string = strftime_now("%d %b %Y") %}``
_FORMAT = (
    'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.'
    "Do not use variables.\n\n"
)
SYSTEM_TOOLS = (
    "You have access to the following functions. To call a function, please respond with JSON for a function call."
    + _FORMAT
)
USER_TOOLS = (
    "Given the following functions, please respond with a JSON for a function call "
    "with its proper arguments that best answers the given prompt.\n\n" + _FORMAT
)


@dataclass
class _Block:
    kind: str
    text: str = ""
    call: str | None = None
    builtin: bool = False  # ``NAME.call(key="value", …)``, a built-in tool's call


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``llama3.lark``'s prompt section."""

    def tool_call(self, children: list[Any]) -> tuple[str, str]:
        return ("call", text_of(children, "CALL_OPEN", "CALL_JSON"))

    def system(self, children: list[Any]) -> _Block:
        return _Block("system", text_of(children, "SYSTEM_TEXT"))

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> _Block:
        call = next((c for c in children if isinstance(c, tuple)), None)
        if call is None:
            return _Block("assistant", text_of(children, "CONTENT"))
        return _Block("assistant", call=call[1], builtin=call[0] == "builtin")

    def results(self, children: list[Any]) -> _Block:
        return _Block("results", text_of(children, "RESULT_TEXT"))

    def builtin_call(self, children: list[Any]) -> tuple[str, str]:
        return ("builtin", text_of(children, "CONTENT"))

    def generation(self, _: list[Any]) -> _Block:
        return _Block("generation")


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Llama 3 prompt tree."""
    blocks: list[_Block] = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    generation = bool(blocks) and blocks[-1].kind == "generation"
    if generation:
        blocks = blocks[:-1]
    header, rest = blocks[0].text, blocks[1:]
    tools: list[dict[str, Any]] = []
    options: dict[str, Any] = {}
    has_tools = header.startswith(ENVIRONMENT)
    header = header[len(ENVIRONMENT) :] if has_tools else header
    if header.startswith(BUILTIN):
        end = header.find("\n\n")
        options["builtin_tools"] = header[len(BUILTIN) : end].split(", ") if end > len(BUILTIN) else []
        header = header[end + 2 :]
    date, system = _date(header)
    options.update(date_option(date, clock_dated(spec.template)))
    listed = False
    if has_tools and system.startswith(SYSTEM_TOOLS):
        tools, system = listing(system[len(SYSTEM_TOOLS) :])
        options["tools_in_user_message"], listed = False, True
    elif has_tools and rest and rest[0].kind == "user" and rest[0].text.startswith(USER_TOOLS):
        tools, first = listing(rest[0].text[len(USER_TOOLS) :])
        rest, listed = [_Block("user", first), *rest[1:]], True
    if listed and not tools:  # ``tools=[]`` writes the block: a conversation's tools cannot say so
        options["custom_tools"] = []
    # An empty system message leaves no trace, unless it was the only message (the template
    # cannot render none: ``messages[0]['role']``) or another system message follows it.
    kept = system or not rest or rest[0].kind == "system"
    head: list[AnyMessage] = [SystemMessage(content=system)] if kept else []
    return Conversation(
        messages=tuple(head + _messages(rest)),
        tools=tuple(tools),
        options=options,
        add_generation_prompt=generation,
    )


@cache
def clock_dated(template: str) -> bool:
    """Whether the template's default date is today's (Llama 3.2's ``strftime_now``) rather
    than a fixed one (Llama 3.1's ``26 Jul 2024``): read from the template itself."""
    return "strftime_now" in read_text("templates", template)


def date_option(date: Any, clock: bool) -> dict[str, Any]:
    """The option a written date comes back as: none for the fixed default; ``now``
    (``YYYY-MM-DD``) for a date the clock would write; else ``date_string``."""
    if not clock or not isinstance(date, str):
        return {} if date == DEFAULT_DATE and not clock else {"date_string": date}
    try:
        day = datetime.strptime(date, CLOCK_DATE)
    except ValueError:
        return {"date_string": date}
    if day.strftime(CLOCK_DATE) != date:
        return {"date_string": date}
    return {"now": day.strftime("%Y-%m-%d")}


def _date(text: str) -> tuple[str, str]:
    """The date and what follows it: ``"Today Date: " + date_string + "\\n\\n"``."""
    body = text[len(DATE) :]
    end = body.find("\n\n")
    return body[:end], body[end + 2 :]


def listing(text: str) -> tuple[list[dict[str, Any]], str]:
    """The tools at the start of ``text`` and the text after them: each ``t | tojson(indent=4)``
    and a blank line (``{{- "\\n\\n" }}``); a value is a tool only if it reads back to the very
    text the template writes for it."""
    decoder = json.JSONDecoder()
    tools: list[dict[str, Any]] = []
    at = 0
    while text.startswith("{", at):
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            break
        if not text.startswith("\n\n", end) or json.dumps(value, ensure_ascii=False, indent=4) != text[at:end]:
            break
        tools.append(value)
        at = end + 2
    return tools, text[at:]


def _messages(blocks: list[_Block]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    calls: tuple[ToolCall, ...] = ()
    position = 0
    for block in blocks:
        if block.kind == "results":
            own = calls[position].id if position < len(calls) else None
            messages.append(ToolMessage(content=json.loads(block.text), tool_call_id=own))
            position += 1
            continue
        calls, position = (), 0
        if block.kind == "system":
            messages.append(SystemMessage(content=block.text))
        elif block.kind == "user":
            messages.append(UserMessage(content=block.text))
        elif block.call is not None:
            calls = (_builtin_call(block.call, new_id) if block.builtin else _call(block.call, new_id),)
            messages.append(AssistantMessage(content="", tool_calls=calls))
        else:
            messages.append(AssistantMessage(content=block.text))
    return messages


def _call(text: str, new_id: Any) -> ToolCall:
    """A call as the template writes it: ``{"name": "`` + name + ``", "parameters": `` +
    ``tojson`` of the arguments + ``}`` (the name is not escaped: read up to its quote)."""
    head = read_head(text)
    if not isinstance(head, tuple):
        raise ValueError(f"not a call the template writes: {text[:40]!r}")
    name, at, closed = head
    arguments = {} if closed else json.loads(text[at:].rstrip()[:-1])
    return ToolCall(id=new_id(name), name=name, arguments=arguments)


def _builtin_call(text: str, new_id: Any) -> ToolCall:
    """A built-in tool's call as the template writes it: ``NAME.call(`` + ``key="value"``
    joined by ``, `` + ``)`` (values are not escaped: a value holding ``", `` reads apart)."""
    name, _, body = text.partition(".call(")
    arguments: dict[str, Any] = {}
    for pair in body[:-1].split('", ') if body[:-1] else []:
        key, _, value = pair.partition('="')
        arguments[key] = value.removesuffix('"')
    return ToolCall(id=new_id(name), name=name, arguments=arguments)
