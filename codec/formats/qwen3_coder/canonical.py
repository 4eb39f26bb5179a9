"""What the Qwen3-Coder template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/qwen3_coder.jinja``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, map_arguments, names_not_printed, number_calls, tool_responses_not_printed
from codec.arguments.schema import property_schema, tool_schema
from codec.formats.qwen3_coder.prompt import DEFAULT_SYSTEM
from codec.formats.qwen3_coder.tools import as_listed
from codec.formats.qwen3_coder.values import retyped
from codec.models import AssistantMessage, SystemMessage, ToolCall, ToolMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""
    return [
        names_not_printed,
        tool_responses_not_printed,
        _tools_as_listed,
        _default_system,
        _no_reasoning,
        _content_with_calls_trimmed,
        _arguments_as_written,
        _tool_result_names,
        _call_ids,
        _no_options,
    ]


def _tools_as_listed(draft: Draft) -> None:
    """Tools are listed as text: descriptions are trimmed, a property's ``name`` key and the
    parameters' ``type`` are not written (it reads back as ``object``), and other schema values
    are written with ``| string`` (``True``, ``['string', 'null']``) or JSON, and read back so.

    ``{{- '\\n<description>' ~ (tool.description | trim) ~ '</description>' }}`` /
    ``{%- set handled_keys = ['name', 'type', 'description'] %}{{- render_extra_keys(param_fields, handled_keys) }}``
    """
    draft.tools = [as_listed(tool) for tool in draft.tools]


def _default_system(draft: Draft) -> None:
    """With tools, a first system message that is the template's default system text renders as
    no system message at all (the template writes that text when there is none).

    ``{{- "<|im_start|>system\\nYou are Qwen, a helpful AI assistant that can interact with a computer to solve
    tasks." }}``
    """
    messages = draft.messages
    if draft.tools and messages and isinstance(messages[0], SystemMessage) and messages[0].content == DEFAULT_SYSTEM:
        del messages[0]


def _no_reasoning(draft: Draft) -> None:
    """Reasoning is never written: the template has no thinking block.

    (no line of the template reads ``reasoning_content``)
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.reasoning is not None:
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _content_with_calls_trimmed(draft: Draft) -> None:
    """The content of an assistant message with calls is trimmed, and written only when
    something is left.

    ``{%- if message.content is defined and message.content is string and message.content | trim | length > 0 %}`` /
    ``{{- '\\n' + message.content | trim + '\\n' }}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            text = message.content.strip() if isinstance(message.content, str) else ""
            draft.messages[index] = message.model_copy(update={"content": text or None})


def _arguments_as_written(draft: Draft) -> None:
    """Argument values are written as text — a string raw, an object or array as JSON, anything
    else with Python's ``str()`` — and read back by the tool's schema: a string that is exactly
    how another value is written comes back as that value where the schema admits it (``"3"`` →
    ``3``, ``"True"`` → ``True``; ``"true"`` and ``"1e5"`` stay strings).

    ``{%- set args_value = args_value | tojson | safe if args_value is mapping or (args_value is sequence and
    args_value is not string) else args_value | string %}``
    """
    map_arguments(draft, lambda call: _retyped(draft, call))


def _retyped(draft: Draft, call: ToolCall) -> dict[str, object]:
    parameters = tool_schema(draft.tools, call.name)
    return {key: retyped(value, property_schema(parameters, key)) for key, value in call.arguments.items()}


def _tool_result_names(draft: Draft) -> None:
    """A tool result shows its content only, inside the user turn that holds the results.

    ``{{- '<tool_response>\\n' }}{{- message.content }}{{- '\\n</tool_response>\\n' }}``
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


def _no_options(draft: Draft) -> None:
    """The template reads no option: every one leaves no trace.

    (no line of the template reads a variable besides ``messages``, ``tools`` and ``add_generation_prompt``)
    """
    draft.options = {}
