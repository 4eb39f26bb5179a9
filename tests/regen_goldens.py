"""Regenerate tests/golden/: the only way golden files change (layout: tests/golden/README.md).

    python tests/regen_goldens.py [--kind parse|prompt|render ...] [--check]

By default it writes every golden file whose content would change, then ``git diff tests/golden``
is reviewed before committing. ``--check`` writes nothing: it lists the files regeneration would
change and exits 1 if there are any (``tests/test_regen_goldens.py`` runs it, so stale goldens
fail CI). Either way it exits 2, writing nothing, if a golden cannot be regenerated (codec and
transformers disagree on a render). What each kind regenerates, and from what:

- ``parse``: ``<case>/<format>.json`` gets the ``message``, ``finish_reason``, ``truncated_call``
  and ``diagnostics`` codec reads from the hand-written completion ``<format>.txt``, given the
  ``options`` and ``tools`` the .json names;
- ``prompt``: ``<format>.prompt.txt`` and ``<format>.canonical.json`` from the hand-written
  ``<format>.input.json`` (render it, then ``parse_prompt`` the prompt);
- ``render``: ``<format>.json`` and ``<format>.txt`` for the conversations below, per format of
  the registry (its ``golden_options``; no content parts if ``string_content_only``), refusing
  any prompt transformers' ``apply_chat_template`` renders differently.
"""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import codec
from codec.formats._demo_scenario import one_call_each
from codec.registry import FORMATS
from codec.strategies import RenderCase
from support import goldens, parsing, prompts, rendering
from support.calls import call_id
from support.reference import reference_render

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


class GoldenError(Exception):
    """A golden cannot be regenerated (codec and transformers disagree on a render golden)."""


def render_cases(fmt: str) -> dict[str, RenderCase]:
    """The golden render calls for ``fmt``, shaped by its registry entry."""
    spec = FORMATS[fmt]
    agent_turn = one_call_each(AGENT_TURN) if spec.one_call_per_message else AGENT_TURN
    agent_turn = _ids_for(fmt, agent_turn)
    found = {
        "plain_chat": RenderCase(PLAIN_CHAT, None, {}, True),
        "agent_turn": RenderCase(agent_turn, [WEATHER, SEARCH], {}, False),
        "options": RenderCase(
            [*agent_turn, {"role": "user", "content": "Thanks."}],
            [WEATHER, SEARCH],
            dict(spec.golden_options),
            True,
        ),
    }
    if not spec.string_content_only:
        found["multimodal"] = RenderCase(_renderable(fmt, MULTIMODAL), None, {}, True)
    return found


def _ids_for(fmt: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with each call id and result id as the format's template takes one
    (``call_id``: of the length it requires, Mistral v0.3's nine characters)."""
    if FORMATS[fmt].call_id_length is None:
        return messages
    out = []
    for message in messages:
        message = dict(message)
        if "tool_calls" in message:
            message["tool_calls"] = [{**call, "id": call_id(fmt, call["id"])} for call in message["tool_calls"]]
        if "tool_call_id" in message:
            message["tool_call_id"] = call_id(fmt, message["tool_call_id"])
        out.append(message)
    return out


def _renderable(fmt: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` without the parts the template refuses on their own (Qwen3.5's fails on
    audio and ``video_url`` parts: ``raise_exception('Unexpected item type in content.')``)."""

    def renders(part: dict[str, Any]) -> bool:
        try:
            codec.load(fmt).render([{"role": "user", "content": [part]}], now=NOW)
        except codec.RenderError:
            return False
        return True

    return [
        {**m, "content": [p for p in m["content"] if renders(p)]} if isinstance(m["content"], list) else m
        for m in messages
    ]


def _json(data: Any) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def render_goldens() -> dict[Path, bytes]:
    """Every render golden file, each prompt first checked against transformers."""
    files: dict[Path, bytes] = {}
    for fmt in codec.formats():
        for name, case in render_cases(fmt).items():
            prompt = rendering.codec_render(fmt, case, NOW)
            if prompt != reference_render(fmt, case, NOW):
                raise GoldenError(f"render/{name}/{fmt}: codec and transformers disagree; fix that first")
            files[goldens.path("render", name, fmt, "json")] = _json(rendering.case_json(case, NOW))
            files[goldens.path("render", name, fmt, "txt")] = prompt.encode("utf-8")
    return files


def prompt_goldens() -> dict[Path, bytes]:
    """The prompt and canonical file of every hand-written prompt input."""
    files: dict[Path, bytes] = {}
    for case, fmt in prompts.cases():
        prompt = prompts.render_input(fmt, prompts.load_input(case, fmt))
        files[goldens.path("prompt", case, fmt, "prompt.txt")] = prompt.encode("utf-8")
        parsed = codec.load(fmt).parse_prompt(prompt)
        files[goldens.path("prompt", case, fmt, "canonical.json")] = _json(prompts.as_json(parsed))
    return files


def parse_goldens() -> dict[Path, bytes]:
    """The expectation of every hand-written completion, its options and tools kept."""
    files: dict[Path, bytes] = {}
    for case, fmt in parsing.golden_cases():
        completion, old = parsing.load_golden(case, fmt)
        tools = parsing.TOOLS if old["tools"] else []
        _, message, codes = parsing.stream_chunks(fmt, [completion], tools=tools, **old["options"])
        expected = {
            "options": old["options"],
            "tools": old["tools"],
            "message": message.to_openai(),
            **parsing.how_it_ended(message),
            "diagnostics": codes,
        }
        files[goldens.path("parse", case, fmt, "json")] = _json(expected)
    return files


GENERATORS: dict[str, tuple[Callable[[], dict[Path, bytes]], tuple[str, ...]]] = {
    "parse": (parse_goldens, ("json",)),
    "prompt": (prompt_goldens, ("prompt.txt", "canonical.json")),
    "render": (render_goldens, ("json", "txt")),
}
"""Each kind's generator, and the parts of its case folders that the generator writes (a file
of such a part that the generator no longer produces is stale)."""


def plan(kinds: Sequence[str]) -> tuple[dict[Path, bytes], list[Path]]:
    """The files of ``kinds`` whose content would change (new content) and the stale ones."""
    changed: dict[Path, bytes] = {}
    stale: list[Path] = []
    for kind in kinds:
        generate, parts = GENERATORS[kind]
        files = generate()
        changed |= {path: data for path, data in files.items() if not path.is_file() or path.read_bytes() != data}
        written = (path for folder in goldens.case_folders(kind) for path in sorted(folder.iterdir()))
        stale += [path for path in written if goldens.part_of(path) in parts and path not in files]
    return changed, stale


def _summary(path: Path, data: bytes) -> str:
    name = path.relative_to(goldens.ROOT)
    if not path.is_file():
        return f"new      {name}"
    old, new = path.read_bytes().decode("utf-8").splitlines(), data.decode("utf-8").splitlines()
    diff = list(difflib.unified_diff(old, new, lineterm="", n=0))
    added = sum(line.startswith("+") and not line.startswith("+++") for line in diff)
    removed = sum(line.startswith("-") and not line.startswith("---") for line in diff)
    return f"changed  {name} (+{added} -{removed} lines)"


def report(changed: dict[Path, bytes], stale: list[Path]) -> list[str]:
    """One line per file regeneration would write or delete."""
    lines = [_summary(path, data) for path, data in sorted(changed.items())]
    return lines + [f"stale    {path.relative_to(goldens.ROOT)}" for path in stale]


def write(changed: dict[Path, bytes], stale: list[Path]) -> None:
    """Apply a plan: write what changed, delete what is stale (and folders left empty)."""
    for path, data in changed.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for path in stale:
        path.unlink()
        if not any(path.parent.iterdir()):
            path.parent.rmdir()


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate (or, with ``--check``, compare) the goldens of the kinds asked for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", action="append", choices=goldens.KINDS, help="repeatable; default: every kind")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if any golden would change")
    args = parser.parse_args(argv)
    kinds = args.kind or list(goldens.KINDS)
    try:
        changed, stale = plan(kinds)
    except GoldenError as error:
        print(error)
        return 2
    for line in report(changed, stale):
        print(line)
    if args.check:
        if changed or stale:
            print(f"{len(changed) + len(stale)} golden files are stale: run tests/regen_goldens.py, review the diff")
            return 1
        print(f"goldens up to date ({', '.join(kinds)})")
        return 0
    write(changed, stale)
    print(f"{len(changed)} written, {len(stale)} deleted ({', '.join(kinds)}); review git diff tests/golden")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
