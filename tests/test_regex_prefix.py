"""``codec.engine.regex_prefix``: the regex of the texts that may still grow into a match.

The lexer waits while what arrived may still become a match (``patterns._may_become``); a
rewrite that left out a true prefix would let it decide early, and the reading would depend on
where a chunk ended. So the property is one-sided: every prefix of every match is accepted. The
other side (it accepts little else) is pinned on examples, since accepting more only delays."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec
from codec.engine.grammar import compiled
from codec.engine.regex_prefix import prefix_regex

GRAMMARS = sorted(path.name for path in (Path(__file__).resolve().parent.parent / "grammars").glob("*.lark"))
PATTERNS = sorted({pattern.regex.pattern for grammar in GRAMMARS for pattern in compiled(grammar).patterns.values()})
CALL_HEAD = r'\s*\{\s*"name"\s*:\s*"(?:[^"\\\n]|\\.)*"\s*,\s*"(?:arguments|parameters)"\s*:'


def test_every_shipped_pattern_is_rewritten() -> None:
    missing = [source for source in PATTERNS if prefix_regex(source) is None]
    assert not missing


def _without_look_around(source: str) -> bool:
    return not any(mark in source for mark in ("(?=", "(?!", "(?<=", "(?<!"))


@pytest.mark.parametrize("source", [s for s in PATTERNS if _without_look_around(s)])
@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_prefix_of_a_match_is_accepted(source: str, data: st.DataObject) -> None:
    match = data.draw(st.from_regex(re.compile(source), fullmatch=True), label="match")
    rewritten = prefix_regex(source)
    assert rewritten is not None
    for end in range(len(match) + 1):
        assert rewritten.fullmatch(match[:end]), (source, match[:end])


@pytest.mark.parametrize(
    ("source", "text", "may_become"),
    [
        (CALL_HEAD, '\n{"name"', True),
        (CALL_HEAD, '{"name": "get_weather", "argu', True),
        (CALL_HEAD, '{"name": "a\\"b", "parameters"', True),
        (CALL_HEAD, '{"name": 5', False),
        (CALL_HEAD, '{"arguments"', False),
        (CALL_HEAD, 'x{"name"', False),
        (r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?", "-12.5e", True),
        (r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?", "-12.5ex", False),
        (r"(?:true|false|null)", "fal", True),
        (r"(?:true|false|null)", "fals!", False),
        (r"[A-Za-z_]\w{0,3}", "abcd", True),
        (r"[A-Za-z_]\w{0,3}", "abcde", False),
        (r"(?i:call:)", "CA", True),
        (r"a(?=b)", "a", True),  # a look-ahead is taken as holding: more waiting, never less
    ],
)
def test_accepts_prefixes_and_little_else(source: str, text: str, may_become: bool) -> None:
    rewritten = prefix_regex(source)
    assert rewritten is not None
    assert bool(rewritten.fullmatch(text)) is may_become


def test_a_back_reference_gives_no_answer() -> None:
    assert prefix_regex(r"(a)\1") is None


HERMES_STRAY = '<tool_call>\n{"name": "get_weather", "arguments":</tool_response> {"city": "Paris"}}\n</tool_call>'


@pytest.mark.parametrize("name", ["qwen3", "granite-4", "granite-4-1"])
def test_a_call_head_cut_by_a_chunk_reads_as_it_does_whole(name: str) -> None:
    """The fuzz finding parse-granite-4-1-1: a chunk ending after ``{"name"`` took the call
    head as argument text, so the stray marker inside it was read as text of the value."""
    fmt = codec.load(name)
    whole = fmt.parse(HERMES_STRAY)
    assert [(call.name, call.arguments) for call in whole.tool_calls] == [("get_weather", {"city": "Paris"})]
    for cut in range(1, len(HERMES_STRAY)):
        parser = fmt.stream()
        parser.feed(HERMES_STRAY[:cut])
        parser.feed(HERMES_STRAY[cut:])
        parser.close()
        streamed = parser.message
        assert streamed.content == whole.content, cut
        assert [(c.name, c.arguments) for c in streamed.tool_calls] == [("get_weather", {"city": "Paris"})], cut
        assert [d.code for d in streamed.diagnostics] == [d.code for d in whole.diagnostics], cut
