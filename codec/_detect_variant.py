"""Of the formats that share a grammar, which one a template is (``codec.detect``'s last step).

They write the same tokens, so they are told apart by the options their templates read
(``jinja2.meta``): the format whose bundled template reads the most similar set of variables
wins (Jaccard index); ties go to the bundled template whose lines are closest, then to registry
order.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from functools import cache

from codec._resources import read_text
from codec.registry import FormatSpec
from codec.render.environment import template_variables


def choose(template: str, candidates: Sequence[FormatSpec]) -> tuple[FormatSpec, tuple[str, ...]]:
    """Of formats sharing a grammar, the one whose bundled template reads the options most like
    ``template``'s, and the options that only it reads (as evidence); among those that read
    them equally alike, the one whose bundled text is closest to ``template``'s (revisions that
    differ only in their text, MiniMax-M2's default system prompts)."""
    if len(candidates) == 1:
        return candidates[0], ()
    reads = template_variables(template, False)
    bundled = {spec.name: _bundled_variables(spec.template) for spec in candidates}

    def similarity(spec: FormatSpec) -> float:
        union = reads | bundled[spec.name]
        return len(reads & bundled[spec.name]) / len(union) if union else 0.0

    top = max(similarity(spec) for spec in candidates)
    tied = [spec for spec in candidates if similarity(spec) == top]
    closeness = {spec.name: _closeness(template, spec.template) for spec in tied} if len(tied) > 1 else {}
    best = max(tied, key=lambda spec: closeness.get(spec.name, 0.0))  # max keeps the first of equals
    others = {name for spec in candidates if spec is not best for name in bundled[spec.name]}
    evidence = tuple(f"reads {name}" for name in sorted(reads & bundled[best.name] - others))
    if sum(value == closeness.get(best.name) for value in closeness.values()) == 1:  # the text decided
        evidence += _own_lines(template, best, [spec for spec in tied if spec is not best])[:1]
    return best, evidence


def _own_lines(template: str, best: FormatSpec, rivals: Sequence[FormatSpec]) -> tuple[str, ...]:
    """The lines of ``template`` that ``best``'s bundled template has and no rival's has (the
    text that told them apart: a revision's default system prompt)."""
    theirs = {line for spec in rivals for line in read_text("templates", spec.template).splitlines()}
    own = set(read_text("templates", best.template).splitlines()) - theirs
    return tuple(line for line in template.splitlines() if line in own)


def _closeness(template: str, file: str) -> float:
    """How much of ``template``'s text the bundled ``file`` shares, line by line (``difflib``'s
    ratio); the first of equals wins, in registry order."""
    bundled = read_text("templates", file).splitlines()
    return difflib.SequenceMatcher(None, template.splitlines(), bundled, autojunk=False).ratio()


@cache
def _bundled_variables(file: str) -> frozenset[str]:
    return template_variables(read_text("templates", file), True)
