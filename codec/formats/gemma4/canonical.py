"""What the Gemma 4 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/gemma4.jinja``. The reader (``prompt``) gives
back exactly the result; model turns are split again with the reader's own ``split_turn``, so
the two cannot disagree on where one message ends.

Not a rule, because no rule can mend it: a prompt the reader cannot read at all (a key or tool
name holding ``:`` or white space at either end, a ``parameters`` or ``response`` without the
``type`` whose line closes its brace, a first message that is a dropped tool result followed by
a system message, a ``developer`` message anywhere but first — the template names that role
only for the first message and prints ``<|turn>developer`` for any other) fails ``parse_prompt``.

Longer than ~300 lines: one small function per template behaviour, in the order they apply —
the list is the documentation of what Gemma keeps; tool declarations are in ``declarations``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codec._canonical import Draft, Rule, map_arguments, names_not_printed, tool_responses_not_printed
from codec.formats._prompt import content_of, media
from codec.formats.gemma4.declarations import as_written, declared_function
from codec.formats.gemma4.prompt import header_content
from codec.formats.gemma4.turns import HIDDEN_REASONING, Bare, Channel, Item, Response, split_turn
from codec.models import (
    AnyMessage,
    AssistantMessage,
    Content,
    MediaPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from codec.registry import FormatSpec

_PLACEHOLDERS = {"image": "image", "image_url": "image", "audio": "audio", "input_audio": "audio", "video": "video"}


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _results_without_their_call_dropped,
        _options_as_shown,
        _first_system_message_in_header,
        _media_as_placeholders,
        _text_trimmed,
        _history_reasoning_dropped,
        _arguments_as_written,
        _results_named_as_printed,
        _call_ids_numbered,
        _result_parts_joined,
        _media_after_results,
        _model_turns_split_again,
        _generation_prompt_hidden_after_calls,
        _tools_as_declared,
    ]


def _results_without_their_call_dropped(draft: Draft) -> None:
    """A tool result shows only right after the assistant message whose calls it answers (or
    after another such result); any other is dropped.

    ``{%- if message['role'] != 'tool' -%}`` / ``{%- elif loop_messages[k]['role'] != 'tool' -%}``
    """
    kept: list[AnyMessage] = []
    answering = False
    for message in draft.messages:
        if not isinstance(message, ToolMessage):
            answering = isinstance(message, AssistantMessage) and bool(message.tool_calls)
        if answering or not isinstance(message, ToolMessage):
            kept.append(message)
    draft.messages = kept


def _options_as_shown(draft: Draft) -> None:
    """Only the options the prompt shows: ``enable_thinking`` when true (``<|think|>``), and
    ``preserve_thinking`` when true and some reasoning before the last user message shows it.

    ``{%- set enable_thinking = enable_thinking | default(false) -%}`` /
    ``{%- set thinking_gate = (loop.index0 > ns_turn.last_user_idx) or preserve_thinking -%}``
    """
    options = {"enable_thinking": True} if draft.options.get("enable_thinking") else {}
    if draft.options.get("preserve_thinking") and any(
        isinstance(m, AssistantMessage) and m.reasoning and _history(draft.messages, i)
        for i, m in enumerate(draft.messages)
    ):
        options["preserve_thinking"] = True
    draft.options = options


def _history(messages: list[AnyMessage], index: int) -> bool:
    """Whether a user message follows (the template's ``loop.index0 <= last_user_idx``)."""
    return any(isinstance(m, UserMessage) for m in messages[index + 1 :])


def _first_system_message_in_header(draft: Draft) -> None:
    """The first system message is trimmed, or, given as parts, written as each text trimmed
    with a space after it (a media part as an empty text). Empty, it is lost where thinking or
    tools open the system turn anyway, unless another system message follows it. A first
    ``developer`` message is written the same way, so it comes back as a system message.

    ``{{- messages[0]['content'] | trim -}}`` / ``{{- item['text'] | trim + ' '-}}`` /
    ``{%- if messages and messages[0]['role'] in ['system', 'developer'] -%}``
    """
    if not draft.messages or not isinstance(first := draft.messages[0], SystemMessage):
        return
    content = first.content
    text = (
        content.strip()
        if isinstance(content, str)
        else "".join((part.text.strip() if isinstance(part, TextPart) else "") + " " for part in content)
    )
    opened = draft.options.get("enable_thinking") or draft.tools
    if not text and opened and not (len(draft.messages) > 1 and isinstance(draft.messages[1], SystemMessage)):
        draft.messages = draft.messages[1:]
    else:
        draft.messages[0] = SystemMessage(content=header_content(text))


def _media_as_placeholders(draft: Draft) -> None:
    """A media part shows only as a placeholder (it comes back as a bare ``{"type": "image"}``,
    ``audio`` or ``video``); ``audio_url`` and ``video_url`` parts are not written at all.

    ``{%- elif item.get('type') in ['image', 'image_url'] -%}{{- '<|image|>' -}}`` /
    ``{%- elif item.get('type') in ['audio', 'input_audio'] -%}`` / ``== 'video'``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message.content, tuple) and not _header(draft, index):
            parts = tuple(
                part if isinstance(part, TextPart) else media(_PLACEHOLDERS[part.type])
                for part in message.content
                if isinstance(part, TextPart) or part.type in _PLACEHOLDERS
            )
            draft.messages[index] = message.model_copy(update={"content": parts})


def _header(draft: Draft, index: int) -> bool:
    return index == 0 and isinstance(draft.messages[0], SystemMessage)


def _text_trimmed(draft: Draft) -> None:
    """User, system and assistant text is trimmed, each text part on its own; the parts then
    run together, and empty assistant content is no content.

    ``{{- message['content'] | trim -}}`` / ``{{- item['text'] | trim -}}`` /
    ``strip_thinking(...)``: ``{{- ns.result | trim -}}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) or message.content is None or _header(draft, index):
            continue
        content: Content | None = _trimmed(message.content)
        if isinstance(message, AssistantMessage):
            content = content or None
        draft.messages[index] = message.model_copy(update={"content": content})


def _trimmed(content: Content) -> Content:
    if isinstance(content, str):
        return content.strip()
    return content_of(
        [
            part.text.strip() if isinstance(part, TextPart) else part
            for part in content
            if not isinstance(part, TextPart) or part.text.strip()
        ]
    )


def _history_reasoning_dropped(draft: Draft) -> None:
    """Reasoning before the last user message is dropped unless ``preserve_thinking``, and
    empty reasoning is none. Where a dropped one opened a model turn with thinking off, its
    absence shows (no empty thought channel): it comes back as a placeholder.

    ``{%- set thinking_gate = (loop.index0 > ns_turn.last_user_idx) or preserve_thinking -%}`` /
    ``{%- if role == 'model' and not enable_thinking and not (message.get('reasoning') or ...) -%}``
    """
    preserve = draft.options.get("preserve_thinking", False)
    for index, message in enumerate(draft.messages):
        if not isinstance(message, AssistantMessage) or (
            message.reasoning and (preserve or not _history(draft.messages, index))
        ):
            continue
        hidden = message.reasoning and _opens_turn(draft.messages, index) and not draft.options.get("enable_thinking")
        draft.messages[index] = message.model_copy(update={"reasoning": HIDDEN_REASONING if hidden else None})


def _opens_turn(messages: list[AnyMessage], index: int) -> bool:
    """Whether ``<|turn>model`` is written for the message: the previous message other than a
    tool result is not an assistant's (``continue_same_model_turn`` is false)."""
    before = [m for m in messages[:index] if not isinstance(m, ToolMessage)]
    return not before or not isinstance(before[-1], AssistantMessage)


def _arguments_as_written(draft: Draft) -> None:
    """Arguments are written with their keys sorted, tuples as lists.

    ``{%- for key, value in function['arguments'] | dictsort -%}``
    """
    map_arguments(draft, lambda call: as_written(call.arguments))


def _results_named_as_printed(draft: Draft) -> None:
    """A result shows only the tool name the template finds for it — the name of the call whose
    id it gives, else its own ``name``, else ``unknown`` — not its id.

    ``{%- set ns_tname = namespace(name=follow.get('name') or 'unknown') -%}`` /
    ``{%- if tc.get('id') == follow.get('tool_call_id') -%}``
    """
    calls: tuple[ToolCall, ...] = ()
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage):
            calls = message.tool_calls
        elif isinstance(message, ToolMessage):
            named = [call.name for call in calls if call.id == message.tool_call_id]
            printed = named[-1] if named else message.name or "unknown"
            draft.messages[index] = message.model_copy(update={"tool_call_id": None, "name": printed})


def _call_ids_numbered(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... in order, and a result
    takes the id of the next call of the message with its printed name (results come back
    matched by name and order, not by id).

    ``{{- '<|tool_call>call:' + function['name'] + '{' -}}``
    """
    counter = iter(range(1 << 62))
    calls: list[ToolCall] = []
    answered: dict[str, int] = {}
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage):
            calls = [call.model_copy(update={"id": f"call_{next(counter)}"}) for call in message.tool_calls]
            answered = {}
            draft.messages[index] = message.model_copy(update={"tool_calls": tuple(calls)})
        elif isinstance(message, ToolMessage) and message.name is not None:
            same = [call for call in calls if call.name == message.name]
            nth = answered[message.name] = answered.get(message.name, -1) + 1
            if nth < len(same):
                draft.messages[index] = message.model_copy(update={"tool_call_id": same[nth].id, "name": None})


def _result_parts_joined(draft: Draft) -> None:
    """A result given as parts is written as its text parts joined (untrimmed) as one string
    value, then the placeholders of its media parts.

    ``{{- format_tool_response_block(ns_tname.name, ns_txt.s) -}}`` then ``'<|image|>'`` ...
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and isinstance(message.content, tuple):
            text, placeholders = _split_media(message.content)
            content = content_of(([text] if text else []) + placeholders)
            draft.messages[index] = message.model_copy(update={"content": content})


def _split_media(content: tuple[Any, ...]) -> tuple[str, list[str | MediaPart]]:
    text = "".join(part.text for part in content if isinstance(part, TextPart))
    return text, [part for part in content if isinstance(part, MediaPart)]


def _media_after_results(draft: Draft) -> None:
    """Media placeholders that open the content of a message with results cannot be told from
    the last result's own, written just before them: they come back as the last result's —
    unless the content is nothing else and ends the turn, where ``<turn|>`` shows there was
    content: then the last result's placeholders come back as the message's too.

    ``{{- '<tool_response|>' -}}`` ... ``{{- captured_content -}}`` /
    ``{%- elif not (ns_tr_out.flag and not has_content) -%}{{- '<turn|>\\n' -}}``
    """
    for index, message in enumerate(draft.messages):
        results = _results_after(draft.messages, index) if isinstance(message, AssistantMessage) else []
        parts = _parts(message.content)
        leading = _leading_media(parts)
        if not results or not leading:
            continue
        last = index + len(results)
        own = _parts(results[-1].content)
        if len(leading) == len(parts) and _ends_turn(draft.messages, index):
            text, parts = own[:1] if own and isinstance(own[0], str) else [], own + parts
            parts = parts[len(text) :]
        else:
            text, parts = own + leading, parts[len(leading) :]
        draft.messages[last] = results[-1].model_copy(update={"content": content_of(text)})
        draft.messages[index] = message.model_copy(update={"content": content_of(parts) or None})


def _results_after(messages: list[AnyMessage], index: int) -> list[ToolMessage]:
    results = []
    for message in messages[index + 1 :]:
        if not isinstance(message, ToolMessage):
            break
        results.append(message)
    return results


def _ends_turn(messages: list[AnyMessage], index: int) -> bool:
    after = [m for m in messages[index + 1 :] if not isinstance(m, ToolMessage)]
    return not after or not isinstance(after[0], AssistantMessage)


def _leading_media(parts: list[str | MediaPart]) -> list[str | MediaPart]:
    count = next((i for i, part in enumerate(parts) if not isinstance(part, MediaPart)), len(parts))
    return parts[:count]


def _parts(content: Content | None) -> list[str | MediaPart]:
    if content is None or isinstance(content, str):
        return [content] if content else []
    return [part.text if isinstance(part, TextPart) else part for part in content]


def _model_turns_split_again(draft: Draft) -> None:
    """Assistant messages that follow each other share one model turn, joined by a new line,
    so a message ends only where the prompt shows it must: at a bare ``<|tool_response>``
    (calls without results), before a thought channel or a call, and at a new line that trimmed
    content cannot hold. Anything else runs into one message (text-only answers join the
    message before them).

    ``{%- set continue_same_model_turn = (role == 'model' and ns.prev_non_tool_role == 'assistant') -%}``
    / ``{%- elif continues_into_next -%}{{- '\\n' -}}``
    """
    messages, start, result = draft.messages, 0, []
    while start < len(messages):
        end = start + 1
        if isinstance(messages[start], AssistantMessage):
            while end < len(messages) and isinstance(messages[end], (AssistantMessage, ToolMessage)):
                end += 1
            result += _split(draft, start, end)
        else:
            result.append(messages[start])
        start = end
    draft.messages = result


def _split(draft: Draft, start: int, end: int) -> list[AnyMessage]:
    """One model turn, written then read back. A ``<|turn>model`` generation prompt after the
    last turn shows that its last message has no results (``split_turn``'s ``plain_last``)."""
    items, closed = _turn_items(draft, start, end)
    last = [m for m in draft.messages[start:end] if isinstance(m, AssistantMessage)][-1]
    plain_last = end == len(draft.messages) and draft.add_generation_prompt and not last.tool_calls
    return split_turn(items, thinking=bool(draft.options.get("enable_thinking")), closed=closed, plain_last=plain_last)


def _turn_items(draft: Draft, start: int, end: int) -> tuple[list[Item], bool]:
    """What the template writes for a turn's messages, item by item, and whether ``<turn|>``
    closes it."""
    items: list[Item] = []
    turn = draft.messages[start:end]
    last = max(i for i, m in enumerate(turn) if isinstance(m, AssistantMessage))
    closed = True
    for index, message in enumerate(turn):
        if not isinstance(message, AssistantMessage):
            continue
        results = _results_after(turn, index)
        items += _opening(draft, message, start + index, first=index == 0)
        items += message.tool_calls
        for result in results:
            items += _result_items(result, message.tool_calls)
        items += _parts(message.content)
        if message.tool_calls and not results:
            items.append(Bare())
            closed = False
        elif index != last:
            items.append("\n")
        else:
            closed = not (results and message.content is None)
    return items, closed


def _opening(draft: Draft, message: AssistantMessage, index: int, first: bool) -> list[Item]:
    """The empty channel that opens a turn with thinking off, or the reasoning when shown."""
    if first and not draft.options.get("enable_thinking") and not message.reasoning:
        return [Channel(None)]
    if message.reasoning and (draft.options.get("preserve_thinking") or not _history(draft.messages, index)):
        return [Channel(message.reasoning)]
    return []


def _result_items(result: ToolMessage, calls: tuple[ToolCall, ...]) -> list[Item]:
    named = [call.name for call in calls if call.id == result.tool_call_id]
    name = named[-1] if named else result.name or "unknown"
    text, placeholders = _split_media(result.content) if isinstance(result.content, tuple) else (result.content, [])
    return [Response(name, {"value": text}), *[p for p in placeholders if isinstance(p, MediaPart)]]


def _generation_prompt_hidden_after_calls(draft: Draft) -> None:
    """After a message with calls no ``<|turn>model`` generation prompt is written; only the
    open thought channel written after results with thinking on shows that one was asked for.
    Otherwise ``add_generation_prompt`` comes back false.

    ``{%- if ns.prev_message_type != 'tool_response' and ns.prev_message_type != 'tool_call' -%}`` /
    ``{%- elif ns.prev_message_type == 'tool_response' and enable_thinking -%}``
    """
    last = next((m for m in reversed(draft.messages) if not isinstance(m, ToolMessage)), None)
    if not draft.add_generation_prompt or not isinstance(last, AssistantMessage) or not last.tool_calls:
        return
    if not (isinstance(draft.messages[-1], ToolMessage) and draft.options.get("enable_thinking")):
        draft.add_generation_prompt = False


def _tools_as_declared(draft: Draft) -> None:
    """Tools come back as their declarations show them: the function's name, description and
    parameters (other keys such as ``strict`` are lost); in each property only ``description``,
    ``enum`` (strings), ``items`` (arrays), ``properties`` and ``required`` (objects; an object
    without properties lists its other keys as properties), ``nullable`` (when true) and
    ``type`` (upper-cased, read back lower-cased; a list of types as Python prints it) — every
    other key (``format``, ``default``, ``minimum``, ...) is lost, except inside ``items``,
    which are written whole.

    ``{{- format_function_declaration(tool) | trim -}}`` /
    ``type:<|"|>{{ value['type'] | upper }}<|"|>}`` / ``{{ item_key }}:{{ format_argument(item_value) }}``
    """
    draft.tools = [{"type": "function", "function": declared_function(tool["function"])} for tool in draft.tools]
