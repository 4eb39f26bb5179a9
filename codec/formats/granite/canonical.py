"""What the Granite 4.0 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/granite_4.jinja``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.formats.granite.prompt import DEFAULT_SYSTEM, NO_DEFAULT_SYSTEM
from codec.models import AssistantMessage, SystemMessage, TextPart, ToolMessage
from codec.render.template_input import template_tools

if TYPE_CHECKING:
    from codec.registry import FormatSpec


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _text_parts_joined,
        _available_tools,
        _empty_system if spec.layout == NO_DEFAULT_SYSTEM else _default_system,
        _no_reasoning,
        _tool_result_names,
        _call_ids,
        _no_options,
    ]


def _text_parts_joined(draft: Draft) -> None:
    """Content given as a list of parts is written as its text parts joined by new lines; other
    parts (images, audio) are dropped, and content that is neither (``null``) is empty.

    ``{%- if entry.type== 'text' %}{%- if content.val != '' %}{%- set content.val = content.val + '\\n' %}``
    """
    for index, message in enumerate(draft.messages):
        content = message.content
        if isinstance(content, str):
            continue
        joined = ""
        for part in content or ():
            if isinstance(part, TextPart):
                joined += ("\n" if joined else "") + part.text  # a separator only after some text
        draft.messages[index] = message.model_copy(update={"content": joined})


def _available_tools(draft: Draft) -> None:
    """``available_tools``, when given and not empty, replaces the tools: they come back as the
    tools.

    ``{%- if available_tools is defined and available_tools %}{%- set tools = available_tools %}``
    """
    given = draft.options.get("available_tools")
    if given:
        draft.tools = template_tools(given) or []  # refused as render refuses tools it cannot write


def _default_system(draft: Draft) -> None:
    """Without tools, a first system message that is empty or is the template's default system
    text renders as no system message at all (the template writes that text when there is none).

    ``{%- if ns.system_message %}…{%- else %}{{- '<|start_of_role|>system<|end_of_role|>' + ns.default_system_message``
    """
    messages = draft.messages
    first = messages[0] if messages else None
    if not draft.tools and isinstance(first, SystemMessage) and first.content in ("", DEFAULT_SYSTEM):
        if len(messages) > 1 and not isinstance(messages[1], SystemMessage):
            del messages[0]
        else:
            messages[0] = first.model_copy(update={"content": DEFAULT_SYSTEM})


def _empty_system(draft: Draft) -> None:
    """Granite 4.1 writes no default system text: without tools, a first system message that is
    empty writes nothing, and is lost — unless another empty system message follows it (which
    the template writes as the first system turn, and reads back as both) or nothing does (an
    empty conversation is none).

    ``{%- if ns.system_message %}{{- '<|start_of_role|>system<|end_of_role|>' + ns.system_message …`` (no ``else``)
    """
    messages = draft.messages
    first = messages[0] if messages else None
    if draft.tools or not isinstance(first, SystemMessage) or first.content != "" or len(messages) == 1:
        return
    if not (isinstance(messages[1], SystemMessage) and messages[1].content == ""):
        del messages[0]


def _no_reasoning(draft: Draft) -> None:
    """Reasoning is never written: the template has no thinking block.

    (no line of the template reads ``reasoning_content``)
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _tool_result_names(draft: Draft) -> None:
    """A tool result shows its content only, inside the user turn that holds the results.

    ``{{- '\\n<tool_response>\\n' }}{{- content.val }}{{- '\\n</tool_response>' }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _call_ids(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... in order, and a tool
    result takes the id of the call at its position in the assistant turn before its block.

    ``{{- '<tool_call>\\n{"name": "' }}{{- tool_call.name }}{{- '", "arguments": ' }}`` (no id)
    """
    number_calls(draft)


def _no_options(draft: Draft) -> None:
    """The template reads no option codec reads back: ``available_tools`` comes back as the
    tools, and ``documents`` are written into the system text, which ``parse_prompt`` gives
    back as system text (with tools, it refuses the prompt).

    (``{%- if documents %}`` / ``{%- set tools = available_tools %}``)
    """
    draft.options = {}
