"""The corpus of real model output (tests/corpus/): loading cases and judging a parse against
what the case's public source expects (docs/corpus.md)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import codec
from codec.registry import FORMATS

ROOT = Path(__file__).resolve().parent.parent / "corpus"
FAMILY_OF = {name: spec.family.name for name, spec in FORMATS.items()}  # format -> its family folder


@dataclass(frozen=True)
class Case:
    """One raw completion with the message its source expects."""

    path: Path
    format: str
    source: str
    note: str
    completion: str
    expected: dict[str, Any]
    options: dict[str, Any]
    tools: list[dict[str, Any]] | None
    history: list[dict[str, Any]] | None
    policy: str | None  # where the sources disagree, the documented policy the case is judged by
    finish_reason: str | None = None  # the engine's, when the source says how the output ended

    @property
    def name(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"

    @property
    def family(self) -> str:
        return FAMILY_OF[self.format]


def load_cases() -> list[Case]:
    """Every case file under tests/corpus/<family>/, sorted by path."""
    cases = []
    for path in sorted(ROOT.glob("*/*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        unknown = set(raw) - {
            "format",
            "source",
            "note",
            "completion",
            "expected",
            "options",
            "tools",
            "history",
            "policy",
            "finish_reason",
        }
        if unknown:
            raise ValueError(f"{path}: unknown keys {sorted(unknown)}")
        if raw.get("policy") not in (None, *POLICIES):
            raise ValueError(f"{path}: unknown policy {raw['policy']!r} (docs/corpus.md lists them)")
        cases.append(
            Case(
                path=path,
                format=raw["format"],
                source=raw["source"],
                note=raw.get("note", ""),
                completion=raw["completion"],
                expected=raw["expected"],
                options=raw.get("options", {}),
                tools=raw.get("tools"),
                history=raw.get("history"),
                policy=raw.get("policy"),
                finish_reason=raw.get("finish_reason"),
            )
        )
    return cases


def _text(value: Any) -> str | None:
    """Content or reasoning as the comparison sees it: ends trimmed, empty is absent (peers
    disagree on both; docs/corpus.md)."""
    if value is None:
        return None
    if not isinstance(value, str):
        value = "".join(part.get("text", "") for part in value)
    return value.strip() or None


def _arguments(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def observed(message: codec.AssistantMessage) -> dict[str, Any]:
    """The parts of a parsed message a case judges, in the corpus's shape."""
    return {
        "reasoning": _text(message.reasoning),
        "content": _text(message.content),
        "tool_calls": [{"name": call.name, "arguments": call.arguments} for call in message.tool_calls],
    }


def expected_of(case: Case) -> dict[str, Any]:
    expected = case.expected
    return {
        "reasoning": _text(expected.get("reasoning")),
        "content": _text(expected.get("content")),
        "tool_calls": [
            {"name": call["name"], "arguments": _arguments(call.get("arguments", {}))}
            for call in expected.get("tool_calls", [])
        ],
    }


def _stream(case: Case, chunks: list[str]) -> codec.AssistantMessage:
    parser = codec.load(case.format).stream(tools=case.tools, history=case.history, **case.options)
    for chunk in chunks:
        parser.feed(chunk)
    parser.close(case.finish_reason)
    return parser.message


def chunkings(text: str) -> dict[str, list[str]]:
    """The chunkings every case is streamed under: characters, fixed sizes, and a seeded random split."""
    ways = {f"size {n}": [text[i : i + n] for i in range(0, len(text), n)] for n in (1, 2, 3, 5, 8, 17)}
    rng = random.Random(len(text))
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, max(1, len(text) // 6)))) if len(text) > 1 else []
    ways["random"] = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return ways


def _truncated_call_agrees(case: Case, want: dict[str, Any], message: codec.AssistantMessage) -> bool:
    """Policy ``truncated-call``: the calls the output finished agree with the source; the one it
    cut off is held apart (``truncated_call``, or as content when cut inside its name), never run —
    whether the source finalized it, returned it as content or swallowed it."""
    got = observed(message)
    if got["reasoning"] != want["reasoning"]:
        return False
    calls, finished = want["tool_calls"], got["tool_calls"]
    if len(calls) == len(finished) + 1:  # the source finalized the cut call
        cut, calls = calls[-1], calls[:-1]
        held = message.truncated_call
        if held is None or held.name != cut["name"]:
            return False
        if any(cut["arguments"].get(key, _ABSENT) != value for key, value in held.arguments.items()):
            return False
    elif message.truncated_call is None and not (got["content"] and case.completion.rstrip().endswith(got["content"])):
        return False
    if finished != calls:
        return False
    content = got["content"]
    return content in (want["content"], None) or case.completion.rstrip().endswith(content)


def _text_between_calls_agrees(case: Case, want: dict[str, Any], message: codec.AssistantMessage) -> bool:
    """Policy ``text-between-calls``: text the model wrote between or after its calls is content
    (the source dropped it): the content starts with the source's, and the rest is text of the
    completion; everything else agrees."""
    got = observed(message)
    if got["tool_calls"] != want["tool_calls"] or got["reasoning"] != want["reasoning"]:
        return False
    content, expected = got["content"] or "", want["content"] or ""
    if not content.startswith(expected):
        return False
    flat = " ".join(case.completion.split())
    return all(" ".join(line.split()) in flat for line in content[len(expected) :].splitlines())


_ABSENT = object()
POLICIES: dict[str, Any] = {
    "truncated-call": _truncated_call_agrees,
    "text-between-calls": _text_between_calls_agrees,
}


def judge(case: Case) -> list[str]:
    """What is wrong with the parse of ``case``, whole and under every chunking; empty when it passes."""
    want = expected_of(case)
    whole = codec.load(case.format).parse(
        case.completion, tools=case.tools, history=case.history, finish_reason=case.finish_reason, **case.options
    )
    problems = []
    got = observed(whole)
    if case.policy is not None:
        if not POLICIES[case.policy](case, want, whole):
            problems.append(f"whole parse under policy {case.policy}: source expects {want}, got {got}")
    elif got != want:
        problems.append(f"whole parse: expected {want}, got {got}")
    for way, chunks in chunkings(case.completion).items():
        streamed = observed(_stream(case, chunks))
        if streamed != got:
            problems.append(f"streamed ({way}) differs from the whole parse: {streamed}")
            break
    return problems
