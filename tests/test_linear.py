"""Streaming cost is linear (DESIGN invariant 6), checked by counting work — the Python function
calls a whole stream makes at two sizes — never by timing (benchmarks/ measures µs per feed)."""

from __future__ import annotations

import cProfile
import pstats

import codec
from parse_support import TOOLS, ids

FORMATS = {
    "glm": ("</think><tool_call>run_code<arg_key>code</arg_key><arg_value>", "</arg_value></tool_call>", {}),
    "solar-open": ('<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>run_code<|tool_call:args|>{"code": "',
                   '"}<|tool_call:end|><|calls|>', {}),
    "gemma4": ('<|tool_call>call:run_code{code:<|"|>', '<|"|>}<tool_call|>', {}),
}
CODE_LINE = "    total = compute(values[i], weights[i]) + offset  # step\n"


def _feeds(fmt: str, size: int) -> list[str]:
    head, tail, _ = FORMATS[fmt]
    body = (CODE_LINE * (size // len(CODE_LINE) + 1))[:size]
    return [head] + [body[i : i + 4] for i in range(0, len(body), 4)] + [tail]


def _stream(fmt: str, feeds: list[str]) -> None:
    parser = codec.load(fmt).stream(tools=TOOLS, id_factory=ids)
    for feed in feeds:
        parser.feed(feed)
    parser.close()
    assert len(parser.message.tool_calls[0].arguments["code"]) > 1000


def _calls(fmt: str, size: int) -> int:
    feeds = _feeds(fmt, size)
    profile = cProfile.Profile()
    profile.runcall(_stream, fmt, feeds)
    return sum(stat[1] for stat in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]


def test_function_calls_grow_linearly_with_the_argument() -> None:
    for fmt in FORMATS:
        small, large = _calls(fmt, 12_500), _calls(fmt, 50_000)
        assert large <= 4 * small * 1.1, (fmt, small, large)
