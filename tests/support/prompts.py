"""Golden prompts: each case folder holds, per format, ``<format>.input.json`` (messages, tools,
options, now, add_generation_prompt; written by hand), ``<format>.prompt.txt`` (the rendered
prompt) and ``<format>.canonical.json`` (what ``parse_prompt`` gives back). The last two are
written by ``python tests/regen_goldens.py --kind prompt``; review the diff."""

from __future__ import annotations

import json
from typing import Any

import codec
from support import goldens


def cases() -> list[tuple[str, str]]:
    """``(case, format)`` of every golden prompt."""
    return goldens.entries("prompt")


def load_input(case: str, fmt: str) -> dict[str, Any]:
    """The hand-written render call of a golden prompt."""
    data: dict[str, Any] = json.loads(goldens.path("prompt", case, fmt, "input.json").read_text(encoding="utf-8"))
    return data


def load_prompt(case: str, fmt: str) -> str:
    """The expected prompt, byte-exact (no newline translation: a ``\\r`` would be part of it)."""
    return goldens.path("prompt", case, fmt, "prompt.txt").read_bytes().decode("utf-8")


def load_canonical(case: str, fmt: str) -> Any:
    """The expected ``parse_prompt`` result, as ``as_json`` writes it."""
    return json.loads(goldens.path("prompt", case, fmt, "canonical.json").read_text(encoding="utf-8"))


def render_input(fmt: str, data: dict[str, Any]) -> str:
    """``render`` of a golden input (special tokens only where the input allows them)."""
    return codec.load(fmt).render(
        data["messages"],
        tools=data.get("tools"),
        now=data.get("now"),
        add_generation_prompt=data.get("add_generation_prompt", True),
        allow_special_tokens=data.get("allow_special_tokens", False),
        **data.get("options", {}),
    )


def canonical_input(fmt: str, data: dict[str, Any]) -> codec.Conversation:
    """``canonical`` of a golden input: what its prompt must parse back to."""
    return codec.load(fmt).canonical(
        data["messages"],
        tools=data.get("tools"),
        now=data.get("now"),
        add_generation_prompt=data.get("add_generation_prompt", True),
        **data.get("options", {}),
    )


def as_json(conversation: codec.Conversation) -> dict[str, Any]:
    """A conversation as the canonical golden stores it."""
    return {
        "messages": conversation.to_openai(),
        "tools": list(conversation.tools),
        "options": conversation.options,
        "add_generation_prompt": conversation.add_generation_prompt,
    }
