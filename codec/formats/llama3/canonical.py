"""What the Llama 3.1 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/llama3.jinja``. What it refuses stays a
``RenderError``: more than one call in an assistant message (``raise_exception("This model only
supports single tool-calls at once!")``), and tools with no message after the system message to
put them in (``"Cannot put tools in the first user message when there's no first user message!"``).
``builtin_tools`` (``<|python_tag|>brave_search.call(query="…")`` and ``<|eom_id|>``) and
``custom_tools`` render as the template writes them, but a prompt written with them is not read
back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.formats.llama3.prompt import CLOCK_DATE, DEFAULT_DATE, clock_dated, date_option
from codec.models import AssistantMessage, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        _custom_tools,
        names_not_printed,
        tool_responses_not_printed,
        _first_system_trimmed,
        _first_message_holds_the_tools,
        _empty_system_dropped,
        _content_trimmed,
        _calls_without_content,
        _reasoning_not_printed,
        _tool_result_names,
        _call_ids,
        _clock_options if clock_dated(spec.template) else _options,
    ]


def _custom_tools(draft: Draft) -> None:
    """``custom_tools`` take the place of ``tools``: they come back as the tools.

    ``{%- if custom_tools is defined %}{%- set tools = custom_tools %}``
    """
    custom = draft.options.get("custom_tools")
    if isinstance(custom, list | tuple) and all(isinstance(tool, dict) for tool in custom):
        draft.tools = [dict(tool) for tool in custom]
        draft.tools_given = True


def _text(content: Any) -> str:
    """``content | trim``: a string stripped of white space (anything else is left out)."""
    return content.strip() if isinstance(content, str) else ""


def _first_system_trimmed(draft: Draft) -> None:
    """The first message, when it is a system message, is written trimmed after the date (and
    the tools).

    ``{%- set system_message = messages[0]['content']|trim %}``
    """
    messages = draft.messages
    if messages and isinstance(messages[0], SystemMessage):
        messages[0] = messages[0].model_copy(update={"content": _text(messages[0].content)})
        draft.notes["after_system"] = 1


def _first_message_holds_the_tools(draft: Draft) -> None:
    """With tools (and ``tools_in_user_message``, the default), the message after the system
    message is written, trimmed, after the tools in a user block, whatever its role: it comes
    back as a user message, and a call it held is lost.

    ``{%- set first_user_message = messages[0]['content']|trim %}`` /
    ``{{- '<|start_header_id|>user<|end_header_id|>\\n\\n' -}}``
    """
    if not draft.tools_given or draft.options.get("tools_in_user_message", True) is False:
        return
    first = draft.notes.get("after_system", 0)
    if first < len(draft.messages):
        draft.messages[first] = UserMessage(content=_text(draft.messages[first].content))


def _empty_system_dropped(draft: Draft) -> None:
    """A first system message that trims to nothing leaves no trace, unless nothing follows it
    (the template cannot render no message: ``messages[0]['role']``) or another system message
    does (which would take its place).

    ``{{- system_message }}`` (empty)
    """
    messages = draft.messages
    first_is_empty = draft.notes.get("after_system") and messages[0].content == ""
    if first_is_empty and len(messages) > 1 and not isinstance(messages[1], SystemMessage):
        del messages[0]


def _content_trimmed(draft: Draft) -> None:
    """Every other message's text is trimmed (content that is not a string is written empty).

    ``'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>'``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, SystemMessage | UserMessage) or (
            isinstance(message, AssistantMessage) and not message.tool_calls
        ):
            draft.messages[index] = message.model_copy(update={"content": _text(message.content)})


def _calls_without_content(draft: Draft) -> None:
    """An assistant message with a call is the call alone: its text is lost.

    ``{{- '{"name": "' + tool_call.name + '", ' }}{{- '"parameters": ' }}{{- tool_call.arguments | tojson }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            draft.messages[index] = message.model_copy(update={"content": ""})


def _reasoning_not_printed(draft: Draft) -> None:
    """Reasoning is never written: no line of the template reads it."""
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _tool_result_names(draft: Draft) -> None:
    """A tool result shows its content only, as JSON, in an ``ipython`` block.

    ``{{- "<|start_header_id|>ipython<|end_header_id|>\\n\\n" }}`` / ``{{- message.content | tojson }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _call_ids(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... in order, and a tool
    result takes the id of the call at its position in the run of results after its message.

    ``{{- '{"name": "' + tool_call.name + '", ' }}`` (no id)
    """
    number_calls(draft)


def _options(draft: Draft) -> None:
    """``date_string`` shows only when it is not the default date; ``tools_in_user_message``
    only when it is false and there are tools to place; ``builtin_tools`` without
    ``code_interpreter``, which the ``Tools:`` line leaves out. An empty list of tools writes
    the tools block with no tool in it: it comes back as ``custom_tools=[]`` (a conversation's
    tools cannot tell an empty list from none).

    ``{%- set date_string = "26 Jul 2024" %}`` / ``{%- if tools is not none and not tools_in_user_message %}`` /
    ``{{- "Tools: " + builtin_tools | reject('equalto', 'code_interpreter') | join(", ") + "\n\n"}}``
    """
    options: dict[str, Any] = date_option(draft.options.get("date_string", DEFAULT_DATE), False)
    builtin = draft.options.get("builtin_tools")
    if isinstance(builtin, list | tuple):
        options["builtin_tools"] = [name for name in builtin if name != "code_interpreter"]
    elif builtin is not None:  # written as the template writes it; not read back
        options["builtin_tools"] = builtin
    if draft.tools_given and draft.options.get("tools_in_user_message", True) is False:
        options["tools_in_user_message"] = False
    if draft.tools_given and not draft.tools:
        options["custom_tools"] = []
    draft.options = options


def _clock_options(draft: Draft) -> None:
    """Llama 3.2's template writes today's date unless ``date_string`` is given: the date comes
    back as option ``now`` (``YYYY-MM-DD``), or as ``date_string`` when it is not a date the
    clock writes; ``tools_in_user_message`` and an empty tool list as in Llama 3.1's.

    ``{%- if strftime_now is defined %}{%- set date_string = strftime_now("%d %b %Y") %}``
    """
    date = draft.options.get("date_string", draft.now.strftime(CLOCK_DATE))
    _options(draft)
    draft.options.pop("date_string", None)
    draft.options.update(date_option(date, True))
