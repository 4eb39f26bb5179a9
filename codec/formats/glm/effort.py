"""The rules ``glm_effort.jinja`` adds to GLM's: effort personas and control tags in messages.

Quoted lines are from ``templates/glm_effort.jinja``. The persona levels below are the
template's own table (``{%- elif target_mode in ['2', 'apollo', 'low', 'compact', 'fast'] -%}``
…): the prompt shows a persona, and ``parse_prompt`` gives back its level.
"""

from __future__ import annotations

from typing import Any

from codec._canonical import Draft
from codec.models import AssistantMessage, Content, SystemMessage, TextPart, UserMessage

_TAGS = ("[regular]", "[REGULAR]", "[vanilla]", "[standard]", "[default]")
_CONTROL = (*_TAGS, "{REASON:", "[MODE:")
_REGULAR_MODES = ("regular", "vanilla", "standard", "default", "clean")
_LEVELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "0",
        (
            "0",
            "mortal",
            "disabled",
            "none",
            "off",
            "zero",
            "direct",
            "chat",
            "regular",
            "vanilla",
            "standard",
            "default",
            "clean",
        ),
    ),
    ("1", ("1", "hermes", "ulow", "ultra-low", "micro", "minimal")),
    ("2", ("2", "apollo", "low", "compact", "fast")),
    ("3", ("3", "artemis", "lmed", "low-medium", "targeted")),
    ("4", ("4", "athena", "medium", "med", "balanced")),
    ("5", ("5", "prometheus", "mhigh", "medium-high", "architect")),
    ("6", ("6", "solstice", "high", "deep", "thorough")),
    ("7", ("7", "hyperion", "xhigh", "extreme-high", "rigorous", "default")),
    ("8", ("8", "einstein", "uhigh", "ultra-high", "solo-einstein")),
    ("9", ("9", "oracle", "amax", "absolute-max", "solo-oracle", "proof")),
    ("swarm", ("swarm", "einstein-swarm", "20-swarm", "uhigh-swarm")),
    ("deep-swarm", ("deep-swarm", "oracle-swarm", "council", "amax-swarm", "deep-research")),
)


def effort_control_tags(draft: Draft) -> None:
    """``[regular]``, ``[REGULAR]``, ``[vanilla]``, ``[standard]`` and ``[default]`` are removed
    from string content (tool results keep them); any of them in any message switches the
    regular mode on. ``{REASON:x}`` and ``[MODE:x]`` stay in the text and set the effort.

    ``{{- t | replace('[regular]', '') | replace('[REGULAR]', '') | … -}}``
    """
    draft.notes["effort"] = _effort_state(draft)
    for index, message in enumerate(draft.messages):
        if isinstance(message, (UserMessage, SystemMessage, AssistantMessage)) and isinstance(message.content, str):
            text = message.content
            for tag in _TAGS:
                text = text.replace(tag, "")
            draft.messages[index] = message.model_copy(update={"content": text})


def _effort_state(draft: Draft) -> dict[str, Any]:
    """The template's decision: regular mode, the persona level, and whether it thinks."""
    options, contents = draft.options, [m.content if isinstance(m.content, str) else "" for m in draft.messages]
    regular = bool(options.get("regular")) or options.get("mode") in _REGULAR_MODES
    regular = regular or any(tag in text for text in contents for tag in _TAGS)
    effort = options.get("reasoning_effort", "")
    thinking = options.get("enable_thinking", True)
    for text in contents:  # the last message with a tag wins, as the template's loop does
        if "{REASON:" in text:
            inner = text.split("{REASON:")[1].split("}")[0].lower().strip()
            if inner.startswith("i") and len(inner) > 1:
                effort, thinking = inner[1:], False
            else:
                effort = inner
        elif "[MODE:" in text:
            effort = text.split("[MODE:")[1].split("]")[0].lower().strip()
    level = _level(str(effort).lower().strip())
    return {"regular": regular, "level": level, "thinking": bool(thinking) and not regular and level != "0"}


def _level(target: str) -> str:
    for level, names in _LEVELS:
        if target in names:
            return level
    return "7"  # ``{%- else -%}{%- set reasoning_instructions = inst_hyperion -%}``


def effort_options(draft: Draft) -> None:
    """The prompt shows the persona (its level comes back as ``reasoning_effort``), and through
    the generation prompt whether the regular mode is on (``<|assistant|>``) or thinking is off
    (``<|assistant|><think></think>``); nothing else of the options.

    ``{% if is_explicit_regular %}<|assistant|>{% elif not current_thinking %}<|assistant|>{{ '<think></think>' }}``
    """
    state = draft.notes["effort"]
    if state["regular"] or state["level"] == "0":
        shown_zero = not state["regular"] and draft.add_generation_prompt
        draft.options = {"reasoning_effort": "0"} if shown_zero else {"regular": True}
        return
    draft.options = {"reasoning_effort": state["level"]}
    if draft.add_generation_prompt and not state["thinking"]:
        draft.options["enable_thinking"] = False


def effort_empty_last_turn(draft: Draft) -> None:
    """A last assistant turn with nothing in it reads ``<|assistant|><think></think>``: the same
    text as the generation prompt with thinking off, which is what it comes back as.

    ``{% elif not current_thinking %}<|assistant|>{{ '<think></think>' }}``
    """
    last = draft.messages[-1] if draft.messages else None
    if draft.add_generation_prompt or not isinstance(last, AssistantMessage):
        return
    if last.content is not None or last.reasoning is not None or last.tool_calls:
        return
    draft.messages.pop()
    draft.add_generation_prompt = True
    if "reasoning_effort" in draft.options and draft.options["reasoning_effort"] != "0":
        draft.options["enable_thinking"] = False
    else:
        draft.options = {"reasoning_effort": "0"}


def effort_control_text_as_parts(draft: Draft) -> None:
    """Text holding a control tag comes back as a one-part list: the form the template prints
    verbatim without acting on it, since what the tags did is already in the options.

    ``{%- set txt = msg.content if msg.content is string else '' -%}``
    """
    for index, message in enumerate(draft.messages):
        draft.messages[index] = message.model_copy(update={"content": control_as_parts(message.content)})


def control_as_parts(content: Content | None) -> Content | None:
    """``content`` as a one-part list if it is a string with a control tag in it."""
    if isinstance(content, str) and any(tag in content for tag in _CONTROL):
        return (TextPart(text=content),)
    return content
