"""Constrained decoding cost: building a format's grammar (``codec.constrain.build``, plus
llguidance compiling it into a matcher) and computing the token mask, per format, with 5 and
50 tools.

The tokenizer is ``codec.constrain.check``'s: the 256 bytes plus the format's special tokens
(a real vocabulary is ~150k tokens, so real masks cost more; llguidance's per-token cost grows
with the vocabulary trie). The completion is a reasoning sentence, a short answer and two calls
written the format's own way; the mask is computed before each of its tokens, and µs/token is
the mean. Build time is the best of a few runs with the caches cleared each time (a server
building the same constraint again pays less: the turn part is cached). Needs the
``constrain`` extra (llguidance). Run: ``python benchmarks/bench_constrain.py``.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import codec
from codec.constrain import build
from codec.constrain.check import matcher, tokens
from codec.constrain.skeleton import turn

FORMATS = ("glm", "solar-open", "gemma4")
OPTIONS: dict[str, dict[str, Any]] = {"gemma4": {"enable_thinking": True}}
NOW = datetime(2026, 1, 31)
REPEAT = 5


def tools(count: int) -> list[dict[str, Any]]:
    """``count`` tools with a few typed parameters each (strings, integers, an enum, nesting)."""
    return [
        {
            "type": "function",
            "function": {
                "name": f"tool_{index}",
                "description": f"Tool number {index}.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string"},
                        "limit": {"type": "integer"},
                        "mode": {"enum": ["fast", "exact"]},
                        "filters": {
                            "type": "object",
                            "properties": {
                                "tags": {"type": "array", "items": {"type": "string"}},
                                "strict": {"type": "boolean"},
                            },
                        },
                    },
                    "required": ["query"],
                    "additionalProperties": False,
                },
            },
        }
        for index in range(count)
    ]


def completion(c: codec.Codec, offered: list[dict[str, Any]]) -> str:
    """What the template writes for a reply with reasoning, an answer and two calls."""
    history = [{"role": "user", "content": "Find the failing tests."}]
    calls = [
        {
            "id": f"a1b2c3d4e{index}",
            "type": "function",
            "function": {
                "name": f"tool_{index}",
                "arguments": {
                    "query": "test_parse fails on line 12",
                    "limit": 5,
                    "filters": {"tags": ["ci", "x"], "strict": True},
                },
            },
        }
        for index in range(2)
    ]
    reply = {
        "role": "assistant",
        "reasoning_content": "The user wants failing tests; search first.",
        "tool_calls": calls,
    }
    options = OPTIONS.get(c.name, {})
    prompt = c.render(history, tools=offered, now=NOW, **options)
    full = c.render([*history, reply], tools=offered, add_generation_prompt=False, now=NOW, **options)
    if not full.startswith(prompt):
        raise SystemExit(f"{c.name}: the reply does not continue the prompt")
    return full[len(prompt) :]


def measure(name: str, count: int) -> tuple[float, float, int]:
    c = codec.load(name)
    offered = tools(count)
    best = float("inf")
    for _ in range(REPEAT):
        turn.cache_clear()
        start = time.perf_counter()
        built = build(c, tools=offered, **OPTIONS.get(name, {}))
        matcher(name, built.grammar)
        best = min(best, time.perf_counter() - start)
    ids = tokens(name, completion(c, offered))
    m = matcher(name, built.grammar)
    spent = 0.0
    for token in ids:
        start = time.perf_counter()
        m.compute_bitmask()
        spent += time.perf_counter() - start
        if not m.consume_token(token):
            raise SystemExit(f"{name}: the matcher refused the completion: {m.get_error()[:300]}")
    return best * 1e3, spent / len(ids) * 1e6, len(ids)


def main() -> None:
    print(f"{'format':<12} {'tools':>5} {'build ms':>9} {'µs/token':>9} {'tokens':>7}")
    for name in FORMATS:
        for count in (5, 50):
            build_ms, per_token, length = measure(name, count)
            print(f"{name:<12} {count:>5} {build_ms:>9.1f} {per_token:>9.1f} {length:>7}")


if __name__ == "__main__":
    main()
