"""What the Qwen3 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/qwen3.jinja``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.engine.grammar import compiled
from codec.models import AssistantMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

GRAMMAR = "qwen3.lark"


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _content_not_text_is_empty,
        _think_in_content,
        _reasoning_after_the_last_query,
        _tool_result_names,
        _call_ids,
        _thinking_option,
    ]


def _content_not_text_is_empty(draft: Draft) -> None:
    """A message whose content is not a string (an assistant message with only tool calls,
    OpenAI's ``"content": null``) is written with empty content.

    ``{%- if message.content is string %}{%- set content = message.content %}{%- else %}{%- set content = '' %}``
    """
    for index, message in enumerate(draft.messages):
        if not isinstance(message.content, str):
            draft.messages[index] = message.model_copy(update={"content": ""})


@cache
def _think_markers() -> tuple[str, str]:
    """``<think>`` and ``</think>``, from the grammar (``THINK_OPEN``, ``THINK_CLOSE``)."""
    grammar = compiled(GRAMMAR)
    return grammar.display("THINK_OPEN"), grammar.display("THINK_CLOSE")


def _think_in_content(draft: Draft) -> None:
    """Content of the form ``<think>R</think>answer`` on a message without reasoning becomes
    reasoning ``R`` and content ``answer`` (only with ``allow_special_tokens``).

    ``{%- set reasoning_content = content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}`` /
    ``{%- set content = content.split('</think>')[-1].lstrip('\\n') %}``
    """
    think_open, think_close = _think_markers()
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is None:
            text = message.content
            if isinstance(text, str) and think_close in text:
                head, tail = text.split(think_close)[0], text.split(think_close)[-1]
                reasoning = head.rstrip("\n").split(think_open)[-1].lstrip("\n")
                draft.messages[index] = message.model_copy(
                    update={"reasoning": reasoning, "content": tail.lstrip("\n")}
                )


def _reasoning_after_the_last_query(draft: Draft) -> None:
    """Reasoning is written only for assistant messages after the last user message, and there
    only for the last message or non-empty reasoning; it is stripped of new lines, and the
    content after it of leading new lines. Other reasoning is lost; empty is none, but for an
    empty thought on an earlier message, whose reasoning was new lines only (it comes back as
    ``"\n"``).

    ``{%- if loop.index0 > ns.last_query_index %}{%- if loop.last or (not loop.last and reasoning_content) %}`` /
    ``'\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n' + content.lstrip('\\n')``
    """
    messages = draft.messages
    users = [index for index, message in enumerate(messages) if isinstance(message, UserMessage)]
    last_query = users[-1] if users else len(messages) - 1
    for index, message in enumerate(messages):
        if not isinstance(message, AssistantMessage):
            continue
        reasoning = message.reasoning or ""
        last = index == len(messages) - 1
        if index > last_query and (last or reasoning):
            content = message.content.lstrip("\n") if isinstance(message.content, str) else message.content
            # An empty thought on an earlier message was reasoning of new lines only: "\n"
            # writes it again (an empty one would not be written).
            update = {"reasoning": reasoning.strip("\n") or (None if last else "\n"), "content": content}
        else:
            update = {"reasoning": None}
        messages[index] = message.model_copy(update=update)


def _tool_result_names(draft: Draft) -> None:
    """A tool result shows its content only, inside the user turn that holds the results.

    ``{{- '\\n<tool_response>\\n' }}{{- content }}{{- '\\n</tool_response>' }}``
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


def _thinking_option(draft: Draft) -> None:
    """``enable_thinking`` shows only as the empty thought the generation prompt pre-fills when
    it is ``false``; otherwise (or without the generation prompt) it leaves no trace.

    ``{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}``
    """
    off = draft.add_generation_prompt and draft.options.get("enable_thinking") is False
    draft.options = {"enable_thinking": False} if off else {}
