"""Regenerate tests/golden/render/: the only way those golden files change.

    /tmp/venv/bin/python tests/regen_render_goldens.py

For each case and format it writes ``<case>/<format>.json`` (the render call) and
``<case>/<format>.txt`` (the prompt, byte-exact), after checking that codec and transformers'
``apply_chat_template`` agree on it. Review ``git diff tests/golden/render`` before committing.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from test_render_parity import (
    GOLDEN,
    codec_render,
    reference_render,
    render_case_json,
)

import codec
from codec.strategies import RenderCase

NOW = datetime(2026, 3, 14, 9, 26, 53)

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
SEARCH: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the web.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "filters": {
                    "type": "object",
                    "properties": {"site": {"type": "string"}, "max_results": {"type": "integer"}},
                },
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["query"],
        },
    },
}


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


PLAIN_CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a concise assistant."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Japan?"},
]

AGENT_TURN: list[dict[str, Any]] = [
    {"role": "system", "content": "You can look things up."},
    {"role": "user", "content": "Weather in Paris, and any news about the Louvre?"},
    {
        "role": "assistant",
        "reasoning_content": "Two lookups: weather and a search.",
        "reasoning": "Two lookups: weather and a search.",
        "tool_calls": [
            _call("call_a1", "get_weather", {"city": "Paris", "unit": "celsius"}),
            _call(
                "call_b2",
                "search",
                {
                    "query": "Louvre news",
                    "filters": {"max_results": 3},
                    "tags": ["museum", "paris"],
                },
            ),
        ],
    },
    {"role": "tool", "tool_call_id": "call_a1", "content": '{"temp": 18, "sky": "clear"}'},
    {"role": "tool", "tool_call_id": "call_b2", "content": "Louvre extends opening hours."},
    {
        "role": "assistant",
        "reasoning_content": "Summarise both.",
        "reasoning": "Summarise both.",
        "content": "It is 18 °C and clear in Paris. The Louvre now opens longer.",
    },
]

MULTIMODAL: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture and this clip?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "video_url", "video_url": {"url": "https://example.com/v.mp4"}},
        ],
    },
    {"role": "assistant", "content": "A cat, purring, on video."},
    {"role": "user", "content": [{"type": "text", "text": "Thanks!"}]},
]

OPTIONS: dict[str, dict[str, Any]] = {
    "glm": {"reasoning_effort": "low", "clear_thinking": True},
    "glm-effort": {"reasoning_effort": "hermes", "clear_thinking": True},
    "solar-open": {"reasoning_effort": "low", "think_render_option": "all"},
    "gemma4": {"enable_thinking": True, "preserve_thinking": True},
}


def cases(fmt: str) -> dict[str, RenderCase]:
    """The golden render calls for ``fmt`` (Solar's template cannot render content parts)."""
    found = {
        "plain_chat": RenderCase(PLAIN_CHAT, None, {}, True),
        "agent_turn": RenderCase(AGENT_TURN, [WEATHER, SEARCH], {}, False),
        "options": RenderCase(
            [*AGENT_TURN, {"role": "user", "content": "Thanks."}],
            [WEATHER, SEARCH],
            OPTIONS[fmt],
            True,
        ),
    }
    if fmt != "solar-open":
        found["multimodal"] = RenderCase(MULTIMODAL, None, {}, True)
    return found


def main() -> None:
    """Write every golden file, refusing any prompt transformers would render differently."""
    for fmt in codec.formats():
        for name, case in cases(fmt).items():
            prompt = codec_render(fmt, case, NOW)
            if prompt != reference_render(fmt, case, NOW):
                raise SystemExit(f"{name}/{fmt}: codec and transformers disagree; fix that first")
            folder = GOLDEN / name
            folder.mkdir(parents=True, exist_ok=True)
            text = json.dumps(render_case_json(case, NOW), ensure_ascii=False, indent=2) + "\n"
            (folder / f"{fmt}.json").write_text(text, encoding="utf-8", newline="\n")
            (folder / f"{fmt}.txt").write_bytes(prompt.encode("utf-8"))
            print(f"wrote {folder.relative_to(GOLDEN.parent.parent.parent)}/{fmt}.{{json,txt}}")


if __name__ == "__main__":
    main()
