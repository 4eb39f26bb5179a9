"""What the gpt-oss template keeps of a conversation, rule by rule.

Template lines are quoted from ``templates/gpt_oss.jinja``. The reader (``prompt``) gives back
exactly the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codec._canonical import Draft, Rule, names_not_printed, number_calls, tool_responses_not_printed
from codec.errors import RenderError, describe
from codec.formats.gpt_oss.prompt import BUILTIN_TOOLS, DEFAULT_EFFORT, DEFAULT_IDENTITY, developer_block
from codec.models import AssistantMessage, SystemMessage, ToolMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec


def rules(spec: FormatSpec) -> list[Rule]:
    """The rules in the order they apply."""

    def _tools_as_listed(draft: Draft) -> None:
        """Tools are written as TypeScript types (``render_tool_namespace``): a parameter's
        schema keeps only what its type text shows (``integer`` reads back as ``number``; any
        type but a plain string, number or boolean as the one-item type list that writes the
        same text), keys other than description and default are lost.

        ``{{- render_typescript_type(param_spec, tool.parameters.required or []) }}``
        """
        if draft.tools:
            draft.tools = _listed(spec, draft)

    return [
        names_not_printed,
        tool_responses_not_printed,
        _options_shown,
        _later_system_messages_dropped,
        _first_system_as_instructions,
        _history_reasoning_dropped,
        _call_analysis,
        _first_call_only,
        number_calls_rule,
        _result_names,
        _tools_as_listed,
    ]


def _listed(spec: FormatSpec, draft: Draft) -> list[dict[str, object]]:
    import codec  # the family's own render, at run time (codec imports the registry, which imports this)

    prompt = codec.load(spec.name).render(
        [{"role": "user", "content": ""}], tools=draft.tools, now=draft.now, add_generation_prompt=False
    )
    start, end = prompt.index("# Tools\n\n## functions"), prompt.rindex("} // namespace functions")
    try:
        return developer_block(prompt[start : end + len("} // namespace functions")])[1]
    except ValueError as error:  # a listing no reading gives back (parse_prompt refuses it too)
        raise RenderError(f"the tools are written in a way that cannot be read back: {error}") from None


def _options_shown(draft: Draft) -> None:
    """The system block prints the date (option ``now``, ``YYYY-MM-DD``), the model identity and
    the reasoning effort; their defaults read back as no option. ``builtin_tools`` comes back as
    the sections written (``browser``, then ``python``); an empty one as no option.

    ``{{- "Current date: " + strftime_now("%Y-%m-%d") + "\\n\\n" }}``
    """
    draft.options["now"] = draft.now.strftime("%Y-%m-%d")
    if draft.options.get("model_identity") == DEFAULT_IDENTITY:
        del draft.options["model_identity"]
    if draft.options.get("reasoning_effort") == DEFAULT_EFFORT:
        del draft.options["reasoning_effort"]
    given = draft.options.pop("builtin_tools", None)
    if not given:
        return
    if not isinstance(given, list | tuple):  # `{%- for tool in builtin_tools %}`: a list of names
        raise RenderError(f"builtin_tools must be a list of tool names, got {describe(given, 40)}")
    draft.options["builtin_tools"] = [name for name in BUILTIN_TOOLS if name in given]


def _later_system_messages_dropped(draft: Draft) -> None:
    """A system or developer message after the first message is never written: the loop writes
    only assistant, tool and user messages.

    An answer they follow is no longer the last message, and is written so (``<|end|>``, not
    ``<|return|>``): an empty system message at the end stands for them.

    ``{#- At this point only assistant/user/tool messages should remain #}``
    """
    trailing = len(draft.messages) > 1 and isinstance(draft.messages[-1], SystemMessage)
    draft.messages[1:] = [m for m in draft.messages[1:] if not isinstance(m, SystemMessage)]
    last = draft.messages[-1] if draft.messages else None
    if trailing and not draft.add_generation_prompt and isinstance(last, AssistantMessage) and not last.tool_calls:
        draft.messages.append(SystemMessage(content=""))


def _first_system_as_instructions(draft: Draft) -> None:
    """A first system or developer message is the developer block's instructions: it reads back
    as a system message, and an empty one is not written (unless it is the only message: a
    conversation the template can write has one, and none reads back as an empty system message).

    ``{%- if messages[0].role == "developer" or messages[0].role == "system" %}``
    """
    if draft.messages and isinstance(draft.messages[0], SystemMessage):
        first = draft.messages[0]
        if first.content or len(draft.messages) == 1:
            draft.messages[0] = SystemMessage(content=first.content)
        else:
            del draft.messages[0]


def _history_reasoning_dropped(draft: Draft) -> None:
    """An answer's reasoning is written only for the last message of a prompt without the
    generation prompt.

    ``{#- CoT is dropped during all previous turns, so we never render it for inference #}``
    """
    last = len(draft.messages) - 1
    for index, message in enumerate(draft.messages):
        kept = index == last and not draft.add_generation_prompt
        if (
            isinstance(message, AssistantMessage)
            and not message.tool_calls
            and message.reasoning is not None
            and not kept
        ):
            draft.messages[index] = message.model_copy(update={"reasoning": None})


def _call_analysis(draft: Draft) -> None:
    """A message with calls writes its content, or else its reasoning, as its analysis (read
    back as reasoning), unless an answer without calls follows it later.

    ``{%- elif message.content and not future_final_message.found %}``
    """
    for index, message in enumerate(draft.messages):
        if not isinstance(message, AssistantMessage) or not message.tool_calls:
            continue
        later = draft.messages[index + 1 :]
        answered = any(isinstance(m, AssistantMessage) and not m.tool_calls for m in later)
        analysis = (message.content if isinstance(message.content, str) else None) or message.reasoning or None
        kept = None if answered or not analysis else analysis
        draft.messages[index] = message.model_copy(update={"content": None, "reasoning": kept})


def _first_call_only(draft: Draft) -> None:
    """Only a message's first call is written.

    ``{%- set tool_call = message.tool_calls[0] %}``
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and len(message.tool_calls) > 1:
            draft.messages[index] = message.model_copy(update={"tool_calls": message.tool_calls[:1]})


def number_calls_rule(draft: Draft) -> None:
    """Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... and a result takes the
    id of the call at its position in the results after it.

    ``{{- "<|start|>assistant to=" }}`` (no line writes an id)
    """
    number_calls(draft)


def _result_names(draft: Draft) -> None:
    """A result is written under the name of the last call written before it, whatever its own.

    ``{{- "<|start|>functions." + last_tool_call.name }}``
    """
    name = None
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            name = message.tool_calls[0].name
        elif isinstance(message, ToolMessage):
            draft.messages[index] = message.model_copy(update={"name": name})
