"""What the DeepSeek-V3.2 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/deepseek_v3_2.jinja``. The reader (``prompt``) gives
back exactly the result. The template writes an assistant message's header (``<｜Assistant｜>``
after a user message, ``\\n\\n`` after a closed block of tool results) only where one is pending,
and reasoning only in such a header after the last user message with thinking on; the rules
that depend on it follow its bookkeeping (``_headers``) over the messages as given, before the
system messages are moved to the front. Arguments are not lost: the ``string`` attribute says
whether a value is a string written raw or anything else written as JSON (``prompt.typed``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.models import AnyMessage, AssistantMessage, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

_BLANK = "\n\n"


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _thinking_option,
        _reasoning_in_headers_only,
        _generation_prompt_where_pending,
        _developer_dropped,
        _system_messages_joined,
        _opening_reply_joins_the_system_text,
        _no_content_is_empty,
        _tool_result_names,
        _call_ids,
    ]


def _headers(messages: list[AnyMessage]) -> tuple[dict[int, bool], bool]:
    """Which assistant messages get a header, and whether one is pending at the end (the
    generation prompt is written only then): the template's ``state`` over the messages.

    A block of results closes (and a header becomes pending) at the result whose distance from
    the last assistant message with calls equals that message's number of calls
    (``call_order == tool_call_count``); with no such message, ``messages[-1]`` is counted.
    """
    asked = tool_wait = False
    headers: dict[int, bool] = {}
    for index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            asked, tool_wait = True, False
        elif isinstance(message, AssistantMessage):
            headers[index] = asked or tool_wait
            asked = tool_wait = False
        elif isinstance(message, ToolMessage) and _closes(messages, index):
            asked, tool_wait = False, True
    return headers, asked or tool_wait


def _closes(messages: list[AnyMessage], index: int) -> bool:
    """Whether the tool result at ``index`` closes its block of results."""
    owner = max((i for i in range(index) if _calls(messages[i])), default=-1)
    return index - owner == _calls(messages[owner])


def _calls(message: AnyMessage) -> int:
    return len(message.tool_calls) if isinstance(message, AssistantMessage) else 0


def _after_last_user(messages: list[AnyMessage]) -> int:
    """The index of the last user or developer message (``last_user_idx``), -1 without one."""
    return max((i for i, m in enumerate(messages) if isinstance(m, UserMessage) or _developer(m)), default=-1)


def _developer(message: AnyMessage) -> bool:
    return isinstance(message, SystemMessage) and message.role == "developer"


def _thinking(draft: Draft) -> bool:
    return bool(draft.options.get("thinking", draft.options.get("enable_thinking", False)))


def _thinking_option(draft: Draft) -> None:
    """``thinking`` (or ``enable_thinking`` when ``thinking`` is not given) shows only as
    ``<think>`` in a header after the last user message, and in the generation prompt
    (``<think>`` against ``<think></think>``); elsewhere it leaves no trace, and off it is the
    default.

    ``{%- if is_after_last_user and thinking -%}{{- thinking_start_token -}}`` /
    ``{%- if thinking -%}{{- thinking_start_token -}}{%- else -%}{{- thinking_start_token + thinking_end_token -}}``
    """
    headers, pending = _headers(draft.messages)
    last_user = _after_last_user(draft.messages)
    shown = (draft.add_generation_prompt and pending) or any(h and i > last_user for i, h in headers.items())
    draft.options = {"thinking": True} if shown and _thinking(draft) else {}


def _reasoning_in_headers_only(draft: Draft) -> None:
    """Reasoning is written only inside a header of an assistant message after the last user
    message, with thinking on; elsewhere (a message with no header, an earlier turn, thinking
    off) it is lost, and empty reasoning is none.

    ``{%- if is_after_last_user and thinking -%}{{- thinking_start_token -}}{{- message['reasoning_content'] -}}``
    """
    headers, _ = _headers(draft.messages)
    last_user = _after_last_user(draft.messages)
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            shown = headers[index] and index > last_user and _thinking(draft)
            kept = message.reasoning or None if shown else None
            draft.messages[index] = message.model_copy(update={"reasoning": kept})


def _generation_prompt_where_pending(draft: Draft) -> None:
    """The generation prompt is written only where a header is pending: after a user message,
    or after a closed block of tool results; after an answer it leaves no trace.

    ``{%- if add_generation_prompt -%}{%- if state.pending_asst_marker -%}…{%- elif state.pending_tool_marker -%}``
    """
    _, pending = _headers(draft.messages)
    draft.add_generation_prompt = draft.add_generation_prompt and pending


def _developer_dropped(draft: Draft) -> None:
    """A developer message is never written (it counts as a user turn only, for which turns
    keep their reasoning): it is lost.

    ``{%- if message['role'] == 'user' or message['role'] == 'developer' -%}`` /
    ``{%- set last_user_idx.value = loop.index0 -%}`` (no branch writes it)
    """
    draft.messages = [m for m in draft.messages if not _developer(m)]


def _system_messages_joined(draft: Draft) -> None:
    """Every system message is written first, wherever it stood, their texts joined by a blank
    line: they come back as one system message at the start (none when the text is empty).

    ``{%- set ns.system_prompt = ns.system_prompt + '\\n\\n' + (message['content'] or '') -%}``
    """
    texts = [m.content or "" for m in draft.messages if isinstance(m, SystemMessage)]
    if not texts:
        return
    rest: list[AnyMessage] = [m for m in draft.messages if not isinstance(m, SystemMessage)]
    joined = _BLANK.join(str(text) for text in texts)
    draft.messages = ([SystemMessage(content=joined)] if joined else []) + rest


def _opening_reply_joins_the_system_text(draft: Draft) -> None:
    """An assistant message before any user message or tool result has no header: without
    tools its content runs on from the system text, and the two come back as that message's
    content (with tools, the tools block stands between them).

    ``{{- bos_token -}}{{- ns.system_prompt -}}``, then
    ``{%- if message['content'] is defined and message['content'] -%}``
    """
    messages = draft.messages
    start = 1 if messages and isinstance(messages[0], SystemMessage) else 0
    reply = messages[start] if start < len(messages) else None
    if not isinstance(reply, AssistantMessage) or draft.tools:
        return
    system = str(messages[0].content) if start else ""
    text = system + (reply.content if isinstance(reply.content, str) else "")
    content = text or (None if reply.tool_calls else "")
    draft.messages = [reply.model_copy(update={"content": content}), *messages[start + 1 :]]


def _no_content_is_empty(draft: Draft) -> None:
    """An assistant message's empty content is written as nothing: with calls it reads back as
    no content, without calls as empty content.

    ``{%- if message['content'] is defined and message['content'] -%}{{- message['content'] -}}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and not message.content:
            draft.messages[index] = message.model_copy(update={"content": None if message.tool_calls else ""})


def _tool_result_names(draft: Draft) -> None:
    """A tool result shows its content only, inside the ``<function_results>`` block.

    ``{{- '\\n<result>' + (message['content'] or '') + '</result>' -}}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _call_ids(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... in order, and a tool
    result takes the id of the call at its position in the run of results after its assistant
    message.

    ``{{- '<' + dsml_token + 'invoke name="' + func['name'] + '">\\n' -}}`` (no id)
    """
    number_calls(draft)
