"""What the GLM-4.5 and GLM-4.7 templates keep of a conversation (``glm-4-5``, ``glm-4-7``),
rule by rule.

Template lines are quoted from ``templates/glm45.jinja`` (``glm47.jinja`` where it differs:
``/nothink`` is GLM-4.5's, ``clear_thinking`` and the bare ``</think>`` GLM-4.7's). The reader
(``prompt``) gives back exactly the result.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, map_arguments, names_not_printed, number_calls, tool_responses_not_printed
from codec.engine.grammar import compiled
from codec.formats.glm.prompt import retyped
from codec.formats.glm45.prompt import BLANK_THOUGHT, thinking_off_shown, without_suffix
from codec.models import AssistantMessage, Content, SystemMessage, TextPart, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

GRAMMAR = "glm45.lark"


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    common: list[Rule] = [
        names_not_printed,
        tool_responses_not_printed,
        _tool_result_names,
        _visible_text,
        _think_in_content,
        _reasoning_of_earlier_turns,
    ]
    thinking: list[Rule]
    if spec.bare_think_close:
        thinking = [_stripped_keeping_blank_reasoning, _clear_thinking_shown, _thinking_off_prompt, _empty_last_turn]
    else:
        thinking = [_stripped, _no_think_written(spec.no_think_suffix), _empty_last_turn_after_no_think(spec)]
    return [*common, *thinking, _arguments_as_written, _call_ids]


def _tool_result_names(draft: Draft) -> None:
    """A tool result's ``name`` is not written.

    ``{{- '\\n<tool_response>\\n' }}{{- m.content }}`` (no line reads ``name``)
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _visible_text(draft: Draft) -> None:
    """A list of content parts on a system, user or assistant message is written as its text
    parts joined; media parts are left out.

    ``{%- if item is mapping and item.type == 'text' -%}{{- item.text }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, (SystemMessage, UserMessage, AssistantMessage)) and isinstance(message.content, tuple):
            draft.messages[index] = message.model_copy(update={"content": visible(message.content)})


def visible(content: Content | None) -> str:
    """The text the template's ``visible_text`` macro writes for ``content``."""
    if content is None or isinstance(content, str):
        return content or ""
    return "".join(part.text for part in content if isinstance(part, TextPart))


def _think_in_content(draft: Draft) -> None:
    """Content of the form ``<think>R</think>answer`` on a message without reasoning becomes
    reasoning ``R`` and content ``answer``, new lines next to the tags trimmed.

    ``{%- set reasoning_content = content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}``
    """
    for index, message in enumerate(draft.messages):
        text = message.content if isinstance(message, AssistantMessage) else None
        if isinstance(message, AssistantMessage) and message.reasoning is None and isinstance(text, str):
            think_open, think_close = _think_markers()
            if think_close in text:
                reasoning = text.split(think_close)[0].rstrip("\n").split(think_open)[-1].lstrip("\n")
                content = text.split(think_close)[-1].lstrip("\n")
                draft.messages[index] = message.model_copy(update={"reasoning": reasoning, "content": content})


@cache
def _think_markers() -> tuple[str, str]:
    """``<think>`` and ``</think>``, from the grammar (``THINK_OPEN``, ``THINK_CLOSE``)."""
    grammar = compiled(GRAMMAR)
    return grammar.display("THINK_OPEN"), grammar.display("THINK_CLOSE")


def _reasoning_of_earlier_turns(draft: Draft) -> None:
    """Reasoning of an assistant turn before the last user message is not written: the turn
    shows ``<think></think>`` (GLM-4.7: ``</think>``), unless GLM-4.7's ``clear_thinking`` is
    false.

    ``{%- if loop.index0 > ns.last_user_index and reasoning_content -%}`` /
    ``{%- if ((clear_thinking is defined and not clear_thinking) or loop.index0 > ns.last_user_index)
    and reasoning_content -%}``
    """
    if "clear_thinking" in draft.options and not draft.options["clear_thinking"]:
        return
    last_user = max((i for i, m in enumerate(draft.messages) if isinstance(m, UserMessage)), default=-1)
    for index, message in enumerate(draft.messages[: last_user + 1]):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _stripped(draft: Draft) -> None:
    """An assistant turn's reasoning and content are stripped of surrounding white space;
    nothing left is none.

    ``{{ '\\n<think>' + reasoning_content.strip() + '</think>'}}`` / ``{{ '\\n' + content.strip() }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage):
            reasoning = (message.reasoning or "").strip() or None
            content = visible(message.content).strip() or None
            draft.messages[index] = message.model_copy(update={"reasoning": reasoning, "content": content})


def _arguments_as_written(draft: Draft) -> None:
    """Argument values are written as text — a string raw, anything else as JSON — and read
    back by the tool's schema: a string that reads as another JSON value exactly as ``tojson``
    writes it, for a parameter that is not a plain string, comes back as that value.

    ``<arg_value>{{ v | tojson(ensure_ascii=False) if v is not string else v }}</arg_value>``
    """
    map_arguments(draft, lambda call: retyped(draft.tools, call))


def _stripped_keeping_blank_reasoning(draft: Draft) -> None:
    """An assistant turn's reasoning and content are stripped of surrounding white space;
    content with nothing left is none, and so is empty reasoning, but reasoning of only white
    space is written as an empty think block and comes back as one space (``' '``).

    ``{{ '<think>' + reasoning_content.strip() + '</think>'}}`` (for any reasoning that is not
    ``''``) / ``{{ '</think>' }}`` / ``{{ content.strip() }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage):
            text = message.reasoning or ""
            reasoning = text.strip() or (BLANK_THOUGHT if text else None)
            content = visible(message.content).strip() or None
            draft.messages[index] = message.model_copy(update={"reasoning": reasoning, "content": content})


def _clear_thinking_shown(draft: Draft) -> None:
    """``clear_thinking`` shows only as the reasoning of a turn before the last user message:
    false is kept when such a turn has reasoning to show, else lost; true is the default.

    ``{%- if ((clear_thinking is defined and not clear_thinking) or loop.index0 > ns.last_user_index)
    and reasoning_content -%}``
    """
    if "clear_thinking" not in draft.options:
        return
    clear = draft.options.pop("clear_thinking")
    last_user = max((i for i, m in enumerate(draft.messages) if isinstance(m, UserMessage)), default=-1)
    earlier = draft.messages[: max(last_user, 0)]  # no user message: every turn is "after" it
    if not clear and any(isinstance(m, AssistantMessage) and m.reasoning is not None for m in earlier):
        draft.options["clear_thinking"] = False


def _thinking_off_prompt(draft: Draft) -> None:
    """``enable_thinking`` shows only in the generation prompt: false writes
    ``<|assistant|></think>``, anything else ``<|assistant|><think>``; without a generation
    prompt it is lost.

    ``<|assistant|>{{- '</think>' if (enable_thinking is defined and not enable_thinking) else '<think>' -}}``
    """
    if "enable_thinking" not in draft.options:
        return
    if draft.options.pop("enable_thinking") or not draft.add_generation_prompt:
        return
    draft.options["enable_thinking"] = False


def _empty_last_turn(draft: Draft) -> None:
    """A last assistant turn with nothing in it reads ``<|assistant|></think>``: the text of the
    generation prompt with thinking off, which is what it comes back as.

    ``<|assistant|>{{- '</think>' if (enable_thinking is defined and not enable_thinking) else '<think>' -}}``
    """
    if _ends_in_empty_turn(draft):
        draft.messages.pop()
        draft.add_generation_prompt = True
        draft.options["enable_thinking"] = False


def _ends_in_empty_turn(draft: Draft) -> bool:
    last = draft.messages[-1] if draft.messages else None
    if draft.add_generation_prompt or not isinstance(last, AssistantMessage):
        return False
    return last.content is None and last.reasoning is None and not last.tool_calls


def _no_think_written(suffix: str) -> Rule:
    def _thinking_off_written(draft: Draft) -> None:
        """``enable_thinking`` shows only as text: false writes ``/nothink`` after every user
        message (not twice) and ``\\n<think></think>`` after the generation prompt; true writes
        nothing. The option itself is not in the prompt.

        ``{{- '/nothink' if (enable_thinking is defined and not enable_thinking and …) }}`` /
        ``<|assistant|>{{- '\\n<think></think>' if (enable_thinking is defined and not enable_thinking) else '' -}}``
        """
        if "enable_thinking" not in draft.options or draft.options.pop("enable_thinking"):
            return
        for index, message in enumerate(draft.messages):
            if isinstance(message, UserMessage) and not visible(message.content).endswith(suffix):
                draft.messages[index] = message.model_copy(update={"content": visible(message.content) + suffix})
        if draft.add_generation_prompt:
            draft.messages.append(AssistantMessage())
            draft.add_generation_prompt = False

    return _thinking_off_written


def _empty_last_turn_after_no_think(spec: FormatSpec) -> Rule:
    def _empty_last_turn(draft: Draft) -> None:
        """A last assistant turn with nothing in it, after user messages that all end with
        ``/nothink``, is the text of the generation prompt with thinking off, and comes back as
        that (``enable_thinking=False``, without the ``/nothink`` it writes).

        ``<|assistant|>{{- '\\n<think></think>' if (enable_thinking is defined and not enable_thinking) else '' -}}``
        """
        users = [visible(m.content) for m in draft.messages if isinstance(m, UserMessage)]
        if not _ends_in_empty_turn(draft) or not thinking_off_shown(users, spec):
            return
        draft.messages.pop()
        draft.add_generation_prompt = True
        draft.options["enable_thinking"] = False
        for index, message in enumerate(draft.messages):
            if isinstance(message, UserMessage):
                text = without_suffix(visible(message.content), spec)
                draft.messages[index] = message.model_copy(update={"content": text})

    return _empty_last_turn


def _call_ids(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... in order, and a tool
    result takes the id of the call at its position after its turn.

    ``{{ '\\n<tool_call>' + tc.name }}`` (no id) / ``{{- m.content }}``
    """
    number_calls(draft)
