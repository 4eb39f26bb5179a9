"""Streaming cost is linear (docs/architecture.md, invariant 6), checked by counting work — the Python function
calls a whole stream makes at two sizes — never by timing (benchmarks/ measures µs per feed).

Every format of the registry streams the same long string argument: its ``examples.code_head``,
lines of code in 4-character feeds, its ``examples.code_tail``.
"""

from __future__ import annotations

import cProfile
import pstats

import pytest

import codec
from codec.registry import FORMATS
from support.parsing import TOOLS, ids

CODE_LINE = "    total = compute(values[i], weights[i]) + offset  # step\n"


def _feeds(fmt: str, size: int) -> list[str]:
    examples = FORMATS[fmt].examples
    body = (CODE_LINE * (size // len(CODE_LINE) + 1))[:size]
    return [examples.code_head] + [body[i : i + 4] for i in range(0, len(body), 4)] + [examples.code_tail]


def _stream(fmt: str, feeds: list[str]) -> None:
    parser = codec.load(fmt).stream(tools=TOOLS, id_factory=ids)
    for feed in feeds:
        parser.feed(feed)
    parser.close()
    [call] = parser.message.tool_calls
    assert call.arguments["code"] == "".join(feeds[1:-1])


def _calls(fmt: str, size: int) -> int:
    feeds = _feeds(fmt, size)
    profile = cProfile.Profile()
    profile.runcall(_stream, fmt, feeds)
    return sum(stat[1] for stat in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]


@pytest.mark.parametrize("fmt", codec.formats())
def test_function_calls_grow_linearly_with_the_argument(fmt: str) -> None:
    small, large = _calls(fmt, 12_500), _calls(fmt, 50_000)
    assert large <= 4 * small * 1.1, (small, large)
