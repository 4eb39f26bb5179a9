"""What the Qwen3.5 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/qwen3_5.jinja``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.engine.grammar import compiled
from codec.formats.qwen3_5.content import flat, placeholders, trimmed, vision_ids

# Qwen3.5's template writes argument values with Qwen3-Coder's line (`args_value | tojson | safe if …`).
from codec.formats.qwen3_coder.canonical import _arguments_as_written
from codec.models import AssistantMessage, Content, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

GRAMMAR = "qwen3_5.lark"


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _vision_ids,
        _media_as_placeholders,
        _content_trimmed,
        _empty_system_with_tools,
        _think_in_content,
        _reasoning_after_the_last_query,
        _content_with_calls,
        _arguments_as_written,
        _tool_result_names,
        _call_ids,
        _thinking_option,
    ]


def _vision_ids(draft: Draft) -> None:
    """With ``add_vision_id``, each image or video is written after its number, counted over the
    whole conversation: that text becomes part of the content.

    ``{%- if add_vision_id %}{{- 'Picture ' ~ image_count.value ~ ': ' }}`` (``'Video '`` likewise)
    """
    if draft.options.get("add_vision_id"):
        vision_ids(draft.messages)


def _media_as_placeholders(draft: Draft) -> None:
    """An image or video part shows only as its placeholder: it comes back as a bare
    ``{"type": "image"}`` or ``{"type": "video"}``.

    ``{{- '<|vision_start|><|image_pad|><|vision_end|>' }}`` / ``'<|video_pad|>'``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message.content, tuple):
            draft.messages[index] = message.model_copy(update={"content": placeholders(message.content)})


def _content_trimmed(draft: Draft) -> None:
    """Every message's content, its parts joined, is trimmed; no content is empty content.

    ``{%- set content = render_content(message.content, true)|trim %}``
    """
    for index, message in enumerate(draft.messages):
        if not isinstance(message, AssistantMessage) or message.content is not None:
            content: Content = trimmed(message.content or "")
            draft.messages[index] = message.model_copy(update={"content": content})


def _empty_system_with_tools(draft: Draft) -> None:
    """With tools, a first system message left empty is not written: it is lost.

    ``{%- if content %}{{- '\\n\\n' + content }}{%- endif %}``
    """
    messages = draft.messages
    if draft.tools and messages and isinstance(messages[0], SystemMessage) and messages[0].content == "":
        del messages[0]


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
        text = message.content
        if not isinstance(message, AssistantMessage) or message.reasoning is not None or not isinstance(text, str):
            continue
        if think_close in text:
            head, tail = text.split(think_close)[0], text.split(think_close)[-1]
            reasoning = head.rstrip("\n").split(think_open)[-1].lstrip("\n")
            draft.messages[index] = message.model_copy(update={"reasoning": reasoning, "content": tail.lstrip("\n")})


def _reasoning_after_the_last_query(draft: Draft) -> None:
    """Reasoning is written, trimmed, only for assistant messages after the last user query (a
    user message that is not a ``<tool_response>`` block); earlier turns' reasoning is lost, and
    an empty thought is no reasoning.

    ``{%- if loop.index0 > ns.last_query_index %}`` /
    ``'\\n<think>\\n' + reasoning_content + '\\n</think>\\n\\n' + content`` (``reasoning_content|trim``)
    """
    last_query = _last_query(draft)
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage):
            kept = (message.reasoning or "").strip() if index > last_query else ""
            draft.messages[index] = message.model_copy(update={"reasoning": kept or None})


def _last_query(draft: Draft) -> int:
    """The index of the last user message whose trimmed text is not wrapped in ``<tool_response>``."""
    grammar = compiled(GRAMMAR)
    opener, closer = grammar.display("RESPONSE_OPEN"), grammar.display("RESPONSE_CLOSE")
    for index in range(len(draft.messages) - 1, -1, -1):
        message = draft.messages[index]
        if isinstance(message, UserMessage):
            text = flat(message.content)
            if not (text.startswith(opener) and text.endswith(closer)):
                return index
    return len(draft.messages)


def _content_with_calls(draft: Draft) -> None:
    """An assistant message with calls and no content left is written with none; without calls,
    with empty content.

    ``{%- if content|trim %}{{- '\\n\\n<tool_call>\\n<function=' + tool_call.name + '>\\n' }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.tool_calls and message.content == "":
            draft.messages[index] = message.model_copy(update={"content": None})


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

    ``{{- '\\n<tool_call>\\n<function=' + tool_call.name + '>\\n' }}`` (no id)
    """
    number_calls(draft)


def _thinking_option(draft: Draft) -> None:
    """``enable_thinking`` shows only in the generation prompt: ``<think>\\n`` when it is true,
    the empty thought otherwise; without the generation prompt it leaves no trace, nor does any
    other option (``add_vision_id`` is in the content now).

    ``{%- if enable_thinking is defined and enable_thinking is true %}{{- '<think>\\n' }}``
    """
    on = draft.add_generation_prompt and draft.options.get("enable_thinking") is True
    draft.options = {"enable_thinking": True} if on else {}
