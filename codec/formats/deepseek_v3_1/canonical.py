"""What the DeepSeek-V3.1 template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/deepseek_v3_1.jinja``. The reader (``prompt``)
gives back exactly the result. The template never writes the tools, the reasoning, call ids or
tool names: the model is told about its tools by the caller's own system text.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.engine.grammar import compiled
from codec.models import AnyMessage, AssistantMessage, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

GRAMMAR = "deepseek_v3_1.lark"
_BLANK = "\n\n"


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _tools_not_printed,
        _reasoning_not_printed,
        _think_in_content,
        _content_beside_calls,
        _tool_result_names,
        _system_messages_joined,
        _opening_reply_joins_the_system_text,
        _call_ids,
        _generation_prompt_after_a_user,
        _thinking_option,
    ]


def _tools_not_printed(draft: Draft) -> None:
    """The template never writes the tools: they are lost (DeepSeek's model card has the caller
    describe them in the system message).

    (no line of the template reads ``tools``)
    """
    draft.tools = []


def _reasoning_not_printed(draft: Draft) -> None:
    """An assistant message's reasoning is never written: every earlier answer shows the empty
    thought ``<think></think>``, so the reasoning is lost.

    ``{%- if ns.is_last_user -%}{{'<｜Assistant｜><think></think>'}}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


@cache
def _think_close() -> str:
    """``</think>``, from the grammar (``THINK_END``)."""
    return compiled(GRAMMAR).display("THINK_END")


def _think_in_content(draft: Draft) -> None:
    """An answer without calls that does not follow a tool result keeps only the text after the
    first ``</think>`` in its content (only with ``allow_special_tokens``).

    ``{%- if '</think>' in content -%}{%- set content = content.split('</think>', 1)[1] -%}``
    """
    close = _think_close()
    after_tool = False
    for index, message in enumerate(draft.messages):
        answer = isinstance(message, AssistantMessage) and not message.tool_calls and not after_tool
        if answer and isinstance(message.content, str) and close in message.content:
            content = message.content.split(close, 1)[1]
            draft.messages[index] = message.model_copy(update={"content": content})
        if not isinstance(message, SystemMessage):
            after_tool = isinstance(message, ToolMessage)


def _content_beside_calls(draft: Draft) -> None:
    """An assistant message with calls writes its content only when it is not empty: empty
    content comes back as none.

    ``{%- if not message['content'] -%}{{'<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>'+ …``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.tool_calls and message.content == "":
            draft.messages[index] = message.model_copy(update={"content": None})


def _tool_result_names(draft: Draft) -> None:
    """A tool result shows its content only: its name is lost.

    ``{{'<｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _system_messages_joined(draft: Draft) -> None:
    """Every system message is written first, wherever it stood, their texts joined by a blank
    line: they come back as one system message at the start (none when the text is empty).

    ``{%- set ns.system_prompt = ns.system_prompt + '\\n\\n' + message['content'] -%}`` /
    ``{{ bos_token }}{{ ns.system_prompt }}``
    """
    texts = [str(m.content) for m in draft.messages if isinstance(m, SystemMessage)]
    if not texts:
        return
    rest: list[AnyMessage] = [m for m in draft.messages if not isinstance(m, SystemMessage)]
    joined = _BLANK.join(texts)
    draft.messages = ([SystemMessage(content=joined)] if joined else []) + rest


def _opening_reply_joins_the_system_text(draft: Draft) -> None:
    """An assistant message before any user message or tool result has no header: its content
    runs on from the system text, and the two come back as that message's content.

    ``{%- if ns.is_last_user -%}{{'<｜Assistant｜>'}}`` (``is_last_user`` is false before the
    first user message)
    """
    messages = draft.messages
    start = 1 if messages and isinstance(messages[0], SystemMessage) else 0
    reply = messages[start] if start < len(messages) else None
    if not isinstance(reply, AssistantMessage):
        return
    system = str(messages[0].content) if start else ""
    text = system + (reply.content if isinstance(reply.content, str) else "")
    content = text or (None if reply.tool_calls else "")
    draft.messages = [reply.model_copy(update={"content": content}), *messages[start + 1 :]]


def _call_ids(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... in order, and a tool
    result takes the id of the call at its position in the assistant message before its run of
    results.

    ``{{'<｜tool▁call▁begin｜>'+ tool['function']['name'] + '<｜tool▁sep｜>' + …`` (no id)
    """
    number_calls(draft)


def _generation_prompt_after_a_user(draft: Draft) -> None:
    """The generation prompt is written only when the last message (system messages aside) is a
    user message: after a tool result or an answer the model goes on with no header, and the
    prompt does not show that one was asked for.

    ``{%- if add_generation_prompt and ns.is_last_user and not ns.is_tool -%}``
    """
    said = [m for m in draft.messages if not isinstance(m, SystemMessage)]
    draft.add_generation_prompt = draft.add_generation_prompt and bool(said) and isinstance(said[-1], UserMessage)


def _thinking_option(draft: Draft) -> None:
    """``thinking`` (or ``enable_thinking``, when ``thinking`` is not given) shows only in the
    generation prompt: ``<think>`` when true, the empty thought ``<think></think>`` otherwise;
    without the generation prompt it leaves no trace.

    ``{%- if not thinking -%}{{'<think></think>'}}{%- else -%}{{'<think>'}}``
    """
    thinking = draft.options.get("thinking", draft.options.get("enable_thinking", False))
    draft.options = {"thinking": True} if draft.add_generation_prompt and thinking else {}
