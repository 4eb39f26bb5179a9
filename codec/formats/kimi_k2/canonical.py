"""What the Kimi K2 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/kimi_k2.jinja``. The reader (``prompt``) gives back
exactly the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, names_not_printed, tool_responses_not_printed
from codec.formats.kimi_k2.ids import call_id
from codec.formats.kimi_k2.prompt import RESULT_BREAK, added_system
from codec.models import AssistantMessage, ToolMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _tool_result_names,
        _reasoning_not_printed,
        _no_content_is_empty,
        _call_ids,
        _result_ids,
        _added_system_message,
    ]


def _tool_result_names(draft: Draft) -> None:
    """A tool result's ``name`` is not written: its header is always ``tool``.

    ``{{ '<|im_system|>tool<|im_middle|>' }}`` (no line reads ``name``)
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _reasoning_not_printed(draft: Draft) -> None:
    """Reasoning is never written: Kimi K2 Instruct does not think, and the template reads
    only ``content`` and ``tool_calls`` of an assistant message.

    (no line of the template reads ``reasoning_content``)
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _no_content_is_empty(draft: Draft) -> None:
    """An assistant message without content is written with none: it reads back as empty
    content.

    ``{%- if message['content'] -%}{{ message['content'] }}{%- endif -%}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.content is None:
            draft.messages[index] = message.model_copy(update={"content": ""})


def _call_ids(draft: Draft) -> None:
    """The caller's call ids are not written: each call's id is ``functions.NAME:IDX``, IDX its
    position in its message (the id the model writes, and the only place its name shows). A
    tool result still shows the caller's ``tool_call_id``, which then matches no call's id.

    ``{%- set formatted_id = 'functions.' + func_name + ':' + loop.index0|string -%}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            calls = tuple(
                call.model_copy(update={"id": call_id(call.name, n)}) for n, call in enumerate(message.tool_calls)
            )
            draft.messages[index] = message.model_copy(update={"tool_calls": calls})


def _result_ids(draft: Draft) -> None:
    """A result's ``tool_call_id`` is written before the two characters ``\\n`` and its content:
    an empty one is none, and one that holds ``\\n`` ends there (the rest joins the content).

    ``## Return of {{ message.tool_call_id }}\\n{{ message['content'] }}``
    """
    for index, message in enumerate(draft.messages):
        if not isinstance(message, ToolMessage) or not isinstance(message.content, str):
            continue
        written, content = f"{message.tool_call_id or ''}{RESULT_BREAK}{message.content}".split(RESULT_BREAK, 1)
        update = {"tool_call_id": written or None, "content": content}
        draft.messages[index] = message.model_copy(update=update)


def _added_system_message(draft: Draft) -> None:
    """A first system message whose text is the one the template adds (``You are a helpful
    assistant``), followed by a message that is not a system message, reads as the template's
    own: it is lost (the template writes the same block again without it).

    ``<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|>``
    """
    if added_system(draft.messages):
        del draft.messages[0]
