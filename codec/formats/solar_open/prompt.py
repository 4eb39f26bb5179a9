"""Reads a Solar Open prompt's tree (``solar_open.lark``, rule ``conversation``) into a
``Conversation``. What the prompt shows, literally (the system block cut into lines here)::

    <|begin|>system<|content|>## Provider System Prompt\\n\\nYou are Solar Open 100B, …
        The current date is 2026-11-30.
    \\n\\n## System Prompt\\n\\nfirst system message\\n\\nsecond system message
    \\n\\n## Tools\\n\\n### Tool Call Instruction\\n…
        <|tools:begin|><|tool:begin|>{function JSON}<|tool:end|><|tools:end|>\\n…
    \\n\\n## Output Format Constraint\\n\\n…[Start of schema]{'type': 'json_object'}
        \\n[End of schema]\\n…<|end|>
    <|begin|>user<|content|>text<|end|>
    <|begin|>assistant<|think|>R<|end|><|begin|>assistant<|content|>answer<|end|>
    <|begin|>assistant<|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{json}<|tool_call:end|><|calls|>
    <|begin|>tool<|tool_response|><|tool_response:begin|>ID<|tool_response:name|>NAME<|tool_response:result|>R<|tool_response:end|>…<|end|>
    <|begin|>assistant<|think|><|end|><|begin|>assistant

The system block's sections (each optional, joined by a blank line) are told apart by the
headings the template writes; the options they show come back: ``now`` (the date),
``default_system_prompt=False`` (no provider section), ``response_format``. The system messages
come back first, one per ``\\n\\n``-separated piece of the "## System Prompt" section — except
that two tool blocks in a row show that system messages stood between those results: the last
pieces go back there. ``canonical`` states the same rules from the other side.

Longer than ~300 lines: the system block alone has four sections with fixed headings, each read
back here beside the rule that reads it; the literal wire format above is their shared key.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from lark import Token, Transformer, Tree
from lark.exceptions import VisitError

from codec.errors import ParseError, describe
from codec.formats import RenderFn
from codec.formats._prompt import text_of
from codec.models import (
    AnyMessage,
    AssistantMessage,
    Conversation,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

# The system block's fixed texts, as templates/solar_open.jinja writes them.
_PROVIDER = (
    "## Provider System Prompt\n\nYou are Solar Open 100B, a large language model trained by"
    " Upstage AI, a Korean startup. Your knowledge cutoff is 2025-07. The current date is "
)
_DATE = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})\.")  # strftime_now("%Y-%m-%d") + "."
_SYSTEM_HEADING = "## System Prompt"
_TOOLS_HEADING = (
    "## Tools\n\n### Tool Call Instruction\nYou may invoke one or more tools to assist with the"
    " user's query. Available tools are provided in JSON Schema format: "
)
_SCHEMA_OPEN = "## Output Format Constraint\n\nYour final response should follow the JSON schema: \n[Start of schema]"
_SCHEMA_CLOSE = (
    "\n[End of schema]\nPlease ensure your answers adhere to this format and do not contain any unnecessary text."
)

if TYPE_CHECKING:
    from codec.registry import FormatSpec
_BLANK = "\n\n"  # between sections, and before each system message


class _Place(NamedTuple):
    offset: int
    line: int
    column: int


@dataclass
class _Function:
    value: Any  # the declaration as JSON gave it


@dataclass
class _Tools:
    functions: list[Any]
    tail: str  # the text after the tools section: the output format section, if any
    at: _Place


@dataclass
class _System:
    head: str  # the text before the tools section (all of it, without tools)
    tools: _Tools | None
    at: _Place


@dataclass
class _Results:
    messages: list[ToolMessage]
    at: _Place


@dataclass
class _Thought:
    text: str


@dataclass
class _Generation:
    low_effort: bool = False


@dataclass
class _Sections:
    options: dict[str, Any] = field(default_factory=dict)
    system_texts: list[str] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``solar_open.lark``'s prompt section."""

    def system(self, children: list[Any]) -> _System:
        tools = next((c for c in children if isinstance(c, _Tools)), None)
        return _System(text_of(children, "SYSTEM_TEXT"), tools, _after(children[2]))

    def tools(self, children: list[Any]) -> _Tools:
        functions = [c.value for c in children if isinstance(c, _Function)]
        return _Tools(functions, text_of(children, "SYSTEM_TEXT"), _start(children, "SYSTEM_TEXT"))

    def tool(self, children: list[Any]) -> _Function:
        return _Function(_json(children, "TOOL_JSON", "tool_json", "a tool declaration"))

    def user(self, children: list[Any]) -> UserMessage:
        return UserMessage(content=text_of(children, "CONTENT"))

    def thought(self, children: list[Any]) -> _Thought:
        return _Thought(text_of(children, "REASONING"))

    def reply(self, children: list[Any]) -> AssistantMessage:
        # Kept even when empty: the template cannot print an assistant message without content.
        return AssistantMessage(content=text_of(children, "CONTENT"))

    def invocations(self, children: list[Any]) -> AssistantMessage:
        return AssistantMessage(tool_calls=tuple(c for c in children if isinstance(c, ToolCall)))

    def written_call(self, children: list[Any]) -> ToolCall:
        arguments = _json(children, "ARGS_JSON", "arguments", "a call's arguments")
        if not isinstance(arguments, dict):
            _fail("arguments", _start(children, "ARGS_JSON"), describe(arguments), "a JSON object")
        return ToolCall(id=text_of(children, "WRITTEN_ID"), name=text_of(children, "TOOL_NAME"), arguments=arguments)

    def assistant(self, children: list[Any]) -> AssistantMessage:
        message: AssistantMessage = children[-1]
        if isinstance(children[0], _Thought):
            return message.model_copy(update={"reasoning": children[0].text})
        return message

    def results(self, children: list[Any]) -> _Results:
        return _Results([c for c in children if isinstance(c, ToolMessage)], _at(children[0]))

    def result(self, children: list[Any]) -> ToolMessage:
        return ToolMessage(
            content=text_of(children, "RESULT_TEXT"),
            tool_call_id=text_of(children, "RESULT_ID"),
            name=text_of(children, "RESULT_NAME") or None,
        )

    def generation(self, children: list[Any]) -> _Generation:
        return _Generation(low_effort=isinstance(children[0], _Generation))

    def low_effort(self, _: list[Any]) -> _Generation:
        return _Generation(low_effort=True)


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a Solar Open prompt tree."""
    try:
        items: list[Any] = list(_Tree().transform(_positioned(tree)).children)
    except VisitError as error:  # Lark wraps what a rule method raises
        raise error.orig_exc from None
    system = items.pop(0) if items and isinstance(items[0], _System) else None
    generation = items.pop() if items and isinstance(items[-1], _Generation) else None
    sections = _Sections({"default_system_prompt": False}) if system is None else _sections(system)
    messages = _messages(items, sections.system_texts)
    options = {**sections.options, **_shown_options(messages, generation)}
    return Conversation(
        messages=tuple(messages),
        tools=tuple(sections.tools),
        options=options,
        add_generation_prompt=generation is not None,
    )


def response_format_value(text: str) -> Any:
    """``response_format`` from the text the template printed (``{{- response_format }}``): a
    dict when the text is exactly how Python prints that dict (Jinja prints a dict so), else
    the text itself."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, dict) and str(value) == text else text


def _sections(system: _System) -> _Sections:
    """The system block: provider section (the date), system messages, tools, output format."""
    sections = _Sections()
    head, schema = system.head, None
    if system.tools is None:
        head, schema = _output_format(head)
    else:
        tail = system.tools.tail
        if tail and not tail.startswith(_BLANK):
            _fail("system_text", system.tools.at, describe(tail), "the output format section")
        rest, schema = _output_format(tail[len(_BLANK) :])
        if rest or not head.endswith(_TOOLS_HEADING):
            _fail("system_text", system.at, describe(head), "the tools heading")
        head = head[: -len(_TOOLS_HEADING)]
        if head and not head.endswith(_BLANK):
            _fail("system_text", system.at, describe(head), "a blank line before the tools heading")
        head = head[: -len(_BLANK)]
        sections.tools = [{"type": "function", "function": f} for f in system.tools.functions]
    head = _provider(head, sections.options, system.at)
    sections.system_texts = _system_texts(head, system.at)
    if schema is not None:
        sections.options["response_format"] = response_format_value(schema)
    shown = {"now", "response_format"} & set(sections.options)
    if not (sections.system_texts or sections.tools or shown):
        _fail("system_text", system.at, describe(system.head), "a section the template writes")
    return sections


def _output_format(text: str) -> tuple[str, str | None]:
    """The text before the output format section, and the response format printed in it."""
    start, end = text.rfind(_SCHEMA_OPEN), len(text) - len(_SCHEMA_CLOSE)
    if start < 0 or not text.endswith(_SCHEMA_CLOSE) or start + len(_SCHEMA_OPEN) > end:
        return text, None
    if start and not text[:start].endswith(_BLANK):
        return text, None
    return text[: max(start - len(_BLANK), 0)], text[start + len(_SCHEMA_OPEN) : end]


def _provider(head: str, options: dict[str, Any], at: _Place) -> str:
    """Reads the provider section (its date becomes option ``now``); the text after it."""
    if not head.startswith(_PROVIDER):
        options["default_system_prompt"] = False
        return head
    date = _DATE.match(head, len(_PROVIDER))
    if date is None:
        _fail("system_text", at, describe(head[len(_PROVIDER) :]), "the date (YYYY-MM-DD.)")
    options["now"] = date.group(1)
    rest = head[date.end() :]
    if rest and not rest.startswith(_BLANK + _SYSTEM_HEADING):
        _fail("system_text", at, describe(rest), "the system prompt section")
    return rest[len(_BLANK) :]


def _system_texts(head: str, at: _Place) -> list[str]:
    """``## System Prompt`` then each system message after a blank line."""
    if not head:
        return []
    if not head.startswith(_SYSTEM_HEADING + _BLANK):
        _fail("system_text", at, describe(head), "the system prompt section")
    return head[len(_SYSTEM_HEADING + _BLANK) :].split(_BLANK)


def _messages(items: list[Any], system_texts: list[str]) -> list[AnyMessage]:
    """The turns in order, system messages first; two tool blocks in a row had system messages
    between them (consecutive results share a block): the last system texts go back there."""
    splits = [b for a, b in pairwise(items) if isinstance(a, _Results) and isinstance(b, _Results)]
    if len(splits) > len(system_texts):
        _fail("tool_blocks", splits[0].at, "a second tool block in a row", "one block for consecutive results")
    kept = len(system_texts) - len(splits)
    spare = iter(system_texts[kept:])
    messages: list[AnyMessage] = [SystemMessage(content=text) for text in system_texts[:kept]]
    for item in items:
        if isinstance(item, _Results):
            if any(item is split for split in splits):
                messages.append(SystemMessage(content=next(spare)))
            messages += item.messages
        else:
            messages.append(item)
    return messages


def _shown_options(messages: list[AnyMessage], generation: _Generation | None) -> dict[str, Any]:
    """Reasoning shown before the last user message is ``think_render_option="all"``; the
    empty think turn before the generation prompt is low reasoning effort."""
    options: dict[str, Any] = {}
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=-1)
    if any(isinstance(m, AssistantMessage) and m.reasoning for m in messages[: max(last_user, 0)]):
        options["think_render_option"] = "all"
    if generation is not None and generation.low_effort:
        options["reasoning_effort"] = "low"
    return options


def _json(children: list[Any], terminal: str, code: str, what: str) -> Any:
    text = text_of(children, terminal)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        problem = error.msg
    _fail(code, _start(children, terminal), describe(text), f"{what} as JSON ({problem})")


def _positioned(tree: Tree[Any]) -> Tree[Any]:
    """The tree with every token placed (the engine feeds tokens without positions), so the
    reader's own errors can say where."""
    place = [0, 1, 1]  # offset, line, column

    def walk(node: Tree[Any]) -> None:
        for index, child in enumerate(node.children):
            if isinstance(child, Tree):
                walk(child)
                continue
            text = str(child)
            node.children[index] = Token(child.type, text, place[0], place[1], place[2])
            place[0] += len(text)
            if "\n" in text:
                place[1] += text.count("\n")
                place[2] = len(text) - text.rfind("\n")
            else:
                place[2] += len(text)

    walk(tree)
    return tree


def _start(children: list[Any], terminal: str) -> _Place:
    """Where the text of ``terminal`` starts among ``children`` (else: at the last child)."""
    tokens = [c for c in children if isinstance(c, Token)]
    return _at(next((t for t in tokens if t.type == terminal), tokens[-1]))


def _at(token: Token) -> _Place:
    return _Place(token.start_pos or 0, token.line or 1, token.column or 1)


def _after(token: Token) -> _Place:
    """Just after a marker (markers hold no new line)."""
    offset, line, column = _at(token)
    return _Place(offset + len(token), line, column + len(token))


def _fail(code: str, at: _Place, found: str, expected: str) -> NoReturn:
    raise ParseError(
        code,
        offset=at.offset,
        line=at.line,
        column=at.column,
        found=found,
        expected=(expected,),
        detail="this is not text the solar-open template writes",
    )
