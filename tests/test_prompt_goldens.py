"""Golden prompts per format, covering the rendering quirks in docs/formats.md: each renders to its
prompt file, parses back to its canonical file, equals ``canonical`` of its input, and renders
back from what was parsed."""

from __future__ import annotations

import pytest

import codec
from support.prompts import as_json, canonical_input, cases, load_canonical, load_input, load_prompt, render_input

CASES = cases()


@pytest.mark.parametrize(("case", "fmt"), CASES)
def test_golden_prompt(case: str, fmt: str) -> None:
    data = load_input(case, fmt)
    prompt = load_prompt(case, fmt)
    assert render_input(fmt, data) == prompt
    parsed = codec.load(fmt).parse_prompt(prompt)
    assert as_json(parsed) == load_canonical(case, fmt)
    assert canonical_input(fmt, data) == parsed
    assert codec.load(fmt).render_conversation(parsed) == prompt


def test_every_format_has_golden_prompts() -> None:
    assert {fmt for _, fmt in CASES} >= set(codec.formats())
