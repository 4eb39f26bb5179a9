"""``StreamParser``: model output in, events out — the one parsing path of every format.

Pieces from the ``MarkerScanner`` become tokens for the format's Lark LALR parser (stepped by a
``LalrCursor``). The terminals the parser accepts say what each piece of text means;
``MessageBuilder`` turns accepted tokens into events. A free-text run is fed to the parser once,
when it starts: its later chunks go straight to the builder, so the cost of a chunk does not
depend on what came before.

Deviations are handled in one place, ``_deviation``: with ``strict=True`` the first one raises
``ParseError`` and the parser stays failed; otherwise it is recorded in ``diagnostics`` and
repaired. A marker the grammar refuses, or a value's closer followed by text it cannot take, is
settled by the repair search (``engine/repair.py``) over a bounded lookahead: the pieces after
it wait in ``_queue`` until the lookahead is complete, so the decision depends on the text, not
on the chunking. White space between structural markers is layout (docs/architecture.md,
"Lenient repair").

Longer than ~300 lines: one machine — the scanner's pieces, the contextual lexing of pending
text, the marker and text decisions, and the one place deviations are reported — whose state
(run, pending text, rollback point) every part reads; split, that state would be shared.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from itertools import islice
from typing import Any, cast

from codec.arguments.emitter import LONGEST_ESCAPE
from codec.arguments.reader import ArgumentReaderFactory
from codec.engine.builder import MessageBuilder
from codec.engine.grammar import COMPLETION_START, CompiledGrammar, compiled
from codec.engine.lalr import LalrCursor, Stack
from codec.engine.patterns import IGNORED, WAIT, lexer_for
from codec.engine.position import Position
from codec.engine.repair import WINDOW_CHARS, CallHead, Piece, RepairSearch, lookahead, window_ready
from codec.engine.scanner import MarkerScanner
from codec.errors import CodecError, ParseError
from codec.events import Event
from codec.limits import DEFAULT_LIMITS, Limits
from codec.memo import memo
from codec.models import AssistantMessage, Diagnostic

CONTENT = "CONTENT"
"""The free-text terminal of visible content (grammars/*.lark)."""

_CALL_OPEN = "CALL_OPEN"
_CALL_CLOSE = "CALL_CLOSE"
_CONTENT_OPEN = "CONTENT_OPEN"
"""The marker that explicitly opens content, in a grammar that has one (Solar Open's)."""

_PROSE = frozenset({CONTENT, "REASONING"})
"""Free text that is prose, not a value: a marker that may end it always does."""

_UNKNOWN = object()  # not asked yet

MODEL_STOPPED = frozenset({"stop", "eos", "stop_sequence", "end_turn", "tool_calls"})
"""Engine finish reasons that say the model ended its output itself (an end-of-sequence or stop
token), as OpenAI, vLLM, SGLang, llama.cpp and Anthropic-style engines name it."""

ENGINE_LENGTH = frozenset({"length", "max_tokens"})
"""Engine finish reasons that say the engine cut the output at its token limit."""

_INSERTED = 64
"""More than the JSON that the markers a repair inserts into one call can write (closing quotes
and brackets): text of no length, so not bounded by ``LONGEST_ESCAPE``."""

PATTERN_BUFFER_LIMIT = 1024
"""Text held for pattern lexing before it must be decided (a header, never a payload)."""

_PRIMED_LIMIT = 256
# (grammar, generation prompt) -> the primed stack, and the last terminal the prompt fed (white
# space after an explicit content opener is content: ``_is_layout_candidate``)
_PRIMED: dict[tuple[str, str], tuple[Stack, str]] = memo({})


@lru_cache(maxsize=256)
def _spelled_on(grammar_file: str, prompt: str) -> tuple[str, ...]:
    """The white space that, after ``prompt``, would spell its last marker another way
    (``NAME__X``): ``("\\n",)`` after a prompt ending in ``</think>`` where ``</think>\\n`` is
    a spelling of it."""
    grammar = compiled(grammar_file)
    return tuple(
        longer[len(text) :]
        for text, name in grammar.scanned.items()
        if prompt.endswith(text)
        for longer, other in grammar.scanned.items()
        if other == name and len(longer) > len(text) and longer.startswith(text) and not longer[len(text) :].strip()
    )


class _Facts:
    """What the engine asks of a set of accepted terminals, answered once per set."""

    __slots__ = ("accepted", "call_open", "content", "free", "lexer", "optional", "patterns")

    def __init__(self, accepted: frozenset[str], grammar: CompiledGrammar) -> None:
        self.accepted = accepted
        self.free = next((name for name in sorted(accepted) if name in grammar.free_text), None)
        self.patterns = frozenset(name for name in accepted if name in grammar.patterns)
        self.lexer = lexer_for(grammar, accepted)  # the pattern terminals' next token
        self.optional = lexer_for(grammar, self.patterns)  # a pattern before free text (_lex)
        self.content = CONTENT in accepted
        self.call_open = _CALL_OPEN in accepted


_FACTS: dict[str, dict[frozenset[str], _Facts]] = memo({})  # grammar -> accepted terminals -> facts


class StreamParser:
    """Parses one completion fed in chunks. Sans-IO: ``feed(str)`` and ``close()`` return the
    events the text completes; ``message`` is the assistant message so far. ``events=False``
    (``Codec.parse``): no events are made, only the message."""

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
        events: bool = True,
        call_enders: frozenset[str] = frozenset({_CALL_OPEN}),
        content_openers: frozenset[str] = frozenset({_CONTENT_OPEN}),
    ) -> None:
        self._grammar: CompiledGrammar = compiled(grammar_file)
        self._call_enders = call_enders  # stop and turn markers, a call's opener: never inside a call
        self._content_openers = content_openers  # after these, white space is content, not layout
        self._facts = _FACTS.setdefault(self._grammar.name, {})
        self._free_terminals = self._grammar.free_text
        self._scanner = MarkerScanner(self._grammar.scanned)
        self._lalr = LalrCursor(self._grammar, COMPLETION_START, on_bad_rule=self._bad_rule)
        self._strict = strict
        self._limits = limits
        # Characters of a call's text (from its opener) that cannot take its arguments past
        # ``max_argument_chars``: each is at most ``LONGEST_ESCAPE`` characters of JSON, and what a
        # repair inserts ``_INSERTED`` more (the integer form of ``LONGEST_ESCAPE * n + _INSERTED
        # <= max_argument_chars``).
        self._meter_after = (limits.max_argument_chars - _INSERTED) // LONGEST_ESCAPE
        self._builder = MessageBuilder(tools, id_factory, self._repaired, arguments, limits, events)
        self.diagnostics: list[Diagnostic] = []
        self._run: str | None = None  # the free-text terminal whose run is in progress
        self._run_handler: Callable[[str], None] | None = None  # where the run's further text goes
        self._straying = False  # stray text is being kept as content (one diagnostic per run)
        # The stack before a marker the repair inserted to open free text, while only that text
        # followed: a later marker the insertion made unacceptable may take it back.
        self._undo_insertion: Stack | None = None
        self._stops = 0  # calls stopped at a limit, so a repair in progress can tell
        self._stop_at = 0  # while a call stops at a limit: where, in the piece being read
        self._before_call: Stack | None = None  # the parser's stack before the open call's marker
        self._pending = ""  # text waiting for pattern lexing
        self._budget = -1  # characters of the run in progress that cannot pass a size limit
        self._call_start = 0  # where the last call opened (its opener's offset)
        self._blank: list[str] = []  # white space before the queue, waiting to show whether it is layout
        # Pieces not yet parsed: held while a refused marker waits for its lookahead, or white
        # space waits to show whether it is layout (engine/repair.py).
        self._queue: deque[Piece] = deque()
        self._closing = False  # close() is draining the queue: no more text will come
        self._model_stopped = False  # the engine said the model ended the output (close())
        self._last = ""  # the last terminal fed to the parser
        self._run_opener = ""  # the terminal fed before the run of free text in progress
        self._search: RepairSearch | None = None
        self._head: object = _UNKNOWN  # how an implied call's head reads (_call_head)
        self._position = Position()
        self._failed: ParseError | None = None
        self._closed = False
        # White space that would go on spelling the prompt's last marker (`</think>` + `\n`), and
        # the completion's first characters held while they still may.
        self._spelled_on = _spelled_on(grammar_file, prompt)
        self._spell_held = ""
        self._prime(prompt)

    @property
    def message(self) -> AssistantMessage:
        """The assistant message parsed so far (complete after ``close()``: then it says how
        the output finished, and carries the diagnostics)."""
        return self._builder.message(tuple(self.diagnostics), ended=self._closed)

    def feed(self, chunk: str) -> list[Event]:
        """Parse ``chunk``; the events it completes."""
        if self._failed is not None or self._closed:
            self._check_usable()
        try:
            if self._spelled_on:
                chunk = self._spell_on(chunk)
            if self._run is not None and not self._queue and self._scanner.passes(chunk):
                # The hot path: one more piece of a run of free text, no marker in sight.
                budget = self._budget - len(chunk)
                if budget < 0:  # it may take a call past its size limit: ``_continue`` sees
                    self._continue(chunk)
                    if self._queue:
                        self._pieces([])
                else:
                    self._budget = budget
                    (self._run_handler or self._continue_run())(chunk)
                    if self._builder.stop_request is not None:
                        self._stop_call()
                    if self._builder.run_end is not None:
                        self._end_run(chunk)
                        self._lex(final=False)
                    elif "\n" in chunk:
                        self._position.advance(chunk)
                    else:  # ``advance`` without a line to count, written out
                        self._position.offset += len(chunk)
            else:
                self._pieces(self._scanner.feed(chunk))
        except ParseError as error:
            self._failed = error
            raise
        except TypeError:
            if isinstance(chunk, str):
                raise
            raise CodecError(f"feed() takes text (str), got {type(chunk).__name__}: decode it first") from None
        events = self._builder.events  # ``_drain``, written out: this runs once per chunk
        if not events:
            return []
        self._builder.events = []
        return events

    def close(self, finish_reason: str | None = None) -> list[Event]:
        """The completion ended: the last events. ``finish_reason`` is the engine's: ``"stop"``
        (or ``"eos"``, ...: the model ended its output) lets a call whose arguments are whole,
        with only its closing marker missing, finish (diagnostic ``missing_marker``);
        ``"length"`` says the engine cut the output; ``None`` (not known) is read as a cut. A
        call cut off midway keeps what arrived, apart, never as a call to run."""
        self._check_usable()
        self._model_stopped = finish_reason in MODEL_STOPPED
        self._builder.engine_length = finish_reason in ENGINE_LENGTH
        try:
            self._closing = True
            if self._spelled_on:  # the output ended while its first characters could still spell on
                self._pieces(self._scanner.feed(self._spell_on("")))
            held = self._scanner.close()  # the beginning of a marker, if the output ended in one
            if held:
                self._pieces([])  # first, what waited for more text is decided without it
            if held and self._builder.in_call and held[0][0] is None and held[0][1].strip():
                # The output was cut inside a marker of an open call (``</arg_value><arg_k``):
                # the call did not finish, whatever that marker was going to be. White space
                # alone (the start of Qwen's ``\n<tool_call>``) is text of the call. Where the
                # closer is implied, whole arguments did finish it, before the marker began. A
                # whole marker held only because it may grow into a longer spelling (Intern-S1's
                # ``<|action_end|>`` before its ``\n``) was written: it is read as it stands.
                self._lex(final=True)
                self._close_implied("$END")
                self._end(cut_marker=held[0][1])
            else:
                self._pieces(held)
                self._lex(final=True)
                if self._queue:  # text after a call stopped at a limit, read again
                    self._pieces([])
                self._end()
        except ParseError as error:
            self._failed = error
            raise
        self._closed = True
        return self._drain()

    def _spell_on(self, chunk: str) -> str:
        """The completion's first characters, less the white space that goes on spelling the
        generation prompt's last marker: the prompt ends at `</think>`, the template writes
        `</think>\\n` + content (GLM-4.5 with thinking off), and that new line is the marker's, as
        the scanner reads it when the marker and the new line come in one text. Held while they
        may still grow into a longer such spelling."""
        held = self._spell_held + chunk
        if not self._closing and any(tail.startswith(held) and tail != held for tail in self._spelled_on):
            self._spell_held = held
            return ""
        tail = max((tail for tail in self._spelled_on if held.startswith(tail)), key=len, default="")
        self._spelled_on, self._spell_held = (), ""
        self._position.advance(tail)
        return held[len(tail) :]

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
            self._lalr.restore(primed[0])
            self._last = primed[1]
            return
        try:
            self._closing = True
            self._pieces(self._scanner.feed(prompt))
            self._pieces(self._scanner.close())
            self._lex(final=True)
            self._closing = False
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
            _PRIMED[key] = (self._lalr.stack, self._last)

    def _pieces(self, pieces: list[Piece]) -> None:
        """Parse queued pieces in order, as far as each can be decided (some wait for what
        follows them: white space, a call's head, a repair's lookahead).

        The plain step comes first: the piece at the head of the queue is taken at once when the
        grammar leaves no question open — what the general path (``_piece``) would do, without
        asking each of its questions (the common case of well-formed output; written out here,
        as it runs once per piece). Text continues the run in progress, or opens the one
        free-text terminal the parser accepts where neither content (layout, an implied call)
        nor a pattern could start. Text where a pattern may start and content may not, with a
        marker next, is lexed at once as final (what the marker's turn would do). A marker the
        parser accepts is taken unless it may close a value whose next piece is text that may
        not follow it (``_closer`` decides then; free text after the marker takes any text), or
        opens a call past ``max_calls``."""
        queue = self._queue
        queue.extend(pieces)
        if self._blank and not self._more_blank():
            return
        while queue:
            name, text = queue[0]
            if not self._pending:
                facts = self._lalr.config.notes or self._here()  # ``_here``, remembered with the configuration
                if name is None:
                    if self._run is not None:
                        queue.popleft()
                        self._text(text)
                        continue
                    if not (
                        facts.free is None
                        or facts.patterns
                        or (facts.content and (not text.strip() or (facts.call_open and self._call_head())))
                    ):
                        queue.popleft()
                        self._feed(facts.free, text)
                        continue
                    if facts.patterns and not facts.content and len(queue) > 1 and queue[1][0]:
                        # Pattern text a marker ends (Solar's role and call id, Gemma's channel
                        # name and call head): final at once, as it would be when that marker
                        # comes up.
                        queue.popleft()
                        self._pending = text
                        self._lex(final=True)
                        continue
                elif (
                    name in facts.accepted
                    and (name != _CALL_OPEN or self._builder.calls_finished < self._limits.max_calls)
                    and (
                        self._strict
                        or self._run is None
                        or self._run in _PROSE
                        or (
                            len(queue) > 1
                            and (after := queue[1][0]) is not None
                            and (after != name or not self._quote_repeated(name))
                        )
                        or self._repair_search().free_after(self._lalr.stack, name)
                        or ((follows := self._what_follows()) is not None and self._follows_fit(name, follows))
                    )
                ):
                    queue.popleft()
                    self._feed(name, text)
                    continue
            if not self._piece(name, text):
                return

    def _piece(self, name: str | None, text: str) -> bool:
        """The piece at the head of the queue, the general way: ``False`` when it must wait for
        what follows it (it stays queued)."""
        queue = self._queue
        if name is None:
            if len(queue) > 1 and queue[1][0] is None and self._undecided_text(text):
                queue.popleft()  # more text follows: read the two as one
                queue[0] = (None, text + queue[0][1])
                return True
            if len(queue) == 1 and not self._closing and self._undecided_text(text):
                if not text.strip():  # white space waits apart, joined once its meaning is known
                    self._blank.append(queue.popleft()[1])
                return False
            queue.popleft()
            self._queued_text(text)
            return True
        self._lex(final=True)
        self._close_implied(name)
        if not self._strict and name not in self._accepts():
            if not window_ready(islice(queue, 1, None), self._closing):
                return False  # the repair needs its lookahead
        elif not self._strict and self._run is not None and self._run not in _PROSE:
            decided = self._closer(name, text)
            if decided is None:
                return False  # whether this marker ends the value depends on what follows it
            if decided:
                return True
        queue.popleft()
        self._marker(name, text)
        return True

    def _more_blank(self) -> bool:
        """White space is held (``_blank``) until what follows it says whether it is layout:
        more white space joins it without copying what was held (fed a character at a time, a
        long run would otherwise cost quadratic time); anything else, or the end, puts the run
        back at the head of the queue, joined once. ``False``: it still waits."""
        queue, blank = self._queue, self._blank
        while queue and queue[0][0] is None and not queue[0][1].strip():
            blank.append(queue.popleft()[1])
        if not queue and not self._closing:
            return False
        queue.appendleft((None, "".join(blank)))
        blank.clear()
        return True

    def _here(self) -> _Facts:
        """What the parser accepts now, with the answers the engine asks of it (kept with the
        parser's configuration: the plain step reads them there)."""
        facts = self._lalr.config.notes = self._facts_of(self._lalr.accepts())
        return facts

    def _facts_of(self, accepted: frozenset[str]) -> _Facts:
        facts = self._facts.get(accepted)
        if facts is None:
            facts = self._facts[accepted] = _Facts(accepted, self._grammar)
        return facts

    def _undecided_text(self, text: str) -> bool:
        """Whether what ``text`` means still depends on the text after it: white space where
        content could start (layout, if a marker follows), or the start of a call's head."""
        if self._is_layout_candidate(text):
            return True
        head = self._implied_call()
        return head is not None and head.reads(text.lstrip()) is None

    def _queued_text(self, text: str) -> None:
        if self._is_layout_candidate(text):
            self._position.advance(text)  # layout between markers, or at the end
            return
        head = self._implied_call()
        body = text.lstrip()
        if head is not None and head.reads(body):
            self._open_implied_call(text, body)
            return
        self._text(text)

    def _closer(self, name: str, text: str) -> bool | None:
        """A marker the grammar accepts that would end a value (``</arg_value>``, ``<|"|>``):
        ``False`` to read it as the grammar does; ``True`` once it was read, as a closer or as
        text of the value, because text it cannot take follows; ``None`` to wait for more."""
        follows = self._what_follows()
        if follows is None:
            return None
        if self._follows_fit(name, follows):
            return False
        # The value's quote twice in a row (Python's """ as three quote tokens): of two
        # readings that fit as well, the first is text of the value.
        repeated = not follows
        if not window_ready(islice(self._queue, 1, None), self._closing):
            return None
        self._queue.popleft()
        window, beyond = lookahead(self._queue)
        ends = self._closing and not beyond
        search = self._repair_search()
        if search.ends_value(self._lalr.stack, name, self._run or "", window, ends, ties_end=not repeated):
            self._marker(name, text)
        else:  # a value quoting the marker reads on as text
            self._deviation("marker_as_text", text, self._accepts(), "read as text of the value")
            self._text(text)
        return True

    def _follows_fit(self, name: str, follows: str) -> bool:
        """Whether what follows the accepted marker ``name`` (its first character, ``""`` for
        a marker or the end) may stand after it: then the marker is read as the grammar does. A
        closer repeated at once, when it opened the value too, is a question (``_quote_repeated``)."""
        if follows:
            return self._repair_search().fits_after(self._lalr.stack, name, follows)
        return not self._quote_repeated(name)

    def _quote_repeated(self, name: str) -> bool:
        """Whether the marker ``name`` at the head of the queue, which opened the value run in
        progress and would close it, comes twice in a row where the grammar refuses the second
        (Gemma's ``<|"|><|"|>``: Python's ``\"\"\"`` as quote tokens)."""
        queue = self._queue
        return len(queue) > 1 and queue[1][0] == name == self._run_opener and name not in self._lalr.accepts_after(name)

    def _implied_call(self) -> CallHead | None:
        """Where content would start and a call may open: how a call's head reads after its
        opening marker, when it starts with a fixed word (Gemma's ``call:NAME{``) — text that
        starts so implies the opener the model left out."""
        if self._run is not None or self._pending or self._strict:  # strict: the grammar's reading only
            return None
        accepted = self._accepts()
        if _CALL_OPEN not in accepted or CONTENT not in accepted:
            return None
        return self._call_head()

    def _call_head(self, before: tuple[str, ...] = ()) -> CallHead | None:
        """How the head of a call reads when it starts with a fixed word, else ``None`` (one
        answer per grammar; asked where the parser accepts a call's opening marker after the
        terminals ``before``)."""
        if self._head is _UNKNOWN:
            self._head = self._repair_search().call_head(self._lalr.stack, _CALL_OPEN, before)
        return cast("CallHead | None", self._head)

    def _open_implied_call(self, text: str, body: str) -> None:
        """A call written without its opening marker: the marker is read as if it were there."""
        self._position.advance(text[: len(text) - len(body)])  # white space before it: layout
        opener = self._grammar.display(_CALL_OPEN)
        self._deviation("missing_marker", body[:20], self._accepts(), f"inserted {opener}: the text opens a call")
        self._feed(_CALL_OPEN, "", inserted=True)
        self._text(body)

    def _what_follows(self) -> str | None:
        """The first character of text after the marker at the head of the queue: ``""`` when a
        marker, the end or a long stretch of white space comes first; ``None`` when it has not arrived."""
        seen = 0
        for name, text in islice(self._queue, 1, None):
            if name is not None:
                return ""
            stripped = text.lstrip()
            if stripped:
                return stripped[0]
            seen += len(text)
            if seen >= WINDOW_CHARS:
                return ""
        return "" if self._closing else None

    def _is_layout_candidate(self, text: str) -> bool:
        """White space where content could start: layout if a marker or the end follows it —
        unless a marker opened the content explicitly (``CONTENT_OPEN``, or one of the format's
        ``FormatSpec.content_openers``: then it is the content)."""
        if self._run is not None or self._pending or text.strip() or self._last in self._content_openers:
            return False
        return CONTENT in self._accepts()

    def _drain(self) -> list[Event]:
        events = self._builder.events
        if events:
            self._builder.events = []
        return events if events else []

    def _text(self, text: str) -> None:
        if self._run is not None:  # more of a run already fed to the parser
            self._continue(text)
            return
        if not self._pending:
            here = self._here()
            if not here.patterns:
                if here.free is not None:
                    self._feed(here.free, text)
                else:
                    self._unexpected_text(text, here.accepted)
                return
        self._pending += text
        self._lex(final=False)

    def _lex(self, final: bool) -> None:
        """Turn pending text into pattern tokens, as far as it can be decided."""
        while self._pending:
            here = self._lalr.config.notes or self._here()
            accepted, free = here.accepted, here.free
            if free is not None:
                # An optional pattern before free text (Gemma's channel name): taken if the text
                # starts with it, else the text is the free text.
                found = self._optional_pattern(here, final)
                if found == WAIT:
                    return
                if found is None:
                    text, self._pending = self._pending, ""
                    self._feed(free, text)
                    continue  # pending again only where the run ended early (``_end_run``)
                self._pending = self._pending[len(found[1]) :]
                if not self._past_max_calls(found[0], found[1], accepted):
                    self._feed(*found)
                continue
            decide = final or len(self._pending) > PATTERN_BUFFER_LIMIT
            # Past the limit a token is matched on the limit's worth of text, not on however
            # much happened to arrive: the outcome does not depend on the chunking.
            window = self._pending if final else self._pending[: PATTERN_BUFFER_LIMIT + 1]
            found = here.lexer.next(window, decide)
            if found == WAIT:
                return
            if not isinstance(found, tuple):
                joined = self._next_call_joined(final)
                if joined is None:
                    return
                if joined:
                    continue
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
            if not self._past_max_calls(name, token, accepted):
                self._feed(name, token)

    def _past_max_calls(self, name: str, text: str, accepted: frozenset[str]) -> bool:
        """A call's opener lexed as a pattern (a call with no opening marker: Llama 3's bare
        object) past ``max_calls``: kept as text, as an opening marker would be (``_marker``)."""
        if name != _CALL_OPEN or self._builder.calls_finished < self._limits.max_calls:
            return False
        limit = self._limits.max_calls
        self._deviation("too_many_calls", text, accepted, f"more than {limit} calls: kept as text")
        self._unexpected_text(text, accepted, reported=True)
        return True

    def _next_call_joined(self, final: bool) -> bool | None:
        """Pending text a finished call's arguments cannot take, that opens the next call as a
        call's head would (Gemma's ``}call:NAME{`` with ``<tool_call|><|tool_call>`` left out
        between): the closer is inserted, then the opener the text implies. ``None``: the text
        may still turn out to be such a head (wait); ``False``: it is not."""
        if self._straying or not self._finishable(_CALL_OPEN) or CONTENT not in self._lalr.accepts_after(_CALL_CLOSE):
            return False
        head = self._call_head((_CALL_CLOSE,))
        reads = head.reads(self._pending) if head is not None else False
        if reads is None and not final:
            return None
        if not reads:
            return False
        text, self._pending = self._pending, ""
        self._finish_call(text[:20], self._accepts())
        self._open_implied_call(text, text)
        return True

    def _optional_pattern(self, here: _Facts, final: bool) -> tuple[str, str] | str | None:
        if not here.patterns:
            return None
        found = here.optional.next(self._pending, final)
        if found == WAIT:
            return WAIT
        if isinstance(found, tuple) and found[0] != IGNORED and not found[0].startswith("BAD_"):
            return found
        return None

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
        if self._strict:  # raises: the first deviation is the error
            inserted = self._repair_search().insertion(self._lalr.stack, name)
            if inserted is not None:
                self._deviation("missing_marker", text, accepted, f"inserted {self._show(inserted)} before {text}")
            if _CALL_CLOSE in self._grammar.implied and self._ends_call(name, False):
                # No closer to insert: the call this marker ends was not finished (lenient: the same).
                self._deviation("unfinished_call", text, accepted, "the call before it was not finished")
            if not self._abandon_call(text, accepted):
                self._deviation("unexpected_marker", text, accepted, "kept as text")
        free = self._free_text(accepted)
        window, beyond = lookahead(self._queue)
        writing = self._run is not None  # a marker amid text reads as that text; between structure, as stray
        edit = self._repair_search().choose(self._lalr.stack, name, free, writing, window, self._closing and not beyond)
        if self._ends_call(name, edit.kind == "insert" and _CALL_CLOSE in edit.inserted):
            if self._finishable(name):
                self._finish_call(text, accepted)
                self._feed(name, text)
            else:
                self._cut_call(name, text, accepted)
            return
        if edit.kind == "insert":
            self._insert(edit.inserted, name, text, accepted)
            return
        if self._abandon_call(text, accepted):
            self._marker(name, text)
            return
        if edit.kind == "literal" and free is not None:
            self._deviation("marker_as_text", text, accepted, "read as text of the value it stands in")
            self._text(text)
        elif edit.kind == "drop":
            self._deviation("stray_marker", text, accepted, "dropped")
            self._position.advance(text)
        else:
            self._deviation("unexpected_marker", text, accepted, "kept as text")
            self._unexpected_text(text, accepted, reported=True)

    def _ends_call(self, name: str, closes: bool) -> bool:
        """Whether the refused marker ``name`` ends the open call: a stop marker (generation
        ended there), a turn's marker or another call's opener always does (``call_enders``:
        never text of a value), and so does any marker the repair would read only by closing
        the call (``closes``). A call whose name may not be complete yet is never finished so:
        it is content."""
        return self._builder.in_call and (closes or name in self._call_enders)

    def _cut_by_closer(self, inserted: bool) -> bool:
        """Whether the call's closer, read now, ends a call whose arguments are not whole."""
        return not inserted and self._builder.in_call and not self._builder.arguments_complete

    def _finishable(self, following: str) -> bool:
        """Whether the open call may be finished by its closing marker, ``following`` (a
        terminal, or ``$END``) then fitting: its arguments are whole, only the closer is
        missing (models end on Gemma's ``}`` and leave ``<tool_call|>`` out) — and, when the
        reader says the text it holds closes them (a string left open before its ``}``), the
        shortest insertion that lets the closer in."""
        if not self._builder.arguments_complete:
            return False
        if _CALL_CLOSE in self._accepts():
            return following in self._lalr.accepts_after(_CALL_CLOSE)
        before = self._repair_search().insertion(self._lalr.stack, _CALL_CLOSE)
        return before is not None and following in self._repair_search().accepts_after(
            self._lalr.stack, (*before, _CALL_CLOSE)
        )

    def _finish_call(self, found: str, accepted: frozenset[str]) -> None:
        before = () if _CALL_CLOSE in accepted else self._repair_search().insertion(self._lalr.stack, _CALL_CLOSE) or ()
        closer = self._show((*before, _CALL_CLOSE))
        detail = f"inserted {closer} before {found}" if found else f"inserted {closer}: the output ended before it"
        self._deviation("missing_marker", found, accepted, detail + " (the arguments were whole)")
        for terminal in before:
            self._feed(terminal, "", inserted=True)
        self._feed(_CALL_CLOSE, "", inserted=True)

    def _cut_call(self, name: str, text: str, accepted: frozenset[str]) -> None:
        """A marker that cannot stand inside a call came before the open call was finished: the
        call ends here unfinished (the truncated call, not a call to run), the parser goes back
        to before its opening marker, and the marker is read from there."""
        self._deviation("unfinished_call", text, accepted, "the call before it was not finished: kept apart, not run")
        self._builder.cut_call(read_again=True)
        if self._before_call is not None:
            self._lalr.restore(self._before_call)
            self._before_call = None
        self._run = self._run_handler = None
        self._marker(name, text)

    def _insert(self, inserted: tuple[str, ...], name: str, text: str, accepted: frozenset[str]) -> None:
        self._deviation("missing_marker", text, accepted, f"inserted {self._show(inserted)} before {text}")
        stops = self._stops
        for terminal in inserted:
            self._feed(terminal, "", inserted=True)
            if self._stops != stops:  # the insertion ended the call at a limit: read the marker anew
                self._marker(name, text)
                return
        self._feed(name, text)

    def _show(self, terminals: tuple[str, ...]) -> str:
        patterns = self._grammar.patterns
        return "".join(
            patterns[name].literal or name if name in patterns else self._grammar.display(name) for name in terminals
        )

    def _repair_search(self) -> RepairSearch:
        if self._search is None:
            self._search = RepairSearch(self._grammar, COMPLETION_START)
        return self._search

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
                self._position.advance(layout)  # layout between structure: not content
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

    def _close_implied(self, following: str) -> None:
        """A grammar whose calls have no closing marker (``CompiledGrammar.implied``: the model
        writes nothing after a call's arguments): where ``following`` (a marker, or ``$END``)
        cannot stand inside the open call, ends it (``call_enders``) and fits after it, and the
        call's arguments are whole, the closer is what the grammar means — fed, no deviation."""
        if _CALL_CLOSE not in self._grammar.implied or not self._builder.arguments_complete:
            return
        accepted = self._accepts()
        if following in accepted or _CALL_CLOSE not in accepted:
            return
        if (following == "$END" or following in self._call_enders) and following in self._lalr.accepts_after(
            _CALL_CLOSE
        ):
            self._feed(_CALL_CLOSE, "", inserted=True)

    def _end(self, cut_marker: str = "") -> None:
        """The output ended: a structure still open is cut off (``cut_marker``: the beginning
        of the marker the output ended in, kept in the diagnostic)."""
        if not cut_marker:
            self._close_implied("$END")
        accepted = self._accepts()
        if not cut_marker and "$END" not in accepted and self._model_stopped and self._finishable("$END"):
            self._finish_call("", accepted)
            accepted = self._accepts()
        # A call the grammar lets the output end (Llama 3's bare object, no closing marker of
        # its own) is finished there when its arguments are whole, else cut off like any other.
        open_call = self._builder.in_call and "$END" in accepted
        if cut_marker or "$END" not in accepted or (open_call and not self._builder.arguments_complete):
            repair = "the output ended inside a marker" if cut_marker else "the output ended early"
            self._deviation("truncated", cut_marker, accepted, f"{repair}; kept what arrived")
            self._builder.close()
            return
        if open_call:
            self._builder.end_call_at_end()
        self._lalr.finish()

    def _feed(self, name: str, text: str, inserted: bool = False) -> None:
        if name == "CALL_OPEN":  # the name the builder knows a call by, too
            self._before_call = self._lalr.stack
            self._call_start = self._position.offset
        elif name == _CALL_CLOSE and name in self._call_enders and self._cut_by_closer(inserted):
            # The closer is a stop marker too (gpt-oss's <|call|>): generation ended inside
            # the arguments, as at any stop marker, and the call is unfinished.
            self._deviation("unfinished_call", text, self._accepts(), "the call was not finished: kept apart, not run")
            self._builder.cut_call()
        self._lalr.shift(name, text)
        run = self._run = name if name in self._free_terminals else None
        if run is None:
            self._undo_insertion = None
        else:
            self._run_opener = self._last
        self._last = name
        self._straying = False
        builder = self._builder
        self._budget = -1  # worked out when the run goes on (``_continue``)
        # Whether this text may take an open call past its size limit: asked of the builder only
        # when all the call's text so far, this too, could (``_meter_after``).
        if (
            run is not None
            and self._position.offset - self._call_start + len(text) > self._meter_after
            and builder.in_call
            and LONGEST_ESCAPE * len(text) > builder.room(LONGEST_ESCAPE * len(text))
        ):
            self._run_handler = None
            self._metered(text, lambda piece: builder.token(name, piece, inserted))
            return
        builder.token(name, text, inserted)
        self._run_handler = None  # made when the run goes on past this token (_continue_run)
        if builder.stop_request is not None:
            self._stop_call()
        if builder.run_end is not None:
            self._end_run(text)
        elif "\n" in text:
            self._position.advance(text)
        else:  # ``advance`` without a line to count, written out: this runs once per token
            self._position.offset += len(text)

    def _continue(self, text: str) -> None:
        """More text of the run in progress. ``_budget`` is how much more of it cannot take an
        open call past ``max_argument_chars`` (each character is at most ``LONGEST_ESCAPE`` of
        JSON); past it, the text is metered."""
        budget = self._budget - len(text)
        if budget < 0:
            budget = self._builder.room(LONGEST_ESCAPE * len(text)) // LONGEST_ESCAPE - len(text)
            if budget < 0:
                self._metered(text, self._run_handler or self._continue_run())
                return
        self._budget = budget
        (self._run_handler or self._continue_run())(text)
        if self._builder.stop_request is not None:
            self._stop_call()
        if self._builder.run_end is not None:
            self._end_run(text)
        else:
            self._position.advance(text)

    def _metered(self, text: str, feed: Callable[[str], None]) -> None:
        """Text of a call's run that may take its arguments past ``max_argument_chars``, fed in
        pieces that cannot (one character at a time at the end): the call stops after the same
        character however the text was chunked, and the rest is read again, as text after the
        stopped call (docs/architecture.md, "Limits")."""
        builder, start = self._builder, 0
        while start < len(text):
            room = builder.room(LONGEST_ESCAPE * (len(text) - start))
            piece = text[start : start + max(1, room // LONGEST_ESCAPE)]
            start += len(piece)
            feed(piece)
            if builder.run_end is not None:
                self._end_run(text[start - len(piece) :])
                return
            stopped = builder.stop_request is not None
            if stopped:
                self._stop_call()
            self._position.advance(piece)
            if stopped:
                if start < len(text):
                    self._queue.appendleft((None, text[start:]))
                return
            feed = self._run_handler or self._continue_run()  # the run goes on
        self._budget = -1

    def _continue_run(self) -> Callable[[str], None]:
        """Where the further text of the run in progress goes. Asked when the run's second piece
        arrives, not when it starts: a whole parse gives each run in one piece. Nothing but that
        run's text reaches the builder in between, so it answers as it would have at the start."""
        handler = self._run_handler = self._builder.run_handler(self._run or "")
        return handler

    def _end_run(self, text: str) -> None:
        """The call's reader ended its run of free text part way into ``text``, the piece it
        was given (``ArgumentContext.end``: a call object in a JSON list ends at its ``}``, no
        marker after it): the rest of the piece is lexed by the grammar again, before any text
        still pending, and the run is over."""
        at = self._builder.run_end or 0
        self._builder.run_end = None
        self._builder.give_back(len(text) - at)
        self._run = self._run_handler = None
        self._position.advance(text[:at])
        self._pending = text[at:] + self._pending

    def _stop_call(self) -> None:
        """A limit was reached inside a call: it ends here, unfinished (not a call to run), and
        the parser goes back to before its opening marker, so what follows is read as text."""
        code, detail, at = self._builder.stop_request or ("limit", "", 0)
        self._deviation(code, "", frozenset(), f"{detail}; the call stops here, the rest is content", at)
        self._stop_at = at  # what the call's reader reports as it ends is at the same place
        self._builder.stop_call()
        self._stop_at = 0
        self._stops += 1
        if self._before_call is not None:
            self._lalr.restore(self._before_call)
            self._before_call = None
        self._run = self._run_handler = None
        self._straying = True

    def _accepts(self) -> frozenset[str]:
        return self._lalr.accepts()

    def _free_text(self, accepted: frozenset[str]) -> str | None:
        """The free-text terminal among ``accepted`` (the first by name, were there two)."""
        return self._facts_of(accepted).free

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
        listed = len(self.diagnostics) - self._limits.max_diagnostics
        if listed < 0:
            self.diagnostics.append(Diagnostic(code, offset, f"{repair} ({found!r})" if found else repair))
        elif listed == 0:  # untrusted output could otherwise make one per character
            detail = f"more than {self._limits.max_diagnostics} deviations: this one and those after it are not listed"
            self.diagnostics.append(Diagnostic("too_many_diagnostics", offset, detail))

    def _repaired(self, code: str, detail: str, at: int = 0) -> None:
        """A deviation the builder or an argument reader found (a repeated id, a duplicate key,
        text that is not JSON ``at`` characters into the piece being fed, ...)."""
        self._deviation(code, "", frozenset(), detail, at + self._stop_at)

    def _bad_rule(self, rule: str) -> None:
        """A ``bad_*`` rule (a malformed variant the grammar accepts) was reduced."""
        self._deviation("malformed", rule, frozenset(), f"{rule} accepted")
