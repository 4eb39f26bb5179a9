"""What the GLM templates keep of a conversation (``glm`` and ``glm-effort``), rule by rule.

Template lines are quoted from ``templates/glm.jinja``; ``glm_effort.jinja`` shares them and adds
its effort personas and control tags (the ``_effort_*`` rules).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from codec._canonical import Draft, Rule, map_arguments, names_not_printed, tool_responses_not_printed
from codec.engine.grammar import compiled
from codec.formats._prompt import content_of, media
from codec.formats.glm.effort import (
    effort_control_tags,
    effort_control_text_as_parts,
    effort_empty_last_turn,
    effort_options,
)
from codec.formats.glm.prompt import HIDDEN_TOOL, retyped
from codec.models import (
    AnyMessage,
    AssistantMessage,
    Content,
    MediaPart,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from codec.registry import FormatSpec

GRAMMAR = "glm.lark"

_MEDIA = {
    "image": "image",
    "image_url": "image",
    "video": "video",
    "video_url": "video",
    "audio": "audio",
    "audio_url": "audio",
    "input_audio": "audio",
}


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    common: list[Rule] = [
        names_not_printed,
        tool_responses_not_printed,
        _tools_as_listed,
        _think_in_content,
        _clear_thinking,
        _visible_content,
        _assistant_content_stripped,
        _arguments_as_written,
        _tool_result_order,
        _call_ids,
    ]
    if spec.control_tags:
        return [effort_control_tags, *common, effort_options, effort_empty_last_turn, effort_control_text_as_parts]
    return [*common, _effort_header]


def _tools_as_listed(draft: Draft) -> None:
    """Tools are listed as their function object, one JSON line each, without the keys
    ``defer_loading`` and ``strict``; a tool with ``defer_loading`` set is left out.

    ``{%- if 'function' in tool -%}{%- set tool = tool['function'] -%}`` /
    ``{%- if k != 'defer_loading' and k != 'strict' -%}`` /
    ``{% if tool.defer_loading is not defined or not tool.defer_loading %}``
    """
    listed = []
    for tool in draft.tools:
        function = tool.get("function", tool)
        if not function.get("defer_loading"):
            kept = {k: v for k, v in function.items() if k not in ("defer_loading", "strict")}
            listed.append({"type": "function", "function": kept})
    # Tools that are all deferred still open the tools block, listing nothing: one hidden tool
    # stands for them (what parse_prompt gives back for an empty listing).
    draft.tools = listed or ([dict(HIDDEN_TOOL)] if draft.tools else [])


def _think_in_content(draft: Draft) -> None:
    """Content of the form ``<think>R</think>answer`` on a message without reasoning becomes
    reasoning ``R`` and content ``answer``.

    ``{%- set reasoning_content = content.split('</think>')[0].split('<think>')[-1] %}``
    """
    think_open, think_close = _think_markers()
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is None:
            text = _visible(message.content)
            if isinstance(text, str) and think_close in text:
                reasoning = text.split(think_close)[0].split(think_open)[-1]
                draft.messages[index] = message.model_copy(
                    update={"reasoning": reasoning, "content": text.split(think_close)[-1]}
                )


@cache
def _think_markers() -> tuple[str, str]:
    """``<think>`` and ``</think>``, from the grammar (``THINK_OPEN``, ``THINK_CLOSE``)."""
    grammar = compiled(GRAMMAR)
    return grammar.display("THINK_OPEN"), grammar.display("THINK_CLOSE")


def _clear_thinking(draft: Draft) -> None:
    """With ``clear_thinking``, reasoning of turns up to the last user message is blanked.

    ``{%- if (not clear_thinking or loop.index0 > ns.last_user_index) and reasoning_content is defined -%}``
    """
    if not draft.options.get("clear_thinking"):
        return
    last_user = max((i for i, m in enumerate(draft.messages) if isinstance(m, UserMessage)), default=-1)
    for index, message in enumerate(draft.messages[: last_user + 1]):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _visible_content(draft: Draft) -> None:
    """Content parts show as text and media placeholders: adjacent text joins, image/video/
    audio parts come back as bare ``{"type": "image"}`` (the URL is not in the prompt), and
    text-only lists become a string. Empty reasoning is no reasoning (``<think></think>``).

    ``{%- if item is mapping and item.type == 'text' -%}{{- item.text -}}`` /
    ``{%- elif item is mapping and item.type in ['image', 'image_url'] -%}{{- emit_image() -}}``
    """
    for index, message in enumerate(draft.messages):
        update: dict[str, Any] = {"content": _visible(message.content)}
        if isinstance(message, AssistantMessage):
            update["reasoning"] = message.reasoning or None
        if isinstance(message, ToolMessage):
            update["name"] = None  # ``render_tool_response`` prints only the content
        draft.messages[index] = message.model_copy(update=update)


def _visible(content: Content | None) -> Content | None:
    if content is None or isinstance(content, str):
        return content
    parts: list[str | MediaPart] = [
        part.text if isinstance(part, TextPart) else media(_MEDIA[part.type])
        for part in content
        if isinstance(part, TextPart) or part.type in _MEDIA
    ]
    return content_of(parts)


def _assistant_content_stripped(draft: Draft) -> None:
    """Assistant content is stripped of surrounding white space; nothing left is no content.

    ``{%- if content.strip() -%}{{ content.strip() }}{%- endif -%}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage):
            draft.messages[index] = message.model_copy(update={"content": _stripped(message.content)})


def _stripped(content: Content | None) -> Content | None:
    if content is None:
        return None
    if isinstance(content, str):
        return content.strip() or None
    parts: list[str | MediaPart] = [p.text if isinstance(p, TextPart) else p for p in content]
    if parts and isinstance(parts[0], str):
        parts[0] = parts[0].lstrip()
    if parts and isinstance(parts[-1], str):
        parts[-1] = parts[-1].rstrip()
    parts = [p for p in parts if p != ""]
    return content_of(parts) if parts else None


def _arguments_as_written(draft: Draft) -> None:
    """Argument values are written as text — a string raw, anything else as JSON — and read
    back by the tool's schema: a string that reads as another JSON value exactly as ``tojson``
    writes it, for a parameter that is not a plain string, comes back as that value (``"3"`` →
    ``3``; a ``string|null`` parameter's ``"null"`` → ``None``; ``"1e5"`` stays a string).

    ``<arg_value>{{ v | tojson(ensure_ascii=False) if v is not string else v }}</arg_value>``
    """
    map_arguments(draft, lambda call: retyped(draft.tools, call))


def _tool_result_order(draft: Draft) -> None:
    """A block of tool results is put in the order of the calls before it when every result's
    id names exactly one of those calls (and the calls' ids are present and distinct); else it
    stays as given.

    ``{%- if ns_chk.can_sort -%}{%- for tc in ns_a.tool_calls -%}…{%- if tk_id == tc_id -%}``
    """
    messages, index = draft.messages, 0
    while index < len(messages):
        end = index
        while end < len(messages) and isinstance(messages[end], ToolMessage):
            end += 1
        if end > index:
            previous = messages[index - 1] if index else None
            messages[index:end] = _sorted_results(previous, messages[index:end])
        index = end + 1


def _sorted_results(previous: AnyMessage | None, block: list[AnyMessage]) -> list[AnyMessage]:
    if not isinstance(previous, AssistantMessage) or not previous.tool_calls:
        return block
    call_ids = [call.id for call in previous.tool_calls]
    result_ids = [m.tool_call_id for m in block if isinstance(m, ToolMessage)]
    if not all(call_ids) or len(set(call_ids)) != len(call_ids):
        return block
    if not all(result_ids) or len(set(result_ids)) != len(result_ids) or not set(result_ids) <= set(call_ids):
        return block
    by_id = {m.tool_call_id: m for m in block if isinstance(m, ToolMessage)}
    return [by_id[call_id] for call_id in call_ids if call_id in by_id]


def _call_ids(draft: Draft) -> None:
    """Calls carry no ids in GLM: they are numbered ``call_0``, ``call_1``, ... in order, and a
    tool result takes the id of the call at its position in the turn before its block.

    ``{{- '<tool_call>' + tc.name -}}`` (no id) / ``{{- tool_response(m.content) -}}``
    """
    count = 0
    calls: tuple[ToolCall, ...] = ()
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage):
            renamed = []
            for call in message.tool_calls:
                renamed.append(call.model_copy(update={"id": f"call_{count}"}))
                count += 1
            calls = tuple(renamed)
            draft.messages[index] = message.model_copy(update={"tool_calls": calls})
        elif isinstance(message, ToolMessage):
            position = _position_in_block(draft.messages, index)
            opener = index - position - 1  # the message before the block
            after_assistant = opener >= 0 and isinstance(draft.messages[opener], AssistantMessage)
            own = calls[position].id if after_assistant and position < len(calls) else None
            draft.messages[index] = message.model_copy(update={"tool_call_id": own})
        else:
            calls = ()


def _position_in_block(messages: list[AnyMessage], index: int) -> int:
    position = 0
    while index - position - 1 >= 0 and isinstance(messages[index - position - 1], ToolMessage):
        position += 1
    return position


def _effort_header(draft: Draft) -> None:
    """The prompt shows only the effective effort: ``low`` and ``high`` as given, anything else
    as ``max``; other options leave no trace of their own.

    ``{%- set effective_reasoning_effort = reasoning_effort if … in ['low', 'high'] else 'max' -%}``
    """
    effort = draft.options.get("reasoning_effort")
    draft.options = {"reasoning_effort": effort if effort in ("low", "high") else "max"}
