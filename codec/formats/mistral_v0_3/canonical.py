"""What the Mistral v0.3 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/mistral_v0_3.jinja`` (Mistral-7B-Instruct-v0.3). The
reader (``prompt``) gives back exactly the result. Conversations the template refuses stay
refused (``RenderError``): roles that do not alternate user/assistant after the optional system
message (tool results and messages with calls aside), a system message that is not the first,
and a call id or result id that is not nine characters long
(``raise_exception("Tool call IDs should be alphanumeric strings with length 9!")``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codec._canonical import Draft, Rule, names_not_printed, tool_responses_not_printed
from codec.models import AssistantMessage, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

SYSTEM_JOIN = "\n\n"  # ``"[INST] " + system_message + "\n\n" + message["content"] + "[/INST]"``


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _result_names,
        _reasoning_not_written,
        _content_beside_calls,
        _content_trimmed,
        _system_in_the_last_user_message,
        _tools_before_the_last_user_message,
        _tool_declarations,
        _no_generation_prompt,
    ]


def _result_names(draft: Draft) -> None:
    """A tool result's ``name`` is not written: only its content and its call's id.

    ``{{- '[TOOL_RESULTS] {"content": ' + content|string + ", " }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _reasoning_not_written(draft: Draft) -> None:
    """Reasoning is never written: the template reads only an assistant message's ``content``
    and ``tool_calls``.

    ``{{- " " + message["content"]|trim + eos_token}}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _content_beside_calls(draft: Draft) -> None:
    """An assistant message with calls is written as its calls alone: its content is lost.

    ``{%- elif message.tool_calls is defined and message.tool_calls is not none %}{{- "[TOOL_CALLS] [" }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.tool_calls and message.content is not None:
            draft.messages[index] = message.model_copy(update={"content": None})


def _content_trimmed(draft: Draft) -> None:
    """An answer's text is written trimmed, after a space; no content is written empty.

    ``{{- " " + message["content"]|trim + eos_token}}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and not message.tool_calls:
            text = message.content.strip() if isinstance(message.content, str) else ""
            draft.messages[index] = message.model_copy(update={"content": text})


def _system_in_the_last_user_message(draft: Draft) -> None:
    """The system message is written inside the last message, before its text and a blank
    line, when that message is a user message; otherwise it is lost. Either way it comes back
    as part of that user message.

    ``{%- if loop.last and system_message is defined %}`` /
    ``{{- "[INST] " + system_message + "\\n\\n" + message["content"] + "[/INST]" }}``

    A system message alone leaves nothing but ``<s>``: it reads back as an empty system message
    (the template needs a first message: ``messages[0]["role"]``).
    """
    messages = draft.messages
    if not messages or not isinstance(messages[0], SystemMessage):
        return
    system = messages.pop(0)
    if not messages:
        messages.append(system.model_copy(update={"content": ""}))
    elif isinstance(messages[-1], UserMessage) and isinstance(messages[-1].content, str):
        text = f"{system.content}{SYSTEM_JOIN}{messages[-1].content}"
        messages[-1] = messages[-1].model_copy(update={"content": text})


def _tools_before_the_last_user_message(draft: Draft) -> None:
    """The tools are written once, before the last user message: a conversation without one
    loses them.

    ``{%- if tools is not none and (message == user_messages[-1]) %}``
    """
    if not any(isinstance(message, UserMessage) for message in draft.messages):
        draft.tools.clear()


def _tool_declarations(draft: Draft) -> None:
    """Each tool is written as ``{"type": "function", "function": {…}}`` around its function's
    members, ``return`` left out: any other member of the tool is lost.

    ``{%- for key, val in tool.items() if key != "return" %}``
    """
    draft.tools[:] = [_declared(tool) for tool in draft.tools]


def _declared(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool.get("function")
    members = {key: value for key, value in function.items() if key != "return"} if isinstance(function, dict) else {}
    return {"type": "function", "function": members}


def _no_generation_prompt(draft: Draft) -> None:
    """The template writes no generation prompt: the prompt ends after ``[/INST]`` or
    ``[/TOOL_RESULTS]`` either way, and reads back without one.

    (no line of the template reads ``add_generation_prompt``)
    """
    draft.add_generation_prompt = False
