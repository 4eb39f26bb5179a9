"""What the Nemotron 3 Nano template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/nemotron_3_nano.jinja``. Its system block, tools
listing, tool results and argument values are Qwen3-Coder's (``qwen3_coder/canonical.py``); its
thought and the options ``enable_thinking`` and ``truncate_history_thinking`` are its own.
Content holding ``<think>`` or ``</think>`` itself (only with ``allow_special_tokens``) is
written as it is, without the empty thought, and is not followed here.
"""

from __future__ import annotations

from functools import cache

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.engine.grammar import compiled
from codec.formats.qwen3_coder.canonical import _arguments_as_written, _tool_result_names, _tools_as_listed
from codec.models import AnyMessage, AssistantMessage, SystemMessage, UserMessage

GRAMMAR = "nemotron_3_nano.lark"


def rules() -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _tools_as_listed,
        _empty_system,
        _thought_and_content,
        _arguments_as_written,
        _tool_result_names,
        _call_ids,
        _thinking_option,
    ]


def _empty_system(draft: Draft) -> None:
    """A first system message left empty is no system message: the template writes the system
    block all the same, empty, when there is none (unless another system message follows it, or nothing does).

    ``{%- set system_message = "" %}`` / ``{{- "<|im_start|>system\\n" + system_message }}``
    """
    messages = draft.messages
    empty = bool(messages) and isinstance(messages[0], SystemMessage) and messages[0].content == ""
    if empty and len(messages) > 1 and not isinstance(messages[1], SystemMessage):
        del messages[0]


@cache
def _think_markers() -> tuple[str, str]:
    """``<think>`` and ``</think>``, from the grammar (``THINK_OPEN``, ``THINK_CLOSE``)."""
    grammar = compiled(GRAMMAR)
    return grammar.display("THINK_OPEN"), grammar.display("THINK_CLOSE")


def _thought_and_content(draft: Draft) -> None:
    """Reasoning that is only white space is none. The thought and the answer are written as one
    text, then trimmed: the answer loses the white space at its end, and an answer with calls the
    white space at both ends (the calls follow a new line). With ``truncate_history_thinking``
    (true unless given), messages before the last user message lose their reasoning; there, an
    answer without calls that followed reasoning keeps the new line written after ``</think>``
    (``\\nanswer``).

    ``{%- set content = "<think>\\n" ~ message.reasoning_content ~ "\\n</think>\\n" ~ (message.content …) %}`` /
    ``{%- set c = "<think></think>" ~ c.split('</think>')[-1] %}`` / ``{%- set c = c | trim %}``
    """
    truncate = draft.options.get("truncate_history_thinking", True)
    last_user = _last_user(draft.messages)
    for index, message in enumerate(draft.messages):
        if not isinstance(message, AssistantMessage) or not isinstance(message.content or "", str):
            continue
        text = str(message.content or "")
        if not _holds_think(text):
            update = _written(message.reasoning, text, bool(message.tool_calls), truncate and index < last_user)
            draft.messages[index] = message.model_copy(update=update)


def _last_user(messages: list[AnyMessage]) -> int:
    """The index of the last user message (``ns.last_user_idx``: -1 with none)."""
    return max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=-1)


def untruncated(messages: list[AnyMessage]) -> bool:
    """Whether the messages show that ``truncate_history_thinking`` was false: a message before
    the last user message kept its reasoning, or its calls kept the white space their content
    starts with (truncated, that content is trimmed; everything else renders alike either way)."""
    last_user = _last_user(messages)
    return any(
        isinstance(m, AssistantMessage)
        and (m.reasoning is not None or (bool(m.tool_calls) and isinstance(m.content, str) and m.content[:1].isspace()))
        for m in messages[: max(last_user, 0)]
    )


def _holds_think(text: str) -> bool:
    return any(marker in text for marker in _think_markers())


def _written(reasoning: str | None, text: str, calls: bool, truncated: bool) -> dict[str, str | None]:
    """The reasoning and content an assistant message reads back as."""
    thought = reasoning if reasoning is not None and reasoning.strip() else None
    if calls:
        content = text.strip() if truncated else text.rstrip()
        return {"reasoning": None if truncated else thought, "content": content or None}
    if not truncated:
        return {"reasoning": thought, "content": text.rstrip()}
    kept = "\n" + text.rstrip() if thought is not None and text.strip() else text.rstrip()
    return {"reasoning": None, "content": kept}


def _call_ids(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... in order, and a tool
    result takes the id of the call at its position in the assistant turn before its block.

    ``{{- '<tool_call>\\n<function=' ~ tool_call.name ~ '>\\n' -}}`` (no id)
    """
    number_calls(draft)


def _thinking_option(draft: Draft) -> None:
    """``enable_thinking`` shows only in the generation prompt: ``<think>\\n`` unless it is false
    (then the empty thought). ``truncate_history_thinking`` false shows only where an earlier
    message kept what it would have dropped (``untruncated``).

    ``{%- if enable_thinking %}{{- '<|im_start|>assistant\\n<think>\\n' }}{%- else %}`` /
    ``{%- set include_content = not (truncate_history_thinking and loop.index0 < ns.last_user_idx) %}``
    """
    off = draft.add_generation_prompt and not draft.options.get("enable_thinking", True)
    options: dict[str, bool] = {"enable_thinking": False} if off else {}
    if untruncated(draft.messages):
        options["truncate_history_thinking"] = False
    draft.options = options
