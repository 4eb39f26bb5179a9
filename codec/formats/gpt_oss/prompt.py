"""Reads a gpt-oss prompt's tree (``gpt_oss.lark``, rule ``conversation``) into a
``Conversation``. What the prompt shows, literally (lines broken here)::

    <|start|>system<|message|>IDENTITY\\nKnowledge cutoff: 2024-06\\nCurrent date: DATE\\n\\n
        Reasoning: EFFORT\\n\\n# Valid channels: …<|end|>
    <|start|>developer<|message|># Instructions\\n\\nSYSTEM\\n\\n# Tools\\n\\n## functions\\n\\n
        namespace functions {…} // namespace functions<|end|>
    <|start|>user<|message|>text<|end|>
    <|start|>assistant<|channel|>analysis<|message|>R<|end|>
    <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{json}<|call|>
    <|start|>functions.NAME to=assistant<|channel|>commentary<|message|>"result"<|end|>
    <|start|>assistant<|channel|>final<|message|>answer<|end|>
    <|start|>assistant

The system block shows the options ``model_identity``, ``now`` (the date),
``reasoning_effort`` and ``builtin_tools``; the developer block the first system message and
the tools (``tools.listed``). A call carries no id: calls are numbered as ``number_calls``
numbers them. A result is its content as JSON (``|tojson``).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec._canonical import Draft, number_calls
from codec.formats import RenderFn
from codec.formats._prompt import text_of
from codec.formats.gpt_oss import tools as listing
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# templates/gpt_oss.jinja, build_system_message().
DEFAULT_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
DEFAULT_EFFORT = "medium"
# render_builtin_tools(browser_tool, python_tool): the sections it writes, in this order.
BUILTIN_TOOLS = ("browser", "python")
_SYSTEM = re.compile(
    r"(?P<identity>.*)\nKnowledge cutoff: 2024-06\nCurrent date: (?P<now>[0-9]{4}-[0-9]{2}-[0-9]{2})\n\n"
    r"Reasoning: (?P<effort>.*?)\n\n(?:# Tools\n\n(?P<builtin>.*?))?"
    r"# Valid channels: analysis, commentary, final\. Channel must be included for every message\."
    r"(?:\nCalls to these tools must go to the commentary channel: 'functions'\.)?",
    re.DOTALL,
)
# The developer block: `# Instructions\n\n` + the first system message + `\n\n`, then the tools.
INSTRUCTIONS = "# Instructions\n\n"
TOOLS = "# Tools\n\n"


class _Header(dict[str, Any]):
    """The options the system block shows."""


class _Developer(tuple[str | None, list[dict[str, Any]]]):
    """The developer block: the system message's text (or none) and the tools."""


class _Thought(str):
    """An analysis message, which belongs to the message after it."""


class _Generation:
    """The generation prompt."""


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``gpt_oss.lark``'s prompt section."""

    open_end = False  # the last answer read ended with <|end|>, not <|return|>

    def system(self, children: list[Any]) -> _Header:
        match = _SYSTEM.fullmatch(text_of(children, "SYSTEM_TEXT"))
        if match is None:
            raise ValueError("not the system block the template writes")
        options = {"now": match["now"]}
        if match["identity"] != DEFAULT_IDENTITY:
            options["model_identity"] = match["identity"]
        if match["effort"] != DEFAULT_EFFORT:
            options["reasoning_effort"] = match["effort"]
        if match["builtin"] is not None:
            options["builtin_tools"] = [name for name in BUILTIN_TOOLS if f"## {name}\n\n" in match["builtin"]]
        return _Header(options)

    def developer(self, children: list[Any]) -> _Developer:
        return _Developer(developer_block(text_of(children, "DEVELOPER_TEXT")))

    def user(self, children: list[Any]) -> UserMessage:
        return UserMessage(content=text_of(children, "CONTENT"))

    def thought(self, children: list[Any]) -> _Thought:
        return _Thought(text_of(children, "REASONING"))

    def assistant(self, children: list[Any]) -> AssistantMessage:
        reasoning = next((str(c) for c in children if isinstance(c, _Thought)), None)
        body = children[-1]
        if isinstance(body, ToolCall):
            return AssistantMessage(content=None, reasoning=reasoning, tool_calls=(body,))
        return AssistantMessage(content=body, reasoning=reasoning)

    def answer(self, children: list[Any]) -> str:
        # `<|end|>` after the answer a prompt ends with: messages the template does not write
        # followed it (canonical: an empty system message stands for them).
        self.open_end = any(isinstance(c, Token) and c.type == "END" for c in children)
        return text_of(children, "CONTENT")

    def written_call(self, children: list[Any]) -> ToolCall:
        arguments = json.loads(text_of(children, "ARGS_JSON"))
        return ToolCall(id=None, name=text_of(children, "TOOL_NAME"), arguments=arguments)

    def result(self, children: list[Any]) -> ToolMessage:
        content = json.loads(text_of(children, "RESULT_TEXT"))
        if not isinstance(content, str):
            raise ValueError("a result the template writes is a JSON string")
        return ToolMessage(content=content, name=text_of(children, "TOOL_NAME"))

    def generation(self, _: list[Any]) -> _Generation:
        return _Generation()


def developer_block(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The first system message's text and the tools, from the developer block's text."""
    tools: list[dict[str, Any]] = []
    at = text.find(TOOLS + listing.HEAD)
    if at >= 0:
        tools, text = listing.listed(text[at + len(TOOLS) :]), text[:at]
    if not text:
        return None, tools
    if not text.startswith(INSTRUCTIONS) or not text.endswith("\n\n"):
        raise ValueError("not the developer block the template writes")
    return text[len(INSTRUCTIONS) : -2], tools


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a gpt-oss prompt tree."""
    reader = _Tree()
    items = list(reader.transform(tree).children)
    options: dict[str, Any] = dict(items.pop(0))
    system, tools = items.pop(0) if items and isinstance(items[0], _Developer) else (None, [])
    generation = bool(items) and isinstance(items[-1], _Generation)
    messages: list[AnyMessage] = [m for m in items if not isinstance(m, _Generation)]
    if system is not None or not messages:  # the template needs a message (`messages[0].role`)
        messages.insert(0, SystemMessage(content=system or ""))
    last = messages[-1]
    if not generation and isinstance(last, AssistantMessage) and not last.tool_calls and reader.open_end:
        messages.append(SystemMessage(content=""))
    draft = Draft(messages, tools, options, generation, datetime.now())
    number_calls(draft)  # the template writes no ids: canonical numbers the calls the same way
    return draft.conversation()
