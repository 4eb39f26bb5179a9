"""Repair as search: what the lenient parser does with a marker its grammar does not accept here.

The candidate edits are few and general (docs/architecture.md, "Lenient repair"):

- **insert** the missing marker(s) — one or two insertable terminals (markers, and literal
  punctuation or header words such as Solar's ``assistant``) after which the marker fits. Never
  ``CALL_OPEN`` (a repair may close or complete a call, not invent one) and never a value word
  (``true``, ``null``, ...: that would invent an argument);
- **literal**: the marker is text of the free-text run in progress (a string value, an argument
  value, reasoning) — a model quoting its own tokens;
- **drop** the marker: a stray or duplicated one (its text stays in the diagnostic);
- **content**: keep it as content (what happens when nothing else fits).

Each edit is tried on a copy of the parser against a bounded lookahead — the next ``WINDOW``
markers and at most ``WINDOW_CHARS`` characters of text after the marker, or the end of output —
and scored: the edit's own cost plus one for every piece of the lookahead that does not fit
(a marker the parser refuses, text where no text may stand, a ``BAD_*`` variant, an early end).
The lowest score wins; ties go to the earlier edit in ``_PREFERENCE`` order. The lookahead is a
function of the text alone, never of how it was chunked, so a streamed parse decides exactly as
a whole one: the stream holds back the lookahead's text until it is complete.

Longer than ~300 lines: the edits, their scoring on a trial parser and the few questions the
stream asks of that same trial parser (what may follow a closer, how a call's head reads) share
one cursor and one set of process-wide tables; split, each part would need both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from codec.engine.grammar import CompiledGrammar
from codec.engine.lalr import CACHED_DEPTH, LalrCursor, Stack
from codec.engine.patterns import IGNORED, next_token
from codec.memo import memo

WINDOW = 3
"""Markers of lookahead an edit is judged on."""

WINDOW_CHARS = 512
"""Characters of text the lookahead holds at most (a decision is never held back longer)."""

_NAME_PROBES = ("a", "0", "_")
"""Characters a tool name may go on with, to ask whether one that has stopped may still grow."""

_VALUE_WORDS = frozenset({"true", "false", "null", "True", "False", "None"})
_CALL_OPEN = "CALL_OPEN"

_AFTER: dict[tuple[str, Stack, str], frozenset[str]] = memo({})  # what a state accepts after a marker
_AFTER_LIMIT = 4096
_FITS: dict[tuple[str, Stack, str, str], bool] = memo({})  # whether a character may follow a marker

_HEADS: dict[tuple[str, str], CallHead | None] = memo({})  # (grammar, opener) -> the head of its calls
_INSERTABLE: dict[str, frozenset[str]] = memo({})  # grammar -> what a repair may insert

Piece = tuple[str | None, str]  # (marker terminal, text) or (None, free text), as the scanner gives them


@dataclass(frozen=True)
class Edit:
    """One way to go on at a marker the grammar refuses."""

    kind: str  # "insert", "literal", "drop" or "content" ("accept": the marker as the grammar reads it)
    inserted: tuple[str, ...] = ()
    cost: int = 1


_PREFERENCE = {"accept": 0, "insert": 0, "literal": 1, "content": 1, "drop": 2}
"""Tie-breaks amid text: completing the structure first, then reading the marker as the text it
stands in (a model quoting a token), then dropping it."""

_BETWEEN_STRUCTURE = {"accept": 0, "insert": 0, "drop": 1, "literal": 2, "content": 2}
"""Tie-breaks right after a marker (no text since): a stray or duplicated marker is dropped."""


def window_ready(pieces: Iterable[Piece], closing: bool) -> bool:
    """Whether ``pieces`` (what followed the refused marker so far) hold the whole lookahead."""
    if closing:
        return True
    markers = chars = 0
    for name, text in pieces:
        if name is None:
            chars += len(text)
            if chars >= WINDOW_CHARS:
                return True
        else:
            markers += 1
            if markers >= WINDOW:
                return True
    return False


def lookahead(pieces: Iterable[Piece]) -> tuple[list[Piece], bool]:
    """The lookahead window of ``pieces``: adjacent text joined (so chunking cannot matter), cut
    at ``WINDOW`` markers or ``WINDOW_CHARS`` characters; and whether it reaches past them."""
    window: list[Piece] = []
    markers = chars = 0
    for name, text in pieces:
        if name is not None:
            if markers >= WINDOW:
                return window, True
            window.append((name, text))
            markers += 1
            continue
        if markers >= WINDOW:  # text after the last marker of the window: it may not have all arrived
            return window, True
        room = WINDOW_CHARS - chars
        if room <= 0:
            return window, True
        text = text[:room]
        chars += len(text)
        if window and window[-1][0] is None:
            window[-1] = (None, window[-1][1] + text)
        else:
            window.append((None, text))
        if chars >= WINDOW_CHARS:  # full: a stream decides here (window_ready), before what follows
            return window, True
    return window, False


@dataclass(frozen=True)
class CallHead:
    """How a call's head reads right after its opening marker, when it starts with a fixed word:
    the word, then a name, then what opens the arguments (Gemma: ``call:`` NAME ``{``)."""

    lead: str
    name: re.Pattern[str]
    opens: tuple[str, ...]

    def reads(self, text: str) -> bool | None:
        """Whether ``text`` starts with such a head; ``None`` while more text could still make it."""
        if len(text) < len(self.lead):
            return None if self.lead.startswith(text) else False
        if not text.startswith(self.lead):
            return False
        found = self.name.match(text, len(self.lead))
        if found is None:
            return None if len(text) == len(self.lead) else False
        rest = text[found.end() :]
        if any(rest.startswith(opener) for opener in self.opens):
            return True
        # Not yet an opener after the name; more text may still make one: the name goes on
        # (``server:`` may become ``server:tool``), or the opener has only begun.
        waits = not rest or any(opener.startswith(rest) for opener in self.opens) or self._name_may_grow(text)
        return None if waits and len(text) < WINDOW_CHARS else False

    def _name_may_grow(self, text: str) -> bool:
        """Whether one more character could make the name's match reach past ``text``."""
        for probe in _NAME_PROBES:
            found = self.name.match(text + probe, len(self.lead))
            if found is not None and found.end() > len(text):
                return True
        return False


class RepairSearch:
    """Chooses the edit for a refused marker; one per ``StreamParser``, made on first need."""

    def __init__(self, grammar: CompiledGrammar, start: str) -> None:
        self._grammar = grammar
        self._start = start
        self._cursor: LalrCursor | None = None
        self._insertable = _insertable(grammar)

    def choose(
        self, stack: Stack, name: str, in_run: str | None, writing: bool, window: list[Piece], ends: bool
    ) -> Edit:
        """The best edit for the refused marker ``name`` in the parser state ``stack``.

        ``in_run``: the free-text terminal the parser accepts here (text the marker could join);
        ``writing``: that text is in progress (a marker amid text is more likely text than one
        between structures); ``window``: the lookahead; ``ends``: the output ends within it.
        """
        edits = [Edit("insert", seq, len(seq)) for seq in self._insertions(stack, name)]
        if in_run is not None:
            edits.append(Edit("content" if in_run == "CONTENT" else "literal"))
        edits.append(Edit("drop"))
        preference = _PREFERENCE if writing else _BETWEEN_STRUCTURE
        scored = [
            (self._score(stack, edit, name, in_run, window, ends), preference[edit.kind], index)
            for index, edit in enumerate(edits)
        ]
        return edits[min(scored)[2]]

    def call_head(self, stack: Stack, opener: str, before: tuple[str, ...] = ()) -> CallHead | None:
        """The head a call opened by ``opener`` in the state ``stack`` (after the terminals
        ``before``) must start with, when it starts with a fixed word (remembered: the same for
        every state that accepts ``opener``)."""
        key = (self._grammar.name, opener)
        if key not in _HEADS:
            _HEADS[key] = self._find_head(stack, (*before, opener))
        return _HEADS[key]

    def _find_head(self, stack: Stack, shifted: tuple[str, ...]) -> CallHead | None:
        trial, patterns = self._trial, self._grammar.patterns
        trial.restore(stack)
        for name in shifted:
            trial.shift(name, "")

        def clean(literal: bool) -> list[str]:
            return sorted(
                name
                for name in trial.accepts()
                if name in patterns and not name.startswith("BAD_") and (patterns[name].literal is not None) == literal
            )

        leads = clean(True)
        if len(leads) != 1:
            return None
        trial.shift(leads[0], "")
        names = clean(False)
        if len(names) != 1:
            return None
        trial.shift(names[0], "x")
        # What opens the arguments, malformed openers too (Gemma's ``call:NAME(``): the text
        # names a call as much as with the well-formed one.
        accepted = [patterns[name] for name in trial.accepts() if name in patterns]
        opens = tuple(sorted(pattern.literal for pattern in accepted if pattern.literal))
        if not opens:
            return None
        return CallHead(patterns[leads[0]].literal or "", patterns[names[0]].regex, opens)

    @property
    def _trial(self) -> LalrCursor:
        if self._cursor is None:  # made on first need: most parses never search
            self._cursor = LalrCursor(self._grammar, self._start, on_bad_rule=_ignore)
        return self._cursor

    def fits_after(self, stack: Stack, name: str, text: str) -> bool:
        """Whether ``text`` (the start of what follows) may stand after the accepted marker
        ``name``. One character's answer is remembered, like the steps (it is what the stream
        asks: the first character after the marker)."""
        key = (self._grammar.name, stack, name, text)
        fits = _FITS.get(key) if len(text) == 1 else None
        if fits is None:
            if self.free_after(stack, name):
                fits = True
            else:
                found = next_token(self._grammar, text, self._after(stack, name), True)
                fits = isinstance(found, tuple) and not found[0].startswith("BAD_")
            if len(text) == 1 and len(stack) <= CACHED_DEPTH:
                if len(_FITS) >= _AFTER_LIMIT:
                    _FITS.clear()
                _FITS[key] = fits
        return fits

    def free_after(self, stack: Stack, name: str) -> bool:
        """Whether free text may follow the accepted marker ``name``: then any text fits after it."""
        return not self._grammar.free_text.isdisjoint(self._after(stack, name))

    def _after(self, stack: Stack, name: str) -> frozenset[str]:
        """What the parser accepts after the marker ``name`` in the state ``stack``."""
        key = (self._grammar.name, stack, name)
        accepted = _AFTER.get(key)
        if accepted is None:
            trial = self._trial
            trial.restore(stack)
            trial.shift(name, "")
            accepted = trial.accepts()
            if len(stack) <= CACHED_DEPTH:  # like the LALR tables: deep stacks are not remembered
                if len(_AFTER) >= _AFTER_LIMIT:
                    _AFTER.clear()
                _AFTER[key] = accepted
        return accepted

    def ends_value(
        self, stack: Stack, name: str, run: str, window: list[Piece], ends: bool, ties_end: bool = True
    ) -> bool:
        """Whether the accepted marker ``name``, followed by what it cannot take, ends the value
        run ``run`` (else it is text of the value); ties go to the grammar's reading unless
        ``ties_end`` is false (a marker follows at once: tokens in a row are the value's text)."""
        closing = self._score(stack, Edit("accept", cost=0), name, run, window, ends)
        literal = self._score(stack, Edit("literal"), name, run, window, ends)
        return closing <= literal if ties_end else closing < literal

    def insertion(self, stack: Stack, name: str) -> tuple[str, ...] | None:
        """The shortest insertion after which ``name`` is accepted (first in sorted order)."""
        found = self._insertions(stack, name)
        return found[0] if found else None

    def _insertions(self, stack: Stack, name: str) -> list[tuple[str, ...]]:
        """Every shortest sequence of insertable terminals after which ``name`` is accepted."""
        trial, insertable = self._trial, self._insertable
        trial.restore(stack)
        firsts = sorted(candidate for candidate in trial.accepts() if candidate in insertable)
        found: list[tuple[str, ...]] = [(first,) for first in firsts if name in self.accepts_after(stack, (first,))]
        if found:
            return found
        for first in firsts:
            trial.restore(stack)
            trial.shift(first, "")
            seconds = sorted(candidate for candidate in trial.accepts() if candidate in insertable)
            found += [(first, second) for second in seconds if name in self.accepts_after(stack, (first, second))]
        return found

    def accepts_after(self, stack: Stack, names: tuple[str, ...]) -> frozenset[str]:
        """What the parser in the state ``stack`` accepts after the terminals ``names``."""
        trial = self._trial
        trial.restore(stack)
        for name in names:
            trial.shift(name, "")
        return trial.accepts()

    def _shift_all(self, names: Sequence[str]) -> bool:
        trial = self._trial
        for name in names:
            if name not in trial.accepts():
                return False
            trial.shift(name, "")
        return True

    def _score(self, stack: Stack, edit: Edit, name: str, in_run: str | None, window: list[Piece], ends: bool) -> int:
        trial = self._trial
        trial.restore(stack)
        misses = edit.cost
        run: str | None = None
        if edit.kind in ("insert", "accept"):
            self._shift_all(edit.inserted)
            trial.shift(name, "")
        elif edit.kind in ("literal", "content") and in_run is not None:
            trial.shift(in_run, "")
            run = in_run
        for piece_name, text in window:
            if piece_name is None:
                misses_here, run = self._text(text, run)
                misses += misses_here
            elif piece_name in trial.accepts():
                trial.shift(piece_name, "")
                run = None
            else:
                misses += 1  # refused: read on as if it were text of the run, or not there
        if ends and "$END" not in trial.accepts():
            misses += 1
        return misses

    def _text(self, text: str, run: str | None) -> tuple[int, str | None]:
        """Misses of ``text`` in the trial parser; the free-text run it leaves open. Malformed
        variants in it count once, as a piece that does not fit (not once per token: Python's
        call syntax is three of them, in every reading of what comes before)."""
        accepted = self._trial.accepts()
        if run is not None and run in accepted:
            return 0, run
        misses, first, malformed = 0, True, False
        while text:
            stripped = text.lstrip()
            if _CALL_OPEN in accepted and stripped and self._implies_call(stripped):
                # The opener the text implies: the stream reads it so whatever follows
                # (_open_implied_call), so it weighs nothing here.
                self._trial.shift(_CALL_OPEN, "")
            elif free := next((name for name in accepted if name in self._grammar.free_text), None):
                self._trial.shift(free, "")
                return misses, free
            elif stripped and not any(name in self._grammar.patterns for name in accepted):
                # One repair: a marker inserted to open free text (at the start), or the closer
                # before a call the rest of the text implies (stream: _next_call_joined).
                opened = self._open_free_text(accepted, stripped, calls_only=not first)
                misses += 1
                if opened != _CALL_OPEN:
                    return misses, opened
            first, accepted = False, self._trial.accepts()
            found = next_token(self._grammar, text, accepted, True)
            if not isinstance(found, tuple):
                return misses + (1 if text.strip() else 0), None
            token_name, token = found
            text = text[len(token) :]
            if token_name == IGNORED:
                continue
            if token_name.startswith("BAD_") and not malformed:
                malformed, misses = True, misses + 1
            self._trial.shift(token_name, token)
            accepted = self._trial.accepts()
        return misses, None

    def _implies_call(self, text: str) -> bool:
        """Whether ``text``, where a call may open, starts with a call's head (Gemma's
        ``call:NAME{``): the stream reads it as a call whose opener was left out."""
        here = self._trial.stack
        head = self.call_head(here, _CALL_OPEN)
        self._trial.restore(here)
        return head is not None and head.reads(text) is True

    def _open_free_text(self, accepted: frozenset[str], text: str, calls_only: bool = False) -> str | None:
        """Shift an insertable marker after which free text may stand, and that free text — or
        the call ``text`` implies, where one may open (then ``CALL_OPEN``: its head is to lex).
        ``calls_only``: only the call; else nothing is shifted (``None``)."""
        trial = self._trial
        here = trial.stack
        for candidate in sorted(accepted & self._insertable):
            trial.restore(here)
            trial.shift(candidate, "")
            if _CALL_OPEN in trial.accepts() and self._implies_call(text):
                trial.shift(_CALL_OPEN, "")
                return _CALL_OPEN
            if calls_only:
                continue
            for free in trial.accepts():
                if free in self._grammar.free_text:
                    trial.shift(free, "")
                    return free
        trial.restore(here)
        return None


def _insertable(grammar: CompiledGrammar) -> frozenset[str]:
    """The terminals a repair may insert: markers but the call opener, and literal patterns but
    value words (remembered per grammar: a search is made per parser)."""
    insertable = _INSERTABLE.get(grammar.name)
    if insertable is None:
        markers = [name for name in grammar.markers.values() if name != _CALL_OPEN]
        literals = [
            name
            for name, pattern in grammar.patterns.items()
            if pattern.literal is not None and pattern.literal not in _VALUE_WORDS and not name.startswith("BAD_")
        ]
        insertable = _INSERTABLE[grammar.name] = frozenset(markers) | frozenset(literals)
    return insertable


def _ignore(rule: str) -> None:
    return None
