"""What the MiniMax-M2 templates keep of a conversation, rule by rule.

Template lines are quoted from ``templates/minimax_m2.jinja``; the M2.1, M2.5 and M2.7 revisions
share them (only their default system text differs: ``prompt.identity``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, map_arguments, names_not_printed, number_calls, tool_responses_not_printed
from codec.engine.grammar import compiled
from codec.formats.glm.prompt import retyped
from codec.formats.minimax_m2.prompt import identity
from codec.models import AssistantMessage, SystemMessage, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

GRAMMAR = "minimax_m2.lark"


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    default = identity(spec.template)
    return [
        names_not_printed,
        tool_responses_not_printed,
        _later_system_dropped,
        _identity_option,
        _system_text(default),
        _think_in_content,
        _history_reasoning_dropped,
        _no_content_is_empty,
        _arguments_as_written,
        _tool_result_names,
        _call_ids,
    ]


def _later_system_dropped(draft: Draft) -> None:
    """Only a first system message is written: one anywhere else is lost (the loop writes only
    assistant, tool and user messages).

    ``{%- if messages and messages[0].role == "system" -%}{%- set system_message = messages[0] -%}``
    """
    draft.messages = [m for i, m in enumerate(draft.messages) if i == 0 or not isinstance(m, SystemMessage)]


def _identity_option(draft: Draft) -> None:
    """The ``model_identity`` option is the system block's text where no first system message
    with text is given, so it reads back as a system message (an empty one stays the option:
    no system message writes an empty block); beside one it is never written.

    ``{%- else -%}{%- if model_identity is not defined -%}…{%- endif -%}{{- model_identity }}``
    """
    value = draft.options.pop("model_identity", None)
    messages = draft.messages
    first = messages[0] if messages and isinstance(messages[0], SystemMessage) else None
    if value is None or (first is not None and first.content):
        return
    if not isinstance(value, str) or value == "":
        # An empty system block, which no system message writes, stays the option; so does a
        # value that is not text (the template prints it as Jinja would).
        draft.options["model_identity"] = value
        return
    system = SystemMessage(content=value)
    draft.messages = [system, *messages[1:]] if first is not None else [system, *messages]


def _system_text(default: str) -> Rule:
    """The rule below, for a template whose default system text is ``default``."""

    def system_text(draft: Draft) -> None:
        """The system block is the first system message's text; an empty one is no system
        message, and one that is the template's default text reads back as none (the template
        writes that text when there is none).

        ``{%- if system_message and system_message.content -%}{{- visible_text(system_message.content) }}`` /
        ``{%- else -%}{%- if model_identity is not defined -%}{%- set model_identity = "You are MiniMax-M2, …" -%}``
        """
        messages = draft.messages
        if messages and isinstance(messages[0], SystemMessage) and messages[0].content in ("", default):
            del messages[0]

    return system_text


def _think_in_content(draft: Draft) -> None:
    """Content holding ``</think>`` on a message without reasoning is split there: the text
    before it (after any ``<think>``, new lines trimmed) is the reasoning, the text after it
    (new lines trimmed) the content.

    ``{%- set reasoning_content = content.split('</think>')[0].strip('\\n').split('<think>')[-1].strip('\\n') %}`` /
    ``{%- set content = content.split('</think>')[-1].strip('\\n') %}``
    """
    grammar = compiled(GRAMMAR)
    think_open, think_close = grammar.display("THINK_OPEN"), grammar.display("THINK_CLOSE")
    for index, message in enumerate(draft.messages):
        content = message.content
        if not isinstance(message, AssistantMessage) or message.reasoning is not None or not isinstance(content, str):
            continue
        if think_close in content:
            reasoning = content.split(think_close)[0].strip("\n").split(think_open)[-1].strip("\n")
            after = content.split(think_close)[-1].strip("\n")
            draft.messages[index] = message.model_copy(update={"reasoning": reasoning, "content": after})


def _history_reasoning_dropped(draft: Draft) -> None:
    """Reasoning is written only for assistant turns after the last user message; earlier
    turns' reasoning is lost, and empty reasoning is no reasoning.

    ``{%- if reasoning_content and loop.index0 > ns.last_user_index -%}``
    """
    last_user = max((i for i, m in enumerate(draft.messages) if isinstance(m, UserMessage)), default=-1)
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            kept = message.reasoning if index > last_user and message.reasoning else None
            draft.messages[index] = message.model_copy(update={"reasoning": kept})


def _no_content_is_empty(draft: Draft) -> None:
    """An assistant message's empty content is written as nothing: with calls it reads back as
    no content, without calls as empty content.

    ``{%- if content -%}{{- content }}{%- endif -%}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and not message.content:
            draft.messages[index] = message.model_copy(update={"content": None if message.tool_calls else ""})


def _arguments_as_written(draft: Draft) -> None:
    """Argument values are written as text — a string raw, anything else as JSON — and read
    back by the tool's schema: a string that reads as another JSON value exactly as ``tojson``
    writes it, for a parameter that is not a plain string, comes back as that value (``"3"`` →
    ``3``; a ``string|null`` parameter's ``"null"`` → ``None``; ``"1e5"`` stays a string).

    ``{{- v | tojson(ensure_ascii=False) if v is not string else v }}``
    """
    map_arguments(draft, lambda call: retyped(draft.tools, call))


def _tool_result_names(draft: Draft) -> None:
    """A tool result shows its content only, inside the ``tool`` block that holds the results.

    ``{{- '\\n<response>' }}{{- message.content }}{{- '</response>' }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.name is not None:
            draft.messages[index] = message.model_copy(update={"name": None})


def _call_ids(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... in order, and a tool
    result takes the id of the call at its position in the run of results after its assistant
    turn.

    ``{{- '<invoke name="' + tool_call.name + '">' }}`` (no id)
    """
    number_calls(draft)
