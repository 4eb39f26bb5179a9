"""Streaming cost is linear (docs/architecture.md, invariant 6), checked by counting work — the Python function
calls a whole stream makes at two sizes — never by timing (benchmarks/ measures µs per feed).

Every format of the registry streams the same long string argument: its ``examples.code_head``,
lines of code in 4-character feeds, its ``examples.code_tail``.
"""

from __future__ import annotations

import cProfile
import pstats
import time

import pytest

import codec
from codec.engine.grammar import compiled
from codec.registry import FORMATS
from support.calls import call_ends
from support.parsing import TOOLS, ids

pytestmark = pytest.mark.scale  # large inputs: left out of mutation runs (docs/mutation.md)

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


def _whole_parse_seconds(fmt: str, calls: int) -> float:
    """Best of three: a whole parse of ``calls`` finished calls in one completion."""
    two = FORMATS[fmt].examples.two_calls
    grammar = compiled(FORMATS[fmt].grammar)
    pattern = grammar.patterns.get("CALL_OPEN")  # a call with no opening marker (Llama 3's `{`)
    start = pattern.first.search(two).start() if pattern and pattern.first else two.index(grammar.display("CALL_OPEN"))  # type: ignore[union-attr]
    ends = call_ends(fmt, two)
    end = ends[-1][1]
    if pattern and len({m.group() for m in pattern.regex.finditer(two)}) > 1:
        # The first call's opener is not the others' (Llama 4's list: `[` before the first call,
        # `,` before each other one): the second call, from the first one's end, repeated.
        text = two[:end] + two[ends[0][1] : end] * (calls - 2) + two[end:]
    else:
        text = two[:start] + two[start:end] * (calls // 2) + two[end:]  # the two calls, repeated
    c = codec.load(fmt)
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        message = c.parse(text, tools=TOOLS, id_factory=ids)
        best = min(best, time.process_time() - start)
    assert len(message.tool_calls) >= calls // 2, "the example's calls are read back"
    return best


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_whole_parse_of_many_calls_grows_linearly(fmt: str) -> None:
    """A whole parse holds every piece at once: nothing may walk what is still queued per piece
    (a copy of the queue per marker made 10,000 calls take 19 s). Two sizes, ten times apart, in
    one run: a quadratic cost would take ~100 times as long; the bound is 30."""
    small, large = _whole_parse_seconds(fmt, 200), _whole_parse_seconds(fmt, 2_000)
    assert large <= 30 * max(small, 1e-3), (small, large)
