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

_PATIENCE = 8
"""Characters that must follow a match before it is taken, and that unmatched text may gather
before it is called a deviation (``-`` may become ``-5``)."""


class Lexer:
    """``next_token`` for one set of accepted terminals: its pattern terminals in its order
    (ties go to the first), with what ``_could_grow`` asks of them worked out once. A grammar
    has few such sets (one per parser state at most), and a call body asks at every token."""

    __slots__ = ("by_first", "ignore", "literals", "longest_literal", "lookaheads", "patterns", "quoted")

    def __init__(self, grammar: CompiledGrammar, accepted: Iterable[str]) -> None:
        self.patterns = patterns = [grammar.patterns[name] for name in accepted if name in grammar.patterns]
        self.ignore = grammar.ignore
        self.literals = [p.literal for p in patterns if p.literal is not None]
        self.longest_literal = max(map(len, self.literals), default=0)
        self.lookaheads = [(p.regex, p.body) for p in patterns if p.body is not None]
        self.quoted = [(p.regex.pattern[:1], p.name) for p in patterns if p.regex.pattern[:1] in _QUOTES]
        self.by_first: dict[str, list[Pattern]] = {}  # a first character -> the patterns it may start

    def starting(self, buffer: str) -> list[Pattern]:
        """The patterns a match at the start of ``buffer`` may come from (in their order): those
        whose first character (``Pattern.first``) the buffer's allows."""
        char = buffer[:1]
        found = self.by_first.get(char)
        if found is None:
            found = [p for p in self.patterns if p.first is None or not char or p.first.match(char)]
            if len(self.by_first) < _FIRST_LIMIT:
                self.by_first[char] = found
        return found

    def next(self, buffer: str, final: bool) -> tuple[str, str] | str | None:
        """The next ``(terminal, text)`` at the start of ``buffer``, ``WAIT``, or ``None`` when no
        accepted pattern matches there (the text does not follow the grammar)."""
        candidates = self.starting(buffer)
        best = _longest(candidates, buffer)
        if not final and (_could_grow(self, buffer, best) or _may_become(candidates, buffer, best)):
            return WAIT
        if best is not None:
            return best
        skipped = self.ignore.match(buffer) if self.ignore else None
        if skipped and skipped.end() > 0:
            return (IGNORED, skipped.group())
        return WAIT if not final and len(buffer) < _PATIENCE else None


_FIRST_LIMIT = 256  # first characters remembered per lexer (any other is worked out each time)

_LEXERS: dict[tuple[str, frozenset[str]], Lexer] = memo({})


def next_token(
    grammar: CompiledGrammar, buffer: str, accepted: Iterable[str], final: bool
) -> tuple[str, str] | str | None:
    """The next ``(terminal, text)`` at the start of ``buffer``, ``WAIT``, or ``None`` when no
    accepted pattern matches there (the text does not follow the grammar)."""
    return lexer_for(grammar, accepted).next(buffer, final)


def lexer_for(grammar: CompiledGrammar, accepted: Iterable[str]) -> Lexer:
    """The lexer of the patterns among ``accepted``; remembered per set of accepted terminals."""
    if not isinstance(accepted, frozenset):
        return Lexer(grammar, accepted)
    key = (grammar.name, accepted)
    lexer = _LEXERS.get(key)
    if lexer is None:
        lexer = _LEXERS[key] = Lexer(grammar, accepted)
    return lexer


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


def _may_become(candidates: list[Pattern], buffer: str, best: tuple[str, str] | None) -> bool:
    """Whether all of ``buffer`` may yet grow into a match longer than ``best`` (Hermes'
    ``\\n{"name"`` into a call head): a decision now would depend on where the chunk ended."""
    longest = 0 if best is None else len(best[1])
    return len(buffer) > longest and any(p.prefix is not None and p.prefix.fullmatch(buffer) for p in candidates)


def _could_grow(lexer: Lexer, buffer: str, best: tuple[str, str] | None) -> bool:
    if best is not None:
        rest = buffer[len(best[1]) :]
        if len(rest) < _PATIENCE or not rest.strip():
            # Too close to the end of what arrived, or only white space after it (a key may hold
            # inner spaces: `a b`): more text may extend the match. The buffer limit bounds this.
            return True
    if len(buffer) < lexer.longest_literal and any(
        len(literal) > len(buffer) and literal.startswith(buffer) for literal in lexer.literals
    ):
        return True
    for regex, body in lexer.lookaheads:  # a pattern that ends by looking ahead
        if body.fullmatch(buffer):
            return True  # its text reaches the end of the buffer
        # Its text has begun and its look-ahead does not hold yet: the look-ahead may reach
        # past what has arrived (a key after the comma spans a line the value cannot).
        begun = body.match(buffer)
        if begun is not None and begun.end() > 0 and regex.match(buffer) is None:
            return True
    # A quoted pattern (a string in JSON's or Python's quotes) that has begun waits for its
    # closing quote: the buffer limit bounds the wait, and the match is then made on the first
    # ``limit`` characters only, so the outcome does not depend on how much more had arrived.
    opened = buffer[:1]
    return opened in _QUOTES and any(
        quote == opened and (best is None or best[0] != name) for quote, name in lexer.quoted
    )


_QUOTES = frozenset("\"'")
