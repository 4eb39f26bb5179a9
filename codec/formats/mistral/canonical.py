"""What the Mistral template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/mistral.jinja`` (Ministral-3-3B-Reasoning-2512). The
reader (``prompt``) gives back exactly the result. Conversations the template refuses stay
refused (``RenderError``): one that does not start with a user or system message, a tool result
after a user message, a system message after a tool result, an empty user, system or assistant
message (``raise_exception('Unexpected role …')``, ``… must have non-empty content.``).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.engine.grammar import compiled
from codec.formats.mistral.system import added_system, default_system
from codec.models import AnyMessage, AssistantMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

GRAMMAR = "mistral.lark"
_JOIN = "\n\n"  # ``ns_c.text_parts | join('\n\n')``


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""

    def added_system_message(draft: Draft) -> None:
        """A first system message whose text is the template's own system prompt, followed by a
        message that is not a system message, reads as the template's own: it is lost (the
        template writes the same block again without it).

        ``{{- '[SYSTEM_PROMPT]' + default_system_message + '[/SYSTEM_PROMPT]' }}``
        """
        if added_system(draft.messages, default_system(spec)):
            del draft.messages[0]

    return [
        names_not_printed,
        tool_responses_not_printed,
        _tool_result_names,
        *([] if spec.writes_reasoning else [_reasoning_not_written]),
        _empty_reasoning,
        _joined_turns,
        _no_content_is_empty,
        _call_ids,
        _no_generation_prompt,
        _tools_before_the_first_user,
        added_system_message,
    ]


def _tool_result_names(draft: Draft) -> None:
    """A tool result's ``name`` and ``tool_call_id`` are not written: only its content.

    ``{{- '[TOOL_RESULTS]' + message['content']|string + '[/TOOL_RESULTS]' }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _reasoning_not_written(draft: Draft) -> None:
    """Reasoning is never written by the Instruct-2512 templates (``FormatSpec.writes_reasoning``):
    they read only ``content`` and ``tool_calls`` of an assistant message, and refuse a
    ``thinking`` part.

    ``render_content(message['content'], 'assistant message contents', supported_types_desc='text', ...)``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _empty_reasoning(draft: Draft) -> None:
    """Empty reasoning is not written.

    ``{%- if reasoning is not none and reasoning != '' %}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning == "":
            draft.messages[index] = message.model_copy(update={"reasoning": None})


@cache
def _think_markers(grammar: str) -> tuple[str, str]:
    """``[THINK]`` and ``[/THINK]``, from the grammar."""
    return compiled(grammar).display("THINK_OPEN"), compiled(grammar).display("THINK_CLOSE")


def _joined_turns(draft: Draft) -> None:
    """Consecutive user messages, and consecutive assistant messages, are written as one: their
    texts joined by a blank line, their calls in order. Each assistant message's reasoning is a
    thought of its own where it stands; only a thought that opens the joined message reads back
    as its reasoning, a later one stays in the content as written (``[THINK]…[/THINK]``).

    ``{%- if message['role'] != ns_agg.current_role or message['role'] == 'system' or message['role'] == 'tool' %}`` /
    ``{%- set merged_content = ns_c.text_parts | join('\\n\\n') %}``
    """
    joined: list[AnyMessage] = []
    for message in draft.messages:
        last = joined[-1] if joined else None
        if last is not None and _joinable(message) and message.role == last.role:
            joined[-1] = _join(last, message)
        else:
            joined.append(_join(message) if isinstance(message, AssistantMessage) else message)
    draft.messages[:] = joined


def _joinable(message: AnyMessage) -> bool:
    """System messages and tool results are never joined (``or message['role'] == 'system' or
    message['role'] == 'tool'``)."""
    return isinstance(message, UserMessage | AssistantMessage)


def _join(*run: AnyMessage) -> AnyMessage:
    """One message for a run of user or assistant messages, as the template aggregates them."""
    if isinstance(run[0], UserMessage):
        text = _JOIN.join(m.content for m in run if isinstance(m.content, str))
        return run[0].model_copy(update={"content": text})
    return _join_assistant([m for m in run if isinstance(m, AssistantMessage)])


def _join_assistant(run: list[AssistantMessage]) -> AssistantMessage:
    think_open, think_close = _think_markers(GRAMMAR)
    chunks: list[tuple[bool, str]] = []  # (is a thought, text)
    texts: list[str] = []
    written = False  # some message had text content (``None`` adds no text part)
    for message in run:
        if message.reasoning:
            if texts:
                chunks.append((False, _JOIN.join(texts)))
                texts = []
            chunks.append((True, message.reasoning))
            if message.content == "":  # ``msg['content'] is string and msg['content'] != ''``
                continue
        if isinstance(message.content, str):
            texts.append(message.content)
            written = True
    if texts:
        chunks.append((False, _JOIN.join(texts)))
    chunks = [(thought, text) for thought, text in chunks if thought or text]  # an empty text writes nothing
    reasoning = chunks.pop(0)[1] if chunks and chunks[0][0] else None
    shown = "".join(f"{think_open}{text}{think_close}" if thought else text for thought, text in chunks)
    content = shown if written or chunks else None
    calls = tuple(call for message in run for call in message.tool_calls)
    return run[0].model_copy(update={"content": content, "reasoning": reasoning, "tool_calls": calls})


def _no_content_is_empty(draft: Draft) -> None:
    """An assistant message without content is written with none: it reads back as empty
    content.

    ``{%- if message['content'] %}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.content is None:
            draft.messages[index] = message.model_copy(update={"content": ""})


def _call_ids(draft: Draft) -> None:
    """The template writes no call ids and no result ids: calls are numbered ``call_0``,
    ``call_1``, ... and each result takes the id of the call at its place (``number_calls``).
    (Mistral-Small-3.2's template writes ``[CALL_ID]`` and raises on an id that is not nine
    letters or digits; this one writes none.)

    ``{{- name + '[ARGS]' + arguments }}``
    """
    number_calls(draft)


def _tools_before_the_first_user(draft: Draft) -> None:
    """The tools are written once, before the first user message: a conversation without one
    loses them.

    ``{%- if message['role'] == 'user' %}{%- if not ns.available_tools_emitted %}{{- available_tools }}``
    """
    if not any(isinstance(message, UserMessage) for message in draft.messages):
        draft.tools.clear()


def _no_generation_prompt(draft: Draft) -> None:
    """The template writes no generation prompt: the prompt ends after ``[/INST]`` or
    ``[/TOOL_RESULTS]`` either way, and reads back without one.

    (no line of the template reads ``add_generation_prompt``)
    """
    draft.add_generation_prompt = False
