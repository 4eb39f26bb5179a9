"""``codec roundtrip``: fuzz a template against its format's grammar and report disagreements.

For generated conversations (``codec.strategies``, the same strategies as the tests) it renders
the prompt, parses it back and checks:

- ``writes``: the template wrote something (an empty prompt would agree with any grammar), unless
  the format's rules keep nothing of the conversation (Intern-S1 writes no block for a lone empty
  system message);
- ``parses``: the prompt follows the format's grammar;
- ``renders back``: rendering what was parsed gives the same prompt;
- ``canonical``: what was parsed is ``canonical`` of the input, i.e. the template keeps what the
  format's bundled template keeps. For a template of your own this says where it keeps more or
  less than the family's rules expect (what ``explain_losses`` would then get wrong).

A run in which render refused every conversation checked nothing, and fails.

Hypothesis shrinks each failure to a minimal conversation; the report shows it and the first
character where the two sides differ. Needs ``hypothesis`` (``pip install 'codec[roundtrip]'``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from codec.api import Codec
from codec.errors import CodecError, ParseError, RenderError

_CONTEXT = 30


class Disagreement(AssertionError):
    """One property failed for one generated conversation."""

    def __init__(self, check: str, detail: str, case: Any) -> None:
        super().__init__(f"{check}: {detail}")
        self.check = check
        self.detail = detail
        self.case = case


@dataclass
class Report:
    """What a run found: how many examples agreed, and each (minimal) disagreement."""

    format: str
    requested: int = 0
    examples: int = 0  # conversations checked, shrinking included
    skipped: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """At least one conversation was rendered, and every one agreed."""
        return self.examples > 0 and not self.disagreements

    def __str__(self) -> str:
        head = (
            f"{self.format}: {self.requested} examples asked for; {self.examples} conversations "
            f"rendered and parsed back (shrinking included), {self.skipped} refused by render"
        )
        if self.ok:
            return head + "; all agree."
        if not self.disagreements:
            return head + "; nothing was rendered, so nothing was checked."
        lines = [head + f"; {len(self.disagreements)} disagreement(s):"]
        for found in self.disagreements:
            lines += [
                f"- {found.check}: {found.detail}",
                "  minimal example:",
                *("    " + line for line in _shown(found.case).splitlines()),
            ]
        return "\n".join(lines)


def run(c: Codec, *, examples: int = 100, seed: int = 0, canonical: bool = True) -> Report:
    """Check ``examples`` generated conversations against ``c``; every disagreement, shrunk."""
    try:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as fixed_seed
    except ImportError:
        raise CodecError("codec roundtrip needs hypothesis: pip install 'codec[roundtrip]'") from None
    from codec.strategies import dates, render_cases

    shown = c.name if c.origin is None else f"{c.name} ({c.origin})"
    report = Report(shown, requested=examples)

    @fixed_seed(seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        report_multiple_bugs=True,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(case=render_cases(c.name), now=dates())
    def check(case: Any, now: Any) -> None:
        _check(c, case, now, canonical, report)

    try:
        check()
    except Disagreement as found:
        report.disagreements.append(found)
    except BaseExceptionGroup as group:
        report.disagreements += [e for e in group.exceptions if isinstance(e, Disagreement)]
        if len(report.disagreements) < len(group.exceptions):
            raise
    return report


def _read_from_nothing(c: Codec, case: Any, arguments: dict[str, Any]) -> bool:
    """Whether an empty prompt is right: the format reads the conversation's canonical form back
    from nothing (Granite 4.1 writes nothing for an empty system message alone)."""
    try:
        return c.parse_prompt("") == c.canonical(case.messages, **arguments)
    except (ParseError, RenderError):
        return False


def _check(c: Codec, case: Any, now: Any, canonical: bool, report: Report) -> None:
    arguments = {"tools": case.tools, "add_generation_prompt": case.add_generation_prompt, "now": now, **case.options}
    try:
        prompt = c.render(case.messages, **arguments)
    except RenderError:
        report.skipped += 1
        return
    report.examples += 1
    if not prompt and not _read_from_nothing(c, case, arguments):
        raise Disagreement("writes", "the template wrote nothing for this conversation", case)
    try:
        parsed = c.parse_prompt(prompt)
    except ParseError as error:
        raise Disagreement(
            "parses",
            f"{error}\n  prompt near there: {prompt[max(0, error.offset - _CONTEXT) : error.offset + _CONTEXT]!r}",
            case,
        ) from None
    again = c.render_conversation(parsed)
    if again != prompt:
        raise Disagreement("renders back", first_difference(prompt, again), case)
    if canonical:
        expected = c.canonical(case.messages, **arguments)
        if parsed != expected:
            raise Disagreement(
                "canonical",
                first_difference(
                    json.dumps(_conversation(expected), ensure_ascii=False),
                    json.dumps(_conversation(parsed), ensure_ascii=False),
                ),
                case,
            )


def first_difference(expected: str, found: str) -> str:
    """Where two texts first differ, with a little context."""
    pairs = enumerate(zip(expected, found, strict=False))
    at = next((i for i, (a, b) in pairs if a != b), min(len(expected), len(found)))
    return (
        f"first difference at character {at}: expected {expected[at : at + _CONTEXT]!r}, "
        f"got {found[at : at + _CONTEXT]!r}"
    )


def _conversation(conversation: Any) -> dict[str, Any]:
    return {
        "messages": conversation.to_openai(),
        "tools": list(conversation.tools),
        "options": conversation.options,
        "add_generation_prompt": conversation.add_generation_prompt,
    }


def _shown(case: Any) -> str:
    return json.dumps(
        {
            "messages": case.messages,
            "tools": case.tools,
            "options": case.options,
            "add_generation_prompt": case.add_generation_prompt,
        },
        ensure_ascii=False,
        indent=1,
        default=str,
    )
