"""What the Solar Open template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/solar_open.jinja``. The reader
(``prompt``) gives back exactly the result.

Not a rule, because no conversation could state it: the system block's sections are found by
the headings the template writes, so a system message or ``response_format`` that itself holds
the output format section's heading and closing lines is read differently (the last heading
wins).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from codec._canonical import Draft, Rule, map_arguments, names_not_printed, tool_responses_not_printed
from codec.formats.solar_open.prompt import response_format_value
from codec.models import (
    AnyMessage,
    AssistantMessage,
    SystemMessage,
    ToolMessage,
    UserMessage,
    content_to_openai,
)
from codec.render.values import plain

if TYPE_CHECKING:
    from codec.registry import FormatSpec

_BLANK = "\n\n"


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    # Hoisting comes after the rules that change messages in place, so that their losses are
    # reported at the caller's message indices.
    return [
        names_not_printed,
        tool_responses_not_printed,
        _parts_printed,
        _tools_as_printed,
        _reasoning_shown,
        _content_beside_calls_dropped,
        _arguments_as_json,
        _result_names,
        _system_messages_first,
        _think_render_option_shown,
        _provider_section,
        _response_format_as_printed,
        _low_effort_only,
    ]


def _parts_printed(draft: Draft) -> None:
    """System and tool content given as a list of parts is printed as Jinja prints a list
    (Python's repr of the part dicts): it comes back as that text.

    ``{{- system_message }}`` / ``{{- message.content }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, (SystemMessage, ToolMessage)) and not isinstance(message.content, str):
            printed = str(plain(content_to_openai(message.content)))
            draft.messages[index] = message.model_copy(update={"content": printed})


def _tools_as_printed(draft: Draft) -> None:
    """Only each tool's function object is printed, as JSON: a tool comes back as
    ``{"type": "function", "function": <that JSON>}`` (other keys of the tool are lost).

    ``{{- tool.function | tojson }}``
    """
    draft.tools = [{"type": "function", "function": _as_json(t["function"])} for t in draft.tools]


def _as_json(value: Any) -> Any:
    return json.loads(json.dumps(plain(value), ensure_ascii=False))


def _system_messages_first(draft: Draft) -> None:
    """All system messages are printed in the one leading system block, each after a blank
    line: they come back first, their texts joined by "\\n\\n" and split again at every
    "\\n\\n" (a message holding a blank line comes back as two). Where system messages stood
    between two tool results, the results are printed as two blocks: as many of the last
    system texts as there are such places go back there.

    ``{%- set ns.system_messages = ns.system_messages + [message.content] -%}`` /
    ``{{- "\\n\\n" }}{{- system_message }}`` /
    ``{%- set prev_is_tool = loop.index0 > 0 and messages[loop.index0 - 1].role == 'tool' -%}``
    """
    contents = [m.content for m in draft.messages if isinstance(m, SystemMessage)]
    if not contents:
        return
    texts = _BLANK.join(str(content) for content in contents).split(_BLANK)
    others, splits = _without_system(draft.messages)
    kept = len(texts) - len(splits)
    spare = iter(texts[kept:])
    messages: list[AnyMessage] = [SystemMessage(content=text) for text in texts[:kept]]
    for index, message in enumerate(others):
        if index in splits:
            messages.append(SystemMessage(content=next(spare)))
        messages.append(message)
    draft.messages = messages


def _without_system(messages: list[AnyMessage]) -> tuple[list[AnyMessage], set[int]]:
    """The other messages, and the positions among them of tool results that follow another
    tool result with only system messages between."""
    others: list[AnyMessage] = []
    splits: set[int] = set()
    system_after_tool = False
    for message in messages:
        if isinstance(message, SystemMessage):
            after_tool = bool(others) and isinstance(others[-1], ToolMessage)
            system_after_tool = system_after_tool or after_tool
            continue
        if system_after_tool and isinstance(message, ToolMessage):
            splits.add(len(others))
        system_after_tool = False
        others.append(message)
    return others, splits


def _reasoning_shown(draft: Draft) -> None:
    """Reasoning is printed only when non-empty and — with ``think_render_option`` "lastthink"
    (the default) — only after the last user message; "all" prints it everywhere, any other
    value nowhere. Reasoning not printed comes back as ``None``.

    ``{%- if message.reasoning and loop.index0 > last_user_idx.value -%}``
    """
    option = draft.options.get("think_render_option", "lastthink")
    last_user = _last_user(draft.messages)
    for index, message in enumerate(draft.messages):
        if not isinstance(message, AssistantMessage):
            continue
        shown = option == "all" or (option == "lastthink" and index > last_user)
        reasoning = message.reasoning if shown and message.reasoning else None
        draft.messages[index] = message.model_copy(update={"reasoning": reasoning})


def _last_user(messages: list[AnyMessage]) -> int:
    return max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=-1)


def _content_beside_calls_dropped(draft: Draft) -> None:
    """An assistant message with tool calls is printed without its content. (Without calls,
    empty content stays ``""``: the template cannot print a message without content.)

    ``{%- if message.tool_calls -%}{{- "<|begin|>assistant<|tool_calls|>" }}`` … ``{%- else -%}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            draft.messages[index] = message.model_copy(update={"content": None})


def _arguments_as_json(draft: Draft) -> None:
    """Arguments are printed as JSON and come back as JSON reads them (a tuple as a list, a
    number key as a string).

    ``{%- if tool_arguments is mapping -%}{{- tool_arguments | tojson }}``
    """
    map_arguments(draft, lambda call: _as_json(call.arguments))


def _result_names(draft: Draft) -> None:
    """A tool result's ``name`` is not printed; the template prints the name of the call with
    the result's id (of every call with that id, joined), or nothing: that comes back as
    ``name`` (``None`` for nothing).

    ``{{- get_tool_name(messages, message.tool_call_id) }}``
    """
    names: dict[str | None, str] = {}
    for message in draft.messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                names[call.id] = names.get(call.id, "") + call.name
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage):
            name = names.get(message.tool_call_id) or None
            draft.messages[index] = message.model_copy(update={"name": name})


def _think_render_option_shown(draft: Draft) -> None:
    """``think_render_option`` shows only as reasoning printed before the last user message:
    then it comes back as "all"; otherwise it is dropped (its effect is in the messages).

    ``{%- if think_render_option == "all" -%}{%- if message.reasoning -%}``
    """
    option = draft.options.pop("think_render_option", None)
    last_user = _last_user(draft.messages)
    early = draft.messages[: max(last_user, 0)]
    if option == "all" and any(isinstance(m, AssistantMessage) and m.reasoning for m in early):
        draft.options["think_render_option"] = "all"


def _provider_section(draft: Draft) -> None:
    """The provider section (``default_system_prompt``, on by default) prints the date: it
    comes back as option ``now`` ("YYYY-MM-DD"); without it, ``default_system_prompt=False``.

    ``"… The current date is " + strftime_now("%Y-%m-%d") + "."``
    """
    if draft.options.pop("default_system_prompt", True):
        draft.options["now"] = draft.now.strftime("%Y-%m-%d")
    else:
        draft.options["default_system_prompt"] = False


def _response_format_as_printed(draft: Draft) -> None:
    """``response_format`` is printed as Jinja prints it (a dict as Python's repr): it comes
    back as a dict when that text reads back as exactly that dict, else as the text; an empty
    one is not printed and is dropped.

    ``{%- if response_format -%}`` … ``{{- response_format }}``
    """
    value = plain(draft.options.pop("response_format", None))
    if value:
        draft.options["response_format"] = response_format_value(str(value))


def _low_effort_only(draft: Draft) -> None:
    """``reasoning_effort`` shows only as the empty think turn that "low" and "minimal" put
    before the generation prompt: it comes back as "low"; any other effort is dropped.

    ``{%- if reasoning_effort in ["low", "minimal"] -%}{{- "<|begin|>assistant<|think|><|end|>" }}``
    """
    effort = draft.options.pop("reasoning_effort", None)
    if draft.add_generation_prompt and effort in ("low", "minimal"):
        draft.options["reasoning_effort"] = "low"
