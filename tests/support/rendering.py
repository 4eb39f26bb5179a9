"""Render goldens: each case folder holds, per format, ``<format>.json`` (the render call:
messages, tools, options, add_generation_prompt, now) and ``<format>.txt`` (the prompt, byte
exact). Both are written by ``python tests/regen_goldens.py --kind render`` from the cases in
that script, after checking codec against transformers (``support.reference``)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import codec
from codec.strategies import RenderCase
from support import goldens


def codec_render(fmt: str, case: RenderCase, now: datetime) -> str:
    """codec's prompt for ``case``."""
    return codec.load(fmt).render(
        case.messages,
        tools=case.tools,
        add_generation_prompt=case.add_generation_prompt,
        now=now,
        **case.options,
    )


def case_json(case: RenderCase, now: datetime) -> dict[str, Any]:
    """The golden JSON for a render call."""
    return {
        "messages": case.messages,
        "tools": case.tools,
        "options": case.options,
        "add_generation_prompt": case.add_generation_prompt,
        "now": now.isoformat(),
    }


def load_case(case: str, fmt: str) -> tuple[RenderCase, datetime]:
    """A golden render call and the clock it renders at."""
    data = json.loads(goldens.path("render", case, fmt, "json").read_text(encoding="utf-8"))
    render_case = RenderCase(data["messages"], data["tools"], data["options"], data["add_generation_prompt"])
    return render_case, datetime.fromisoformat(data["now"])


def load_prompt(case: str, fmt: str) -> str:
    """The expected prompt, byte-exact."""
    return goldens.path("render", case, fmt, "txt").read_bytes().decode("utf-8")
