"""Golden completions: each parses to its hand-written message, whole, one character at a time
and split at every point — one parsing path, so all agree (DESIGN invariant 4)."""

from __future__ import annotations

from typing import Any

import pytest

import codec
from support.parsing import (
    TOOLS,
    delta_signature,
    fold,
    golden_cases,
    how_it_ended,
    ids,
    load_golden,
    stream_chunks,
)

CASES = golden_cases()


def _ended(expected: dict[str, Any]) -> dict[str, Any]:
    return {"finish_reason": expected["finish_reason"], "truncated_call": expected["truncated_call"]}


def _options(expected: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return dict(expected["options"]), (TOOLS if expected["tools"] else [])


@pytest.mark.parametrize(("case", "fmt"), CASES)
def test_whole_parse_matches_golden(case: str, fmt: str) -> None:
    completion, expected = load_golden(case, fmt)
    options, tools = _options(expected)
    parser = codec.load(fmt).stream(tools=tools, id_factory=ids, **options)
    parser.feed(completion)
    parser.close()
    assert parser.message.to_openai() == expected["message"]
    assert how_it_ended(parser.message) == _ended(expected)
    assert [d.code for d in parser.diagnostics] == expected["diagnostics"]
    assert codec.load(fmt).parse(completion, tools=tools, id_factory=ids, **options) == parser.message


@pytest.mark.parametrize(("case", "fmt"), CASES)
def test_one_character_at_a_time(case: str, fmt: str) -> None:
    completion, expected = load_golden(case, fmt)
    options, tools = _options(expected)
    whole, _, _ = stream_chunks(fmt, [completion], tools=tools, **options)
    events, message, codes = stream_chunks(fmt, list(completion), tools=tools, **options)
    assert message.to_openai() == expected["message"]
    assert how_it_ended(message) == _ended(expected)
    assert fold(events) == expected["message"]
    assert codes == expected["diagnostics"]
    assert delta_signature(events) == delta_signature(whole), "the same events, only split differently"


@pytest.mark.parametrize(("case", "fmt"), CASES)
def test_every_split_point(case: str, fmt: str) -> None:
    completion, expected = load_golden(case, fmt)
    options, tools = _options(expected)
    step = max(1, len(completion) // 150)  # every point for short goldens, ~150 for long ones
    for cut in range(0, len(completion) + 1, step):
        events, message, codes = stream_chunks(fmt, [completion[:cut], completion[cut:]], tools=tools, **options)
        assert message.to_openai() == expected["message"], f"split at {cut}"
        assert how_it_ended(message) == _ended(expected), f"split at {cut}"
        assert fold(events) == expected["message"], f"split at {cut}"
        assert codes == expected["diagnostics"], f"split at {cut}: repairs depend on text, not chunks"


@pytest.mark.parametrize(("case", "fmt"), CASES)
def test_strict_mode_accepts_exactly_the_clean_goldens(case: str, fmt: str) -> None:
    completion, expected = load_golden(case, fmt)
    options, tools = _options(expected)
    if expected["diagnostics"]:
        with pytest.raises(codec.ParseError) as raised:
            codec.load(fmt).parse(completion, tools=tools, strict=True, id_factory=ids, **options)
        # Strict reads as the grammar does: it fails at the first repair lenient parsing made,
        # or later where that repair was a reading of what follows (an opener the text implies:
        # to the grammar, that text is content until a marker content cannot hold).
        first = codec.load(fmt).parse(completion, tools=tools, id_factory=ids, **options).diagnostics[0]
        assert first.code == expected["diagnostics"][0]
        assert raised.value.offset >= first.offset
        if raised.value.offset == first.offset:
            assert raised.value.code == first.code
    else:
        reply = codec.load(fmt).parse(completion, tools=tools, strict=True, id_factory=ids, **options)
        assert reply.to_openai() == expected["message"]
