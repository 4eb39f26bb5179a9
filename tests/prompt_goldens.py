"""Golden prompts: each case is ``<format>/<case>.input.json`` (messages, tools, options, now,
add_generation_prompt), with ``<case>.prompt.txt`` (the rendered prompt) and
``<case>.canonical.json`` (what parse_prompt gives back). Regenerate with
``python tests/regen_prompt_goldens.py`` and review the diff."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import codec

ROOT = Path(__file__).parent / "golden" / "prompt"


def cases() -> list[tuple[str, str]]:
    """``(format, case)`` of every golden prompt input."""
    return sorted((path.parent.name, path.name.removesuffix(".input.json"))
                  for path in ROOT.glob("*/*.input.json"))


def load_input(fmt: str, case: str) -> dict[str, Any]:
    return json.loads((ROOT / fmt / f"{case}.input.json").read_text(encoding="utf-8"))


def render_input(fmt: str, data: dict[str, Any]) -> str:
    return codec.load(fmt).render(data["messages"], tools=data.get("tools"), now=data.get("now"),
                                  add_generation_prompt=data.get("add_generation_prompt", True),
                                  allow_special_tokens=data.get("allow_special_tokens", False),
                                  **data.get("options", {}))


def canonical_input(fmt: str, data: dict[str, Any]) -> codec.Conversation:
    return codec.load(fmt).canonical(data["messages"], tools=data.get("tools"), now=data.get("now"),
                                     add_generation_prompt=data.get("add_generation_prompt", True),
                                     **data.get("options", {}))


def as_json(conversation: codec.Conversation) -> dict[str, Any]:
    return {"messages": conversation.to_openai(), "tools": list(conversation.tools),
            "options": conversation.options, "add_generation_prompt": conversation.add_generation_prompt}
