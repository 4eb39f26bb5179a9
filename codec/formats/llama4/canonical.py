"""What the Llama 4 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/llama4.jinja``. What it refuses stays a
``RenderError``: tools with no message after the system message to put them in (``"Cannot put
tools in the first user message when there's no first user message!"``). ``date_string`` is read
(``{%- set date_string = strftime_now("%d %b %Y") %}``) and never written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.models import AssistantMessage, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        _custom_tools,
        names_not_printed,
        tool_responses_not_printed,
        _tools_without_a_place,
        _first_system_trimmed,
        _first_message_holds_the_tools,
        _content_as_text,
        _reasoning_not_printed,
        _tool_result_names,
        _call_ids,
        _options,
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


def _tools_without_a_place(draft: Draft) -> None:
    """With ``tools_in_user_message`` false the tools are listed in the system block, which is
    written only when the conversation opens with a system message: without one they are lost.

    ``{%- if user_supplied_system_message %}`` … ``{%- if tools is not none and not tools_in_user_message %}``
    """
    in_system = draft.options.get("tools_in_user_message", True) is False
    opens_with_system = bool(draft.messages) and isinstance(draft.messages[0], SystemMessage)
    if draft.tools_given and in_system and not opens_with_system:
        draft.tools, draft.tools_given = [], False


def _first_system_trimmed(draft: Draft) -> None:
    """The first message, when it is a system message, is written trimmed (after the tools).

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
    ``{{- '<|header_start|>user<|header_end|>\\n\\n' -}}``
    """
    if not draft.tools_given or draft.options.get("tools_in_user_message", True) is False:
        return
    first = draft.notes.get("after_system", 0)
    if first < len(draft.messages):
        draft.messages[first] = UserMessage(content=_text(draft.messages[first].content))


def _content_as_text(draft: Draft) -> None:
    """Other messages are written as they are, untrimmed; content that is missing is written
    empty (an assistant message's calls follow its text, inside ``<|python_start|>`` …
    ``<|python_end|>``).

    ``{%- if message['content'] is string %}{{- message['content'] }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, SystemMessage | UserMessage | AssistantMessage) and message.content is None:
            draft.messages[index] = message.model_copy(update={"content": ""})


def _reasoning_not_printed(draft: Draft) -> None:
    """Reasoning is never written: no line of the template reads it."""
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _tool_result_names(draft: Draft) -> None:
    """A tool result shows its content only, as JSON, in an ``ipython`` block.

    ``{{- "<|header_start|>ipython<|header_end|>\\n\\n" }}`` / ``{{- message.content | tojson }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _call_ids(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... in order, and a tool
    result takes the id of the call at its position in the run of results after its message.

    ``{{- '{"name": "' + tool_call.function.name + '", ' }}`` (no id)
    """
    number_calls(draft)


def _options(draft: Draft) -> None:
    """``date_string`` is never written; ``tools_in_user_message`` shows only when it is false
    and there are tools to place. An empty list of tools writes the tools block with no tool in
    it: it comes back as ``custom_tools=[]`` (a conversation's tools cannot tell an empty list
    from none).

    ``{%- if tools is not none and not tools_in_user_message %}``
    """
    options: dict[str, Any] = {}
    if draft.tools_given and draft.options.get("tools_in_user_message", True) is False:
        options["tools_in_user_message"] = False
    if draft.tools_given and not draft.tools:
        options["custom_tools"] = []
    draft.options = options
