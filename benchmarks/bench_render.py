"""Render 20- and 200-turn agent conversations with every bundled template: transformers'
``apply_chat_template`` against ``codec``, side by side in one run, on the same inputs.

    /tmp/venv/bin/python benchmarks/bench_render.py [--repeat N]

Each conversation: a system message, 5 tools, and per turn a user message, an assistant message
with reasoning and a tool call, the tool's result and the assistant's answer. The prompts are
checked byte-identical once before timing; each time is the best of ``--repeat`` runs, taken
in turns.
Target (docs/architecture.md, performance): codec <= 0.5 x transformers.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a source checkout
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the tests' reference renderer

import codec
from codec.registry import FORMATS
from support.reference import frozen_clock, reference_tokenizer

NOW = datetime(2026, 3, 14, 9, 26, 53)


def tools() -> list[dict[str, Any]]:
    """Five tools with small nested schemas."""
    return [
        {
            "type": "function",
            "function": {
                "name": f"tool_{n}",
                "description": f"Tool number {n}.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to look for"},
                        "limit": {"type": "integer"},
                        "filters": {"type": "object", "properties": {"site": {"type": "string"}}},
                    },
                    "required": ["query"],
                },
            },
        }
        for n in range(5)
    ]


def conversation(turns: int, id_length: int | None = None) -> list[dict[str, Any]]:
    """``turns`` agent turns in the template form (arguments as objects, reasoning twice);
    ``id_length``: the call ids' length, where the template requires one (Mistral v0.3's 9)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful agent."}]
    for n in range(turns):
        reasoning = f"Turn {n}: I should call tool_{n % 5} to find out."
        call = {
            "id": f"call_{n:06d}" if id_length is None else f"{n:0{id_length}d}",
            "type": "function",
            "function": {"name": f"tool_{n % 5}", "arguments": {"query": f"q{n}", "limit": n}},
        }
        messages += [
            {"role": "user", "content": f"Question {n}: what does tool {n % 5} say?"},
            {
                "role": "assistant",
                "reasoning_content": reasoning,
                "reasoning": reasoning,
                "tool_calls": [call],
            },
            {"role": "tool", "tool_call_id": call["id"], "content": f"Result {n}: 42."},
            {"role": "assistant", "content": f"Tool {n % 5} says 42."},
        ]
    return messages


def best_ms(runs: tuple[Callable[[], object], ...], repeat: int) -> list[float]:
    """The fastest of ``repeat`` runs of each callable, in milliseconds. The callables take
    turns, so load from elsewhere on the machine falls on all of them alike; the garbage
    collector is paused while timing, as ``timeit`` does."""
    best = [float("inf")] * len(runs)
    for _ in range(repeat):
        for index, run in enumerate(runs):
            gc.disable()
            start = time.perf_counter()
            run()
            elapsed = time.perf_counter() - start
            gc.enable()
            best[index] = min(best[index], elapsed * 1000)
    return best


def measure(fmt: str, turns: int, repeat: int) -> tuple[float, float]:
    """(transformers ms, codec ms) for one format and length, after checking equal output."""
    tokenizer, ours = reference_tokenizer(fmt), codec.load(fmt)
    messages, tool_list = conversation(turns, FORMATS[fmt].call_id_length), tools()

    def theirs() -> object:
        return tokenizer.apply_chat_template(messages, tools=tool_list, add_generation_prompt=True, tokenize=False)

    def mine() -> str:
        return ours.render(messages, tools=tool_list, add_generation_prompt=True, now=NOW)

    with frozen_clock(NOW):  # outside the timed calls: patching is not part of the measurement
        if theirs() != mine():
            raise SystemExit(f"{fmt}, {turns} turns: prompts differ")
        theirs_ms, ours_ms = best_ms((theirs, mine), repeat)
        return theirs_ms, ours_ms


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    print(f"{'format':<12} {'turns':>5} {'transformers ms':>16} {'codec ms':>9} {'ratio':>6}")
    for fmt in codec.formats():
        for turns in (20, 200):
            theirs, ours = measure(fmt, turns, args.repeat)
            print(f"{fmt:<12} {turns:>5} {theirs:>16.2f} {ours:>9.2f} {ours / theirs:>6.2f}")


if __name__ == "__main__":
    main()
