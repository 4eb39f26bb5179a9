"""Contextual lexing of pattern terminals (Gemma's call bodies) as their text streams in.

Only the terminals the parser accepts in its current state are tried, so ``{`` or ``5`` mean
structure only where the grammar expects them. A match is taken when it is certainly complete:
at least a few characters follow it in the buffered text (a regex may still grow: ``1e`` may
become ``1e-05``), and no accepted literal could still grow out of the buffer (``tr`` may become
``true``). At a marker or the end of output everything is final.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from codec.engine.grammar import CompiledGrammar, Pattern
from codec.memo import memo

WAIT: Final = "wait"
"""``next_token`` needs more text before it can decide."""

IGNORED: Final = "%ignore"
"""The terminal name ``next_token`` gives for skipped white space."""

_CANDIDATES: dict[tuple[str, frozenset[str]], list[Pattern]] = memo({})

_PATIENCE = 8
"""Characters that must follow a match before it is taken, and that unmatched text may gather
before it is called a deviation (``-`` may become ``-5``)."""


def next_token(
    grammar: CompiledGrammar, buffer: str, accepted: Iterable[str], final: bool
) -> tuple[str, str] | str | None:
    """The next ``(terminal, text)`` at the start of ``buffer``, ``WAIT``, or ``None`` when no
    accepted pattern matches there (the text does not follow the grammar)."""
    candidates = _candidates(grammar, accepted)
    best = _longest(candidates, buffer)
    if not final and _could_grow(candidates, buffer, best):
        return WAIT
    if best is not None:
        return best
    skipped = grammar.ignore.match(buffer) if grammar.ignore else None
    if skipped and skipped.end() > 0:
        return (IGNORED, skipped.group())
    return WAIT if not final and len(buffer) < _PATIENCE else None


def _candidates(grammar: CompiledGrammar, accepted: Iterable[str]) -> list[Pattern]:
    """The patterns among ``accepted``, in its order (ties go to the first); remembered per set
    of accepted terminals, of which a grammar has few (one per parser state at most)."""
    if not isinstance(accepted, frozenset):
        return [grammar.patterns[name] for name in accepted if name in grammar.patterns]
    key = (grammar.name, accepted)
    candidates = _CANDIDATES.get(key)
    if candidates is None:
        candidates = _CANDIDATES[key] = [grammar.patterns[name] for name in accepted if name in grammar.patterns]
    return candidates


def _longest(candidates: list[Pattern], buffer: str) -> tuple[str, str] | None:
    """The longest match; ties go to the higher priority (``BAD_*`` variants rank lowest)."""
    best: tuple[int, int, str, str] | None = None
    for pattern in candidates:
        found = pattern.regex.match(buffer)
        if found and found.end() > 0:
            rank = (found.end(), pattern.priority, pattern.name, found.group())
            if best is None or rank[:2] > best[:2]:
                best = rank
    return None if best is None else (best[2], best[3])


def _could_grow(candidates: list[Pattern], buffer: str, best: tuple[str, str] | None) -> bool:
    if best is not None:
        rest = buffer[len(best[1]) :]
        if len(rest) < _PATIENCE or not rest.strip():
            # Too close to the end of what arrived, or only white space after it (a key may hold
            # inner spaces: `a b`): more text may extend the match. The buffer limit bounds this.
            return True
    if any(p.literal is not None and len(p.literal) > len(buffer) and p.literal.startswith(buffer) for p in candidates):
        return True
    if any(p.body is not None and p.body.fullmatch(buffer) for p in candidates):
        return True  # a pattern that ends by looking ahead, and its text reaches the end of the buffer
    # A quoted pattern (a string in JSON's or Python's quotes) that has begun waits for its
    # closing quote: the buffer limit bounds the wait, and the match is then made on the first
    # ``limit`` characters only, so the outcome does not depend on how much more had arrived.
    opened = buffer[:1]
    return opened in _QUOTES and any(
        p.regex.pattern.startswith(opened) and (best is None or best[0] != p.name) for p in candidates
    )


_QUOTES = frozenset("\"'")
