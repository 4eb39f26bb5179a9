"""What the Kimi K2.5 template keeps of a conversation (``kimi-k2-5``, and K2.6's ``kimi-k2-6``),
rule by rule.

Template lines are quoted from ``templates/kimi_k2_5.jinja`` (K2.6's differ where said). The
reader (``prompt``) gives back exactly the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, tool_responses_not_printed
from codec.formats._prompt import content_of
from codec.formats.kimi_k2.ids import name_of
from codec.formats.kimi_k2_5.content import (
    RESULT_BREAK,
    RESULT_HEAD,
    TOOLS_NAME,
    TOOLS_TEXT,
    as_written,
    declared,
    header,
    last_answer,
    result_parts,
    tools_json,
    written,
)
from codec.formats.kimi_k2_5.prompt import PRESERVE, THINKING, kept_thought
from codec.models import AssistantMessage, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        tool_responses_not_printed,
        _content_as_written,
        _thoughts_of_history,
        _names_from_ids,
        _results_in_system_text,
        _result_ids,
        _header_names,
        _options_shown,
        _tools_declared,
    ]


def _content_as_written(draft: Draft) -> None:
    """Content is written as its text and a placeholder per image or video; an audio part is
    written as nothing (it has no ``text``), media come back as bare parts, a list without media
    as its text, and an assistant message without content as empty content.

    ``{% if content['type'] == 'image' or content['type'] == 'image_url' -%}<|media_begin|>image…``
    """
    for index, message in enumerate(draft.messages):
        content = as_written(message.content)
        if content != message.content:
            draft.messages[index] = message.model_copy(update={"content": content})


def _thoughts_of_history(draft: Draft) -> None:
    """An assistant turn up to the last one without calls is written with an empty thought: its
    reasoning is lost (K2.6: kept with ``preserve_thinking``). With ``thinking=false`` the later
    turns' thoughts are empty too (K2.6: unless ``preserve_thinking``). Empty reasoning is none.

    ``{%- set hist_msgs = messages[:ns.last_non_tool_call_assistant_msg+1] -%}`` …
    ``<think></think>{{render_content(message)}}``
    """
    preserve = bool(draft.options.get(PRESERVE))  # ``{%- if not preserve_thinking -%}``
    history_end = -1 if preserve else last_answer(draft.messages)
    # ``thinking is false and preserve_thinking is false`` (K2.6; K2.5 has no preserve_thinking)
    off = draft.options.get(THINKING) is False and draft.options.get(PRESERVE, False) is False
    for index, message in enumerate(draft.messages):
        if not isinstance(message, AssistantMessage) or message.reasoning is None:
            continue
        if index <= history_end or off or not message.reasoning:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _names_from_ids(draft: Draft) -> None:
    """A call is written as its id alone: the caller's id as it is, and no name. The name reads
    back from the id, ``functions.NAME:IDX`` (the ids Kimi writes): a call whose id has another
    shape (``call_1``) loses its name (it reads back as the id, less a ``functions.`` prefix and a
    ``:digits`` end), and a call without an id has an empty name.

    ``<|tool_call_begin|>{{ formatted_id }}<|tool_call_argument_begin|>``, with
    ``{%- set formatted_id = tool_call['id'] -%}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            calls = tuple(call.model_copy(update={"name": name_of(call.id or "")}) for call in message.tool_calls)
            if calls != message.tool_calls:
                draft.messages[index] = message.model_copy(update={"tool_calls": calls})


def _results_in_system_text(draft: Draft) -> None:
    """A system message whose text starts ``## Return of`` and a new line is written as a tool
    result is (the same block): it reads back as one, named by its header.

    ``<|im_system|>{{role_name}}<|im_middle|>`` … ``## Return of {{ tool_call_id }}``
    """
    for index, message in enumerate(draft.messages):
        if not isinstance(message, SystemMessage):
            continue
        result = result_parts(written(message.content))
        if result is not None:
            name = header(message.name, message.role)
            written_id, rest = result
            draft.messages[index] = ToolMessage(
                content=content_of(rest), tool_call_id=written_id or None, name=None if name == "tool" else name
            )


def _result_ids(draft: Draft) -> None:
    """A result's ``tool_call_id`` is written before a new line and its content: an empty one is
    none, and one that holds a new line ends there (the rest joins the content).

    ``## Return of {{ tool_call_id }}`` + a new line + ``{{render_content(message)}}``
    """
    for index, message in enumerate(draft.messages):
        if not isinstance(message, ToolMessage):
            continue
        pieces = written(message.content) or [""]
        head = f"{RESULT_HEAD}{message.tool_call_id or ''}{RESULT_BREAK}"
        first = pieces[0]
        joined = [head + first, *pieces[1:]] if isinstance(first, str) else [head, *pieces]
        parsed = result_parts(joined)
        if parsed is not None:  # always: the head is written first
            written_id, rest = parsed
            update = {"tool_call_id": written_id or None, "content": content_of(rest)}
            draft.messages[index] = message.model_copy(update=update)


def _header_names(draft: Draft) -> None:
    """A header shows a message's ``name`` where it has one, else its role: a name equal to the
    role (or empty) is none, and a ``developer`` message with a name reads as a system message
    of that name (a system message named ``developer``, as a developer message).

    ``{%- set role_name =  message.get('name') or  message['role'] -%}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, UserMessage | ToolMessage):
            name = header(message.name, message.role)
            update: dict[str, object] = {"name": None if name == message.role else name}
        elif isinstance(message, SystemMessage):
            name = header(message.name, message.role)
            developer = name == "developer"
            update = {
                "role": "developer" if developer else "system",
                "name": None if developer or name == "system" else name,
            }
        else:
            continue
        changed = message.model_copy(update=update)
        if changed != message:
            draft.messages[index] = changed


def _options_shown(draft: Draft) -> None:
    """``thinking=true`` is the default (``thinking is defined and thinking is false``);
    ``thinking=false`` shows only in the generation prompt (``<think></think>``), and K2.6's
    ``preserve_thinking`` only in a thought it keeps: elsewhere they are lost.

    ``{%- if thinking is defined and thinking is false -%}<think></think>``
    """
    if THINKING in draft.options and not (draft.options[THINKING] is False and draft.add_generation_prompt):
        del draft.options[THINKING]
    off = THINKING in draft.options
    if PRESERVE in draft.options and not (draft.options[PRESERVE] and kept_thought(draft.messages, off)):
        del draft.options[PRESERVE]


def _tools_declared(draft: Draft) -> None:
    """The tools are written as compact JSON, or as ``tools_ts_str`` where it is given: then they
    are lost (one stand-in tool, ``{"declared_in": "tools_ts_str"}``, keeps the block); text that
    is tools' JSON as the template writes it reads as those tools. Without tools the option is
    not written. A first system message named ``tool_declare`` (with no tools) reads as the
    tools block.

    ``{%- if tools_ts_str -%}<|im_system|>tool_declare<|im_middle|>{{ tools_ts_str }}<|im_end|>``
    """
    text = draft.options.pop(TOOLS_TEXT, None)
    if draft.tools:
        draft.tools, text = declared(text if text else tools_json(draft.tools))
    elif draft.messages and _declaring(draft.messages[0]):
        draft.tools, text = declared(str(draft.messages.pop(0).content))
    else:
        text = None
    if text is not None:
        draft.options[TOOLS_TEXT] = text


def _declaring(message: object) -> bool:
    """A system message the prompt shows as the tools block."""
    if not isinstance(message, SystemMessage) or not isinstance(message.content, str):
        return False
    return header(message.name, message.role) == TOOLS_NAME
