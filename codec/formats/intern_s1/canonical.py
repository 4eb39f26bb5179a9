"""What the Intern-S1 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/intern_s1.jinja``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.engine.grammar import compiled
from codec.formats.intern_s1.texts import default_system, written
from codec.models import (
    AnyMessage,
    AssistantMessage,
    Content,
    ContentPart,
    SystemMessage,
    TextPart,
    ToolMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from codec.registry import FormatSpec

GRAMMAR = "intern_s1.lark"
_OFF = {"enable_thinking": False}


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _content_as_written,
        _think_in_content,
        _content_lstripped,
        _later_system_dropped,
        _system_and_thinking,
        _reasoning_after_the_last_query,
        _tool_result_names,
        _call_ids,
    ]


def _content_as_written(draft: Draft) -> None:
    """Content given as a list of parts is written part by part, each after a new line: it comes
    back as one string without images; a video is the text ``<video>``, and an audio part or an
    ``image_url`` part is dropped. ``None`` content is empty.

    ``{%- if _content.type == 'image' %}{%- set ns.content = ns.content ~ '\\n<IMG_CONTEXT>' %}`` /
    ``{%- elif _content.type == 'text' %}{%- set ns.content = ns.content ~ '\\n' ~ _content.text %}``
    """
    for index, message in enumerate(draft.messages):
        content = written(message.content)
        if content != message.content:
            draft.messages[index] = message.model_copy(update={"content": content})


@cache
def _think_markers() -> tuple[str, str]:
    """``<think>`` and ``</think>``, from the grammar (``THINK_OPEN``, ``THINK_CLOSE``)."""
    grammar = compiled(GRAMMAR)
    return grammar.display("THINK_OPEN"), grammar.display("THINK_CLOSE")


def _think_in_content(draft: Draft) -> None:
    """Content of the form ``<think>R</think>answer`` on a message without reasoning becomes
    reasoning ``R`` (stripped of white space) and content ``answer`` (only with
    ``allow_special_tokens``).

    ``{%- set reasoning_content = content.split('</think>')[0].strip().split('<think>')[-1].strip() %}``
    """
    think_open, think_close = _think_markers()
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is None:
            text = message.content
            if isinstance(text, str) and think_close in text:
                reasoning = text.split(think_close)[0].strip().split(think_open)[-1].strip()
                content = text.split(think_close)[-1]
                draft.messages[index] = message.model_copy(update={"reasoning": reasoning, "content": content})


def _content_lstripped(draft: Draft) -> None:
    """Every message's text loses the new lines it starts with.

    ``{%- set content = content.lstrip('\\n') %}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message.content, str) and message.content.startswith("\n"):
            draft.messages[index] = message.model_copy(update={"content": message.content.lstrip("\n")})


def _later_system_dropped(draft: Draft) -> None:
    """A system message that is not the first message is not written at all.

    ``{%- if role != 'system' %}<|im_start|>{{ role }}`` (only the first message's system text
    is kept, ``{%- if loop.index0 == 0 %}``)
    """
    draft.messages[1:] = [m for m in draft.messages[1:] if not isinstance(m, SystemMessage)]


def _system_and_thinking(draft: Draft) -> None:
    """The first system block holds the system text stripped of new lines, or the template's
    default system prompt when thinking is on, or nothing. An empty system text writes no block
    (without tools), and the default prompt reads back as no system message; ``enable_thinking``
    shows only there and in the generation prompt (``<think>`` is pre-opened unless it is false).

    ``{%- elif enable_thinking is not defined or enable_thinking %}`` /
    ``{%- set system_prompt = system_prompt + default_thinking_sys %}`` /
    ``{%- set system_prompt = system_prompt.strip('\\n') %}``
    """
    thinking = bool(draft.options.get("enable_thinking", True))
    shown = draft.add_generation_prompt
    first = draft.messages[0] if draft.messages else None
    rest = draft.messages[1:] if isinstance(first, SystemMessage) else draft.messages
    if first is not None:
        text = _block_text(first, thinking)
        keep, draft.options = _kept(text, thinking, shown, bool(draft.tools and not rest))
        draft.messages = ([SystemMessage(content=keep)] if keep is not None else []) + list(rest)
    if not draft.messages:  # the loop that writes the system block (and the tools) never runs
        draft.options = {} if thinking or not shown else dict(_OFF)
        draft.tools = []


def _block_text(first: AnyMessage, thinking: bool) -> Content:
    """The text of the first system block, before any tools: the system message's, stripped of
    new lines, or the default prompt (thinking on), or nothing."""
    text = first.content if isinstance(first, SystemMessage) else default_system() if thinking else ""
    return text.strip("\n") if isinstance(text, str) else _rstripped(text or ())


def _kept(text: Content, thinking: bool, shown: bool, alone: bool) -> tuple[Content | None, dict[str, Any]]:
    """The system message that reads back (``None``: none) and the options: an empty text is
    kept only where the block it leaves out (the default), or a block of tools ``alone``, tells it
    from none; the default text is none unless thinking is off where the generation prompt shows it."""
    off = dict(_OFF) if shown and not thinking else {}
    if text == "":
        keep = "" if (shown and thinking) or alone else None
        return keep, (off if keep == "" else dict(_OFF))
    if text == default_system():
        return (text if shown and not thinking else None), off
    return text, off


def _rstripped(parts: tuple[ContentPart, ...]) -> Content:
    """Parts whose last text part has lost the new lines it ends with (an emptied one is gone)."""
    last = parts[-1] if parts else None
    if not isinstance(last, TextPart):
        return parts
    text = last.text.rstrip("\n")
    return (*parts[:-1], TextPart(text=text)) if text else parts[:-1]


def _reasoning_after_the_last_query(draft: Draft) -> None:
    """Reasoning is written only for assistant messages after the last user message, each of
    them with a thought (empty when it has no reasoning, read back as none), stripped of new
    lines. Other reasoning is lost.

    ``{% if loop.index0 > ns.last_query_index and (loop.last or (not loop.last and reasoning_content)) %}`` /
    ``{%- set reasoning_content = '<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n' %}``
    """
    messages = draft.messages
    users = [index for index, message in enumerate(messages) if isinstance(message, UserMessage)]
    last_query = users[-1] if users else len(messages) - 1
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            reasoning = (message.reasoning or "").strip("\n") if index > last_query else ""
            messages[index] = message.model_copy(update={"reasoning": reasoning or None})


def _tool_result_names(draft: Draft) -> None:
    """A tool result shows its content only, in an ``environment`` turn of its own.

    ``{%- set role = message.role if message.role != 'tool' else 'environment' %}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _call_ids(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... in order, and a tool
    result takes the id of the call at its position in the run of results after the assistant
    turn.

    ``'<|action_start|><|plugin|>\\n{"name": "' + tool_call.name + '", "parameters": '`` (no id)
    """
    number_calls(draft)
