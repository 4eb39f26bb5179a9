"""The one small interface between the stream parser's message builder and a format's argument
syntax.

The builder owns a call (its id, name and ``ArgumentsEmitter``); a reader owns the call's
arguments. Each family's ``arguments.py`` defines one reader class: it names the grammar
terminals it reads (``terminals``), and the builder hands it every token of those terminals in
order. The reader writes the JSON arguments through ``ArgumentContext.emitter`` and sends each
fragment out with ``delta``; text it cannot place as arguments goes to ``content`` (never lost).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from codec.arguments.emitter import ArgumentsEmitter
from codec.limits import Limits


class Report(Protocol):
    """``report(code, detail, at=0)``: a repaired deviation (a diagnostic, or an error when
    strict); ``at``: where, in characters from the start of the piece of text being read (so
    the offset does not depend on how the text was chunked)."""

    def __call__(self, code: str, detail: str, at: int = 0) -> None: ...


class Stop(Protocol):
    """``stop(code, detail, at=0)``: end the call here, unfinished (a limit was reached); ``at``
    as for ``Report``: where, from the start of the piece of text being read."""

    def __call__(self, code: str, detail: str, at: int = 0) -> None: ...


class Start(Protocol):
    """``start(name, at=0)``: announce the call (``ArgumentContext.start``)."""

    def __call__(self, name: str, at: int = 0) -> None: ...


class HeldText(Protocol):
    """A reader's say over the text of an open string before it is written
    (``ArgumentContext.string_sink(held)``): a piece whose last character is one of ``ends``, or
    any piece while ``tail`` holds text, goes to ``write`` with the sink that writes, instead of
    straight out (Gemma holds a ``}`` that may close the call rather than end the text)."""

    ends: str
    tail: str

    def write(self, text: str, sink: Callable[[str], None]) -> None: ...


@dataclass(slots=True)
class ArgumentContext:
    """What a reader may use: the call's emitter, the schema of a top-level argument by key
    (``None``: unknown, untyped), the tool names offered (``tool_names()``: rarely asked, so
    worked out on demand), and where fragments, reports and leftover text go.
    ``stop(code, detail)`` asks the engine to end the call here, unfinished (a limit was
    reached: the reader has sent the text it was given to ``content``). ``string_sink(held=None)`` is the
    fast path for the text of an open string value: it escapes the text into the emitter's
    string and sends the fragment, in one call per chunk. One is made per call, so it is a
    plain dataclass, not a frozen one (cheaper to make): readers only read it."""

    emitter: ArgumentsEmitter
    schema_of: Callable[[str], Mapping[str, Any] | None]
    tool_names: Callable[[], Sequence[str]]
    report: Report
    delta: Callable[[str], None]
    content: Callable[[str], None]
    limits: Limits
    stop: Stop
    string_sink: Callable[..., Callable[[str], None]]
    parameters: Callable[[], Mapping[str, Any] | None] = lambda: None
    """The called tool's ``parameters`` schema (``None``: unknown), once its name is known."""
    start: Start = lambda name, at=0: None
    """``start(name, at=0)``: announce the call with the name the reader read from its own
    text, ``at`` characters into the piece being read, for a syntax that writes the name inside
    the arguments text (Qwen's ``{"name": …, "arguments": …}``): the reader's ``name`` returned
    ``None``, and nothing of the call is sent before this."""
    call_id: Callable[[], str] = lambda: ""
    """The id the model wrote for the call (``CALL_ID``), for a syntax that writes the name
    inside the id (Kimi K2's ``functions.NAME:0``): complete by the first argument token."""
    end: Callable[[int], None] = lambda at: None
    """``end(at)``: the call's text in its run of free text ends ``at`` characters into the
    piece being read, for a syntax whose call ends where no marker stands (a call object in a
    JSON list, ``[{…}, {…}]``): the engine ends the run there and lexes the rest of the piece
    by the grammar again (the object's ``}``, the list's ``,``). The reader takes nothing of the
    piece past ``at``."""


class ArgumentReader(Protocol):
    """Reads one call's arguments from the tokens of its family's argument syntax."""

    terminals: ClassVar[frozenset[str]]

    def name(self, written: str, terminal: str, inserted: bool) -> str | None:
        """The call's name, when its first argument token ``terminal`` arrives: ``written`` as a
        rule; a reader may take part of it back (GLM's key glued to the name). ``None``: the
        name is in the arguments text, and the reader announces it (``ArgumentContext.start``)."""
        ...

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        """The next token of the arguments (``inserted``: a missing marker the repair supplied)."""
        ...

    def run_sink(self, terminal: str) -> Callable[[str], None] | None:
        """Where further text of a run of free text ``terminal`` may go directly (the hot path
        of streaming: a string value's text, a JSON text), or ``None`` when each piece must go
        through ``token``."""
        ...

    @property
    def complete(self) -> bool:
        """Whether the arguments read so far are whole: no key, value or container is open, so
        the call could end here. The engine asks it where the model stopped (or went on to
        something else) with only the call's closing marker missing: a call whose arguments
        are whole is finished; any other is cut off, never a call to run."""
        ...

    @property
    def held(self) -> int:
        """Characters of a run of free text read and not yet written as JSON (Solar's number or
        key while it arrives): the size limit counts each as possibly ``LONGEST_ESCAPE`` long.
        A value written only at a marker (GLM's typed values) need not be counted."""
        ...

    def finish(self, truncated: bool) -> None:
        """The call closed (``truncated``: the output ended inside it): emit the last fragments
        and send unplaced text to content."""
        ...


class ArgumentReaderFactory(Protocol):
    """A reader class: its terminals, and a constructor from the call's context. A reader is
    made at a call's first argument token; a class that sets ``named_at_close = True`` gets one
    at the call's close too when no argument token came, so its ``name`` (``terminal``
    ``CALL_CLOSE``) may read arguments the model wrote into the name's text (GLM-4.5's JSON
    object after the name)."""

    terminals: frozenset[str]

    def __call__(self, context: ArgumentContext) -> ArgumentReader: ...
