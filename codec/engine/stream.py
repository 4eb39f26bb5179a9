"""``StreamParser``: model output in, events out — the one parsing path of every format.

Pieces from the ``MarkerScanner`` become tokens for the format's Lark LALR parser (stepped by a
``LalrCursor``). The terminals the parser accepts say what each piece of text means;
``MessageBuilder`` turns accepted tokens into events. A free-text run is fed to the parser once,
when it starts: its later chunks go straight to the builder, so the cost of a chunk does not
depend on what came before.

Deviations are handled in one place, ``_deviation``: with ``strict=True`` the first one raises
``ParseError`` and the parser stays failed; otherwise it is recorded in ``diagnostics`` and
repaired — a missing marker is inserted when that makes the input fit, and anything else is
kept as text (content), never dropped.

Longer than ~300 lines: one machine — the scanner's pieces, the contextual lexing of pending
text, the marker and text decisions, and the one place deviations are reported — whose state
(run, pending text, rollback point) every part reads; split, that state would be shared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codec.arguments.reader import ArgumentReaderFactory
from codec.engine.builder import MessageBuilder
from codec.engine.grammar import COMPLETION_START, CompiledGrammar, compiled
from codec.engine.lalr import LalrCursor, Stack
from codec.engine.patterns import IGNORED, WAIT, next_token
from codec.engine.position import Position
from codec.engine.scanner import MarkerScanner
from codec.errors import CodecError, ParseError
from codec.events import Event
from codec.limits import DEFAULT_LIMITS, Limits
from codec.models import AssistantMessage, Diagnostic

CONTENT = "CONTENT"
"""The free-text terminal of visible content (grammars/*.lark)."""

PATTERN_BUFFER_LIMIT = 1024
"""Text held for pattern lexing before it must be decided (a header, never a payload)."""

_PRIMED_LIMIT = 256
_PRIMED: dict[tuple[str, str], Stack] = {}  # (grammar, generation prompt) -> the primed stack


class StreamParser:
    """Parses one completion fed in chunks. Sans-IO: ``feed(str)`` and ``close()`` return the
    events the text completes; ``message`` is the assistant message so far."""

    def __init__(
        self,
        grammar_file: str,
        *,
        prompt: str,
        tools: Sequence[Mapping[str, Any]],
        arguments: ArgumentReaderFactory,
        strict: bool,
        id_factory: Callable[[int], str] | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self._grammar: CompiledGrammar = compiled(grammar_file)
        self._scanner = MarkerScanner(self._grammar.markers)
        self._lalr = LalrCursor(self._grammar, COMPLETION_START, on_bad_rule=self._bad_rule)
        self._strict = strict
        self._limits = limits
        self._builder = MessageBuilder(tools, id_factory, self._repaired, arguments, limits)
        self.diagnostics: list[Diagnostic] = []
        self._run: str | None = None  # the free-text terminal whose run is in progress
        self._run_handler: Callable[[str], None] | None = None  # where the run's text goes
        self._straying = False  # stray text is being kept as content (one diagnostic per run)
        self._stray_layout = False  # stray white space was reported since the last token
        # The stack before a marker the repair inserted to open free text, while only that text
        # followed: a later marker the insertion made unacceptable may take it back.
        self._undo_insertion: Stack | None = None
        self._stops = 0  # calls stopped at a limit, so a repair in progress can tell
        self._before_call: Stack | None = None  # the parser's stack before the open call's marker
        self._pending = ""  # text waiting for pattern lexing
        self._position = Position()
        self._failed: ParseError | None = None
        self._closed = False
        self._prime(prompt)

    @property
    def message(self) -> AssistantMessage:
        """The assistant message parsed so far (complete after ``close()``: then it says how
        the output finished, and carries the diagnostics)."""
        return self._builder.message(tuple(self.diagnostics), ended=self._closed)

    def feed(self, chunk: str) -> list[Event]:
        """Parse ``chunk``; the events it completes."""
        self._check_usable()
        try:
            pieces = self._scanner.feed(chunk)
            if self._run_handler is not None and len(pieces) == 1 and pieces[0][0] is None:
                text = pieces[0][1]  # the hot path: one more piece of a run of free text
                self._run_handler(text)
                self._position.advance(text)
                if self._builder.stop_request is not None:
                    self._stop_call()
            else:
                self._pieces(pieces)
        except ParseError as error:
            self._failed = error
            raise
        return self._drain()

    def close(self) -> list[Event]:
        """The completion ended: the last events (a call cut off midway is finished with
        what arrived)."""
        self._check_usable()
        try:
            self._pieces(self._scanner.close())
            self._lex(final=True)
            self._end()
        except ParseError as error:
            self._failed = error
            raise
        self._closed = True
        return self._drain()

    def _check_usable(self) -> None:
        if self._failed is None and not self._closed:
            return
        if self._failed is not None:
            raise self._failed
        if self._closed:
            raise CodecError("this StreamParser is closed; start a new one with Codec.stream()")

    def _prime(self, prompt: str) -> None:
        """Feed the generation prompt (e.g. ``<|assistant|><think>``), so the completion is
        parsed from where the prompt left the model. It must fit the grammar. The parser state
        it leaves is cached per prompt: a server starts many parsers from the same prompt."""
        key = (self._grammar.name, prompt)
        primed = _PRIMED.get(key)
        if primed is not None:
            self._lalr.restore(primed)
            return
        try:
            self._pieces(self._scanner.feed(prompt))
            self._pieces(self._scanner.close())
            self._lex(final=True)
        except ParseError as error:
            raise CodecError(
                f"the template's generation prompt {prompt!r} does not fit the grammar {self._grammar.name}: {error}"
            ) from None
        if self.diagnostics or self._builder.events:
            raise CodecError(f"the generation prompt {prompt!r} does not fit {self._grammar.name}")
        self._position = Position()
        if self._run is None and not self._pending and self._before_call is None:
            if len(_PRIMED) >= _PRIMED_LIMIT:
                _PRIMED.clear()
            _PRIMED[key] = self._lalr.stack

    def _pieces(self, pieces: list[tuple[str | None, str]]) -> None:
        for name, text in pieces:
            if name is None:
                self._text(text)
            else:
                self._marker(name, text)

    def _drain(self) -> list[Event]:
        events = self._builder.events
        if events:
            self._builder.events = []
        return events if events else []

    def _text(self, text: str) -> None:
        if self._run is not None:  # more of a run already fed to the parser
            if self._run_handler is not None:
                self._run_handler(text)
            self._position.advance(text)
            if self._builder.stop_request is not None:
                self._stop_call()
            return
        if not self._pending:
            accepted = self._accepts()
            free = self._free_text(accepted)
            if free is not None:
                self._feed(free, text)
                return
            if not any(name in self._grammar.patterns for name in accepted):
                self._unexpected_text(text, accepted)
                return
        self._pending += text
        self._lex(final=False)

    def _lex(self, final: bool) -> None:
        """Turn pending text into pattern tokens, as far as it can be decided."""
        while self._pending:
            accepted = self._accepts()
            free = self._free_text(accepted)
            if free is not None:
                text, self._pending = self._pending, ""
                self._feed(free, text)
                return
            decide = final or len(self._pending) > PATTERN_BUFFER_LIMIT
            found = next_token(self._grammar, self._pending, accepted, decide)
            if found == WAIT:
                return
            if not isinstance(found, tuple):
                # One character at a time, so what becomes stray text does not depend on how
                # much text had arrived when the decision was made (chunking invariance).
                head, self._pending = self._pending[0], self._pending[1:]
                self._unexpected_text(head, accepted)
                continue
            name, token = found
            self._pending = self._pending[len(token) :]
            if name == IGNORED:
                if self._straying:  # white space inside stray text is text, not formatting
                    self._builder.stray(token)
                else:  # a call not yet announced keeps all its text, in case it is taken back
                    self._builder.keep_raw(token)
                self._position.advance(token)
                continue
            if name.startswith("BAD_"):
                self._deviation("malformed", token, accepted, f"{name} repaired")
            self._feed(name, token)

    def _marker(self, name: str, text: str) -> None:
        self._lex(final=True)
        accepted = self._accepts()
        if name == "CALL_OPEN" and self._builder.calls_finished >= self._limits.max_calls:
            limit = self._limits.max_calls
            self._deviation("too_many_calls", text, accepted, f"more than {limit} calls: kept as text")
            self._unexpected_text(text, accepted, reported=True)
            return
        if name in accepted:
            self._feed(name, text)
            return
        if self._take_back_insertion(name, text, accepted):
            self._feed(name, text)
            return
        inserted = self._insertion(name, accepted)
        if inserted is not None:
            shown = self._grammar.display(inserted)
            self._deviation("missing_marker", text, accepted, f"inserted {shown} before {text}")
            stops = self._stops
            self._feed(inserted, "", inserted=True)
            if self._stops != stops:  # the insertion ended the call at a limit: read the marker anew
                self._marker(name, text)
                return
            self._feed(name, text)
            return
        if self._abandon_call(text, accepted):
            self._marker(name, text)
            return
        self._deviation("unexpected_marker", text, accepted, "kept as text")
        self._unexpected_text(text, accepted, reported=True)

    def _unexpected_text(self, text: str, accepted: frozenset[str], reported: bool = False) -> None:
        """Text the grammar has no place for here: a missing opener may be supplied; else it
        joins the free text being written, or content."""
        if not reported and self._abandon_call(text, accepted):
            self._place(text, self._accepts())
            return
        reported = reported or self._straying
        if not reported:
            layout = text[: len(text) - len(text.lstrip())]
            if layout:
                self._stray_white_space(layout, accepted)
                text = text[len(layout) :]
                if not text:
                    return
            before = self._lalr.stack
            inserted = self._insertion(None, accepted)
            if inserted is not None:
                shown = self._grammar.display(inserted)
                self._deviation("missing_marker", text, accepted, f"inserted {shown}")
                self._feed(inserted, "", inserted=True)
                free = self._free_text(self._accepts())
                self._place(text, self._accepts())
                # Only an opener the builder ignores, before content: taking it back later
                # changes nothing emitted (the text is content either way).
                if free == CONTENT and not self._builder.reacts_to(inserted):
                    self._undo_insertion = before
                return
            self._deviation("unexpected_text", text, accepted, "kept as content")
        self._place(text, accepted)

    def _stray_white_space(self, text: str, accepted: frozenset[str]) -> None:
        """White space where the grammar takes no text (before a header, between markers): kept
        as content, but it commits to nothing — what follows is read as if it were not there,
        so a completion reads the same however its white space was chunked."""
        if not self._stray_layout:
            self._deviation("unexpected_text", text, accepted, "white space kept as content")
            self._stray_layout = True
        self._builder.stray(text)
        self._position.advance(text)

    def _take_back_insertion(self, name: str, text: str, accepted: frozenset[str]) -> bool:
        """A marker the grammar refuses only because the repair inserted an opener for the free
        text before it: that text was stray after all (it is content either way, so nothing
        already emitted changes); the parser goes back to before the insertion."""
        before = self._undo_insertion
        if before is None or name not in self._lalr.accepts_at(before):
            return False
        self._deviation("insertion_undone", text, accepted, "the marker inserted before the text taken back")
        self._lalr.restore(before)
        self._undo_insertion = None
        self._run = self._run_handler = None
        return True

    def _place(self, text: str, accepted: frozenset[str]) -> None:
        """Text that is not structure: into the free text the grammar expects, else content."""
        free = self._free_text(accepted)
        if free is not None:
            self._feed(free, text)
        else:
            self._builder.stray(text)
            self._position.advance(text)
            self._straying = True

    def _abandon_call(self, found: str, accepted: frozenset[str]) -> bool:
        """A call that goes wrong before its name is complete has emitted nothing yet: it is
        taken back to the parser state before its opening marker and kept as content."""
        if self._before_call is None or not self._builder.call_pending:
            return False
        self._deviation("unparsable_call", found, accepted, "the call so far is kept as content")
        self._lalr.restore(self._before_call)
        self._before_call = None
        self._run = self._run_handler = None
        self._builder.abandon_call()
        return True

    def _insertion(self, name: str | None, accepted: frozenset[str]) -> str | None:
        """A marker whose insertion makes ``name`` (``None``: free text) acceptable."""
        for candidate in sorted(accepted):
            # Never the opening of a call: a repair may close or complete, but not invent one.
            if candidate not in self._grammar.markers.values() or candidate == "CALL_OPEN":
                continue
            after = self._lalr.accepts_after(candidate)
            if (name in after) if name else self._free_text(after) is not None:
                return candidate
        return None

    def _end(self) -> None:
        accepted = self._accepts()
        if "$END" not in accepted:
            self._deviation("truncated", "", accepted, "the output ended early; kept what arrived")
            self._builder.close()
            return
        self._lalr.finish()

    def _feed(self, name: str, text: str, inserted: bool = False) -> None:
        if name == "CALL_OPEN":  # the name the builder knows a call by, too
            self._before_call = self._lalr.stack
        self._lalr.shift(name, text)
        self._run = name if name in self._grammar.free_text else None
        if self._run is None:
            self._undo_insertion = None
        self._straying = self._stray_layout = False
        self._builder.token(name, text, inserted)
        self._run_handler = self._builder.run_handler(name) if self._run else None
        self._position.advance(text)
        if self._builder.stop_request is not None:
            self._stop_call()

    def _stop_call(self) -> None:
        """A limit was reached inside a call: it ends here, unfinished (not a call to run), and
        the parser goes back to before its opening marker, so what follows is read as text."""
        code, detail = self._builder.stop_request or ("limit", "")
        self._deviation(code, "", frozenset(), f"{detail}; the call stops here, the rest is content")
        self._builder.stop_call()
        self._stops += 1
        if self._before_call is not None:
            self._lalr.restore(self._before_call)
            self._before_call = None
        self._run = self._run_handler = None
        self._straying = True

    def _accepts(self) -> frozenset[str]:
        return self._lalr.accepts()

    def _free_text(self, accepted: frozenset[str]) -> str | None:
        for name in accepted:
            if name in self._grammar.free_text:
                return name
        return None

    def _deviation(self, code: str, found: str, accepted: frozenset[str], repair: str, at: int = 0) -> None:
        """Report a deviation at the current offset (``at``: that many characters from it,
        for one found inside a piece of text already being fed)."""
        offset = max(self._position.offset + at, 0)
        if self._strict:
            expected = tuple(sorted(self._grammar.display(name) for name in accepted))
            raise ParseError(
                code,
                offset=offset,
                line=self._position.line + 1,
                column=self._position.column(offset),
                found=found,
                expected=expected,
                partial=self._builder.message(),
                detail=f"(lenient parsing would have: {repair})",
            )
        self.diagnostics.append(Diagnostic(code, offset, f"{repair} ({found!r})" if found else repair))

    def _repaired(self, code: str, detail: str, at: int = 0) -> None:
        """A deviation the builder or an argument reader found (a repeated id, a duplicate key,
        text that is not JSON ``at`` characters into the piece being fed, ...)."""
        self._deviation(code, "", frozenset(), detail, at)

    def _bad_rule(self, rule: str) -> None:
        """A ``bad_*`` rule (a malformed variant the grammar accepts) was reduced."""
        self._deviation("malformed", rule, frozenset(), f"{rule} accepted")
