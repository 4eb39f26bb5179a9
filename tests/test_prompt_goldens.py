"""Golden prompts per format, covering the rendering quirks of FORMATS.md: each renders to its
prompt file, parses back to its canonical file, equals ``canonical`` of its input, and renders
back from what was parsed."""

from __future__ import annotations

import json

import pytest

import codec
from prompt_goldens import ROOT, as_json, canonical_input, cases, load_input, render_input

CASES = cases()


@pytest.mark.parametrize(("fmt", "case"), CASES)
def test_golden_prompt(fmt: str, case: str) -> None:
    data = load_input(fmt, case)
    prompt = (ROOT / fmt / f"{case}.prompt.txt").read_bytes().decode("utf-8")
    expected = json.loads((ROOT / fmt / f"{case}.canonical.json").read_text(encoding="utf-8"))
    assert render_input(fmt, data) == prompt
    parsed = codec.load(fmt).parse_prompt(prompt)
    assert as_json(parsed) == expected
    assert canonical_input(fmt, data) == parsed
    assert codec.load(fmt).render_conversation(parsed) == prompt


def test_every_format_has_golden_prompts() -> None:
    assert {fmt for fmt, _ in CASES} >= set(codec.formats())
