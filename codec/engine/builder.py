"""Turns the tokens the parser accepted into events and, at the end, the assistant message.

The engine (``stream.py``) decides *whether* a token fits the grammar; this module decides
*what it means*, by terminal name. The names are the contract with ``grammars/*.lark``:
``REASONING`` / ``CONTENT`` text, ``CALL_OPEN`` ... ``CALL_CLOSE`` around a call, its
``CALL_ID`` and ``TOOL_NAME``. A call's arguments belong to the format's argument reader
(``codec/formats/<family>/arguments.py``): every token of its terminals goes there.

Longer than ~300 lines: one assembler — the dispatch by terminal, a call's life from its opener
to its end, and the two ways its fragments leave (as events, or only counted against the size
limit when nobody reads them) — whose parts share the open call's state.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codec.arguments.emitter import LONGEST_ESCAPE
from codec.arguments.reader import ArgumentContext, ArgumentReader, ArgumentReaderFactory, HeldText, Report
from codec.arguments.schema import property_schema, tool_schema
from codec.engine.call import Call, random_call_id, tool_names
from codec.events import ContentDelta, Event, ReasoningDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from codec.limits import DEFAULT_LIMITS, Limits
from codec.models import AssistantMessage, Diagnostic, FinishReason, ToolCall, built


class MessageBuilder:
    """Events and the final message for one completion."""

    def __init__(
        self,
        tools: Sequence[Mapping[str, Any]],
        id_factory: Callable[[int], str] | None,
        report: Report,
        arguments: ArgumentReaderFactory,
        limits: Limits = DEFAULT_LIMITS,
        events: bool = True,
    ) -> None:
        self._tools = tools
        self._lazy = not events  # nobody reads events (a whole parse): none is made, no long fragments
        self.limits = limits
        self.stop_request: tuple[str, str, int] | None = None  # (code, detail, at): end the open call here
        self.run_end: int | None = None  # where the reader ended its run of free text (``ArgumentContext.end``)
        self._new_id = id_factory or random_call_id
        self._report = report
        self._arguments = arguments
        self._named_at_close = bool(getattr(arguments, "named_at_close", False))  # ArgumentReaderFactory
        self.events: list[Event] = []  # stays empty when ``events`` is off
        self._reasoning: list[str] = []
        self._content: list[str] = []
        # Where reasoning and content text go: with no events to make, straight into the lists
        # (an empty piece joins as nothing).
        self._on_reasoning = self._reasoning_event if events else self._reasoning.append
        self._on_content = self._content_event if events else self._content.append
        self._calls: list[ToolCall] = []
        self._truncated: ToolCall | None = None
        self._incomplete: list[ToolCall] = []
        self.cut_off = False  # the output ended inside a structure (a call, the reasoning, ...)
        self.engine_length = False  # the engine said it stopped at its token limit
        self._ids: set[str] = set()
        self._call: Call | None = None
        # A name written before its call's opener (gpt-oss's header recipient, `to=functions.NAME`,
        # comes before the header's channel): it names the call that opens next.
        self._named_ahead: list[str] = []
        self._handlers: dict[str, Callable[[str], None]] = {
            "REASONING": self._on_reasoning,
            "CONTENT": self._on_content,
            "CALL_OPEN": self._on_call_open,
            "CALL_CLOSE": self._on_call_close,
            "CALL_ID": self._on_call_id,
            "BAD_CALL_ID": self._on_call_id,
            "CALL_NAME": self._on_call_name,
            "TOOL_NAME": self._on_name,
            "FUNC_NAME": self._on_name,
        }

    def token(self, terminal: str, text: str, inserted: bool = False) -> None:
        """A token the parser accepted (``inserted``: a missing marker the repair supplied)."""
        call = self._call
        if call is not None:
            if not call.started:
                call.raw.append(text)
            if terminal in self._arguments.terminals:
                (call.arguments or self._reader(call, terminal, inserted)).token(terminal, text, inserted)
                return
        handler = self._handlers.get(terminal)
        if handler is not None:
            handler(text)

    def run_handler(self, terminal: str) -> Callable[[str], None]:
        """What to call with each further chunk of a run of free text just begun — the hot path
        of streaming, so the common cases skip ``token``'s dispatch."""
        call = self._call
        if call is not None and not call.started:
            return self._until_started(call, terminal)
        if call is not None and call.arguments is not None:
            sink = call.arguments.run_sink(terminal)
            if sink is not None:
                return sink
        handler = self._handlers.get(terminal)
        return handler if handler is not None else (lambda text: self.token(terminal, text))

    def _until_started(self, call: Call, terminal: str) -> Callable[[str], None]:
        """A run that began before its call was announced (Qwen's call object, whose name is in
        its own text): each piece through ``token`` (the call's raw text is still kept) until the
        reader has announced the call; from then on, through the reader's run sink, if it has one."""
        sink: Callable[[str], None] | None = None

        def handler(text: str) -> None:
            nonlocal sink
            if sink is not None:
                sink(text)
                return
            self.token(terminal, text)
            if call.started and call.arguments is not None and self._call is call:
                sink = call.arguments.run_sink(terminal)

        return handler

    def reacts_to(self, terminal: str) -> bool:
        """Whether a token of ``terminal`` changes what the builder holds (a call, an argument)."""
        return terminal in self._handlers or terminal in self._arguments.terminals

    @property
    def in_call(self) -> bool:
        """Whether a call is open (announced and not yet ended)."""
        return self._call is not None

    @property
    def call_pending(self) -> bool:
        """A call is open and its name is not complete yet (nothing of it was emitted)."""
        return self._call is not None and not self._call.started

    def abandon_call(self) -> None:
        """The open, unannounced call was not a call after all: its text becomes content."""
        if self._call is not None:
            raw, self._call = "".join(self._call.raw), None
            self._on_content(raw)

    def keep_raw(self, text: str) -> None:
        """Text the grammar skips (white space between tokens): a call not yet announced keeps
        it, so that if the call is taken back its text comes back whole."""
        if self._call is not None and not self._call.started:
            self._call.raw.append(text)

    def give_back(self, count: int) -> None:
        """The last ``count`` characters the open call was given are not its (its reader ended
        its run before them: ``ArgumentContext.end``): a call not yet announced keeps only its
        own text, in case it is taken back."""
        call = self._call
        if call is not None and not call.started and count > 0:
            raw = "".join(call.raw)
            call.raw = [raw[:-count]]

    def stray(self, text: str) -> None:
        """Text the grammar has no place for: it stays visible, as content."""
        self._on_content(text)

    @property
    def arguments_complete(self) -> bool:
        """Whether the open call has begun its arguments and they are whole (no key, value or
        container open): only its closing marker is missing, were it to end here."""
        call = self._call
        return call is not None and call.arguments is not None and call.arguments.complete

    def room(self, wanted: int) -> int:
        """How many more characters of JSON the open call may write before its arguments pass
        ``max_argument_chars`` (what its reader holds unwritten counted at its longest);
        ``sys.maxsize`` when no call is open. What a lazy emitter left unwritten is counted
        exactly only when its bound would leave less than ``wanted``."""
        call = self._call
        if call is None:
            return sys.maxsize
        held = call.arguments.held if call.arguments is not None else 0
        room = self.limits.max_argument_chars - call.size - LONGEST_ESCAPE * held
        if call.emitter.unwritten_bound > room - wanted:
            call.size += call.emitter.settle()
            room = self.limits.max_argument_chars - call.size - LONGEST_ESCAPE * held
        return room - call.emitter.unwritten_bound - call.emitter.prefix_bound

    def close(self) -> None:
        """The output ended inside a structure: a call cut off midway keeps what arrived, as
        the truncated call (never as a call to run)."""
        self.cut_off = True
        self.cut_call()
        if self._named_ahead:  # a name no call took (the output ended in the header): text
            self._on_content("".join(self._named_ahead))
            self._named_ahead = []

    def end_call_at_end(self) -> None:
        """The output ended after a call's arguments where the grammar lets it end (a call with
        no closing marker of its own, Llama 3's bare ``{"name": …}`` object): it is finished."""
        if self._call is not None:
            self._end_call(self._call, truncated=False)

    def cut_call(self, read_again: bool = False) -> None:
        """The open call ends here unfinished — the output ended, or a marker that cannot stand
        inside a call came first: it is the truncated call, never a call to run. A call whose
        name is not complete emitted nothing: its text is content. ``read_again``: the parser
        goes back to before the call's opener, so a name written before it names the next."""
        call = self._call
        if call is None:
            return
        if read_again and call.ahead:
            self._named_ahead = list(call.ahead)
        if not call.started:
            self.abandon_call()
            return
        self._end_call(call, truncated=True)

    def message(self, diagnostics: tuple[Diagnostic, ...] = (), ended: bool = False) -> AssistantMessage:
        """The message so far (empty reasoning or content is ``None``); ``ended``: the output is
        complete, so say how it finished."""
        finish: FinishReason | None = None
        if ended:
            # "length" whenever a call was begun and not finished (cut off, or stopped at a
            # limit), or the engine says it stopped at its token limit: never "stop" or
            # "tool_calls" for a reply that holds a call nobody may run.
            unfinished = self.cut_off or self._incomplete or self.engine_length
            finish = "length" if unfinished else "tool_calls" if self._calls else "stop"
        # Built from values this module made (validated types): no second validation per parse.
        content, reasoning, tool_calls = (
            "".join(self._content) or None,
            "".join(self._reasoning) or None,
            tuple(self._calls),
        )
        return built(
            AssistantMessage,
            {
                "role": "assistant",
                "content": content,
                "reasoning": reasoning,
                "tool_calls": tool_calls,
                "finish_reason": finish,
                "truncated_call": self._truncated,
                "incomplete_calls": tuple(self._incomplete),
                "diagnostics": diagnostics,
            },
            {"_parsed": (content, reasoning, tool_calls)},  # the model's own output (is_model_output)
        )

    def _reasoning_event(self, text: str) -> None:
        if text:
            self._reasoning.append(text)
            self.events.append(ReasoningDelta(text))

    def _content_event(self, text: str) -> None:
        if text:
            self._content.append(text)
            self.events.append(ContentDelta(text))

    def _on_call_open(self, text: str) -> None:
        self._call = Call(len(self._calls) + len(self._incomplete), text, self._lazy)  # every announced call
        if self._named_ahead:  # its text too, were the call taken back
            self._call.raw[:0] = self._call.ahead = self._named_ahead
            self._call.name_parts = list(self._named_ahead)
            self._named_ahead = []

    def _on_call_id(self, text: str) -> None:
        if self._call is not None:
            self._call.id_parts.append(text)

    def _on_call_name(self, text: str) -> None:
        """The id is complete (Solar): a format that carries ids must give one."""
        if self._call is not None and not "".join(self._call.id_parts).strip():
            self._report("missing_call_id", "a call without an id; a new one is made")

    def _on_name(self, text: str) -> None:
        if self._call is None:
            self._named_ahead.append(text)
        elif not self._call.started:
            self._call.name_parts.append(text)

    def _reader(self, call: Call, terminal: str, inserted: bool) -> ArgumentReader:
        """The call's argument reader; its first token starts the call (the name is complete)."""
        if call.arguments is None:
            context = ArgumentContext(
                emitter=call.emitter,
                schema_of=lambda key: property_schema(call.parameters, key),
                tool_names=lambda: tool_names(self._tools),
                report=self._report,
                delta=self._delta_of(call),
                content=self._on_content,
                limits=self.limits,
                stop=self._request_stop,
                string_sink=lambda held=None: self._string_sink(call, held),
                parameters=lambda: call.parameters,
                start=lambda name, at=0: self._named(call, name, at),
                call_id=lambda: "".join(call.id_parts),
                end=self._request_end,
            )
            call.arguments = self._arguments(context)
            if not call.started:
                name = call.arguments.name("".join(call.name_parts), terminal, inserted)
                if name is None:  # the reader reads the name from its own text, then calls ``start``
                    return call.arguments
                call.name_parts = [name]
            self._start(call)
        return call.arguments

    def _named(self, call: Call, name: str, at: int) -> None:
        """The reader read the call's name from the arguments text (Qwen's JSON call object),
        ``at`` characters into the piece being read: announce the call."""
        if not call.started:
            call.name_parts = [name]
            self._start(call, at)

    def _delta_of(self, call: Call) -> Callable[[str], None]:
        """Where a call's fragments go: out as events, and counted against the size limit (one
        closure per call, one call per fragment: Solar's JSON sends many)."""
        index, emitter, limit = call.index, call.emitter, self.limits.max_argument_chars

        def count(fragment: str) -> None:  # no events: the fragment is only counted
            call.size += len(fragment)
            if call.size + emitter.unwritten_bound > limit:
                self._check_size(call)

        if self._lazy:
            return count

        def delta(fragment: str) -> None:  # the emitter writes every fragment: none is unwritten
            if fragment:
                self.events.append(ToolCallDelta(index, fragment))
                call.size += len(fragment)
                if call.size > limit:
                    self._check_size(call)

        return delta

    def _string_sink(self, call: Call, held: HeldText | None = None) -> Callable[[str], None]:
        """The hot path of streaming: more text of the call's open string value, as one delta
        (every name it needs bound here, once per run; ``self.events`` is replaced at each
        drain, so it is read at each call). ``held``: the reader's say over the text first (a
        piece ending in one of ``held.ends``, or any while it holds a tail, goes to
        ``held.write``), asked in the same call, so the common piece costs no call more."""
        emitter, index, limit = call.emitter, call.index, self.limits.max_argument_chars
        if self._lazy:  # no events; the text is escaped (``string_part``) only when counted
            count, part = self._delta_of(call), emitter.string_part

            def written(text: str) -> None:
                count(part(text))

            return written if held is None else lambda text: held.write(text, written)
        write = emitter.string_chunk
        # An emitter that writes every fragment leaves nothing unwritten (its ``unwritten_bound``
        # stays 0), so the size test below is ``call.size > limit`` alone.

        def sink(text: str) -> None:
            fragment = write(text)
            self.events.append(ToolCallDelta(index, fragment))
            call.size += len(fragment)
            if call.size > limit:
                self._check_size(call)

        if held is None:
            return sink
        ends = held.ends

        def held_sink(text: str) -> None:  # ``sink``, written out behind the reader's question
            # ``text[-1]``, not ``[-1:]``: a run's piece is never empty, and indexing builds no
            # slice (this test runs once per streamed piece of a string)
            if text[-1] in ends or held.tail:
                held.write(text, sink)
                return
            fragment = write(text)
            self.events.append(ToolCallDelta(index, fragment))
            call.size += len(fragment)
            if call.size > limit:
                self._check_size(call)

        return held_sink

    def _check_size(self, call: Call) -> None:
        """The call's arguments may be past the limit: count what the emitter left unwritten
        (``lazy``), then see. A lazy parse stops a call exactly where one that writes every
        fragment does: at each fragment, its JSON so far is at most the bound."""
        call.size += call.emitter.settle()
        if call.size > self.limits.max_argument_chars and self.stop_request is None:
            self._request_stop("too_large", f"arguments longer than {self.limits.max_argument_chars} characters")

    def _request_stop(self, code: str, detail: str, at: int = 0) -> None:
        self.stop_request = (code, detail, at)

    def _request_end(self, at: int) -> None:
        self.run_end = at

    @property
    def calls_finished(self) -> int:
        """How many calls have finished (the ``max_calls`` limit counts these)."""
        return len(self._calls)

    def stop_call(self) -> None:
        """End the open call unfinished (a limit was reached): it is not a call to run."""
        if self._call is not None:
            self._end_call(self._call, truncated=True, cut_off=False)
        self.stop_request = None  # after: the call's last characters must not stop the next one

    def _start(self, call: Call, at: int = 0) -> None:
        """The name is complete: announce the call (once)."""
        if call.started:
            return
        call.started = True
        name = "".join(call.name_parts)
        call.name = name.strip()
        if call.name != name:
            self._report("tool_name_whitespace", f"white space around tool name {call.name!r}", at)
        call.parameters = tool_schema(self._tools, call.name) if self._tools else None
        if self._tools and call.parameters is None:
            self._report("unknown_tool", f"call to {call.name!r}, a tool that was not offered", at)
        call.id = self._call_id(call)
        if not self._lazy:
            self.events.append(ToolCallStart(call.index, call.id, call.name))

    def _call_id(self, call: Call) -> str:
        written = "".join(call.id_parts).strip()
        if written in self._ids:
            self._report("repeated_call_id", f"call id {written!r} used twice; a new one is made")
            written = ""
        call_id = written or self._new_id(call.index)
        self._ids.add(call_id)
        return call_id

    def _on_call_close(self, text: str) -> None:
        if self._call is not None:
            if self._call.arguments is None and self._named_at_close and not self._call.started:
                self._reader(self._call, "CALL_CLOSE", False)  # no argument token came: the name reads them
            self._end_call(self._call, truncated=False)

    def _end_call(self, call: Call, truncated: bool, cut_off: bool = True) -> None:
        """Finish the call: ``truncated`` (unfinished) calls are kept apart, never to be run;
        ``cut_off``: by the end of the output (else by a limit)."""
        self._start(call)
        if not call.name and not truncated:  # nothing names a tool to run: not a call to execute
            self._report("missing_tool_name", "a call without a tool name is not a call to run")
            truncated, cut_off = True, False
        sent = len(self.events)
        if call.arguments is not None:
            call.arguments.finish(truncated)
        else:
            self._delta_of(call)(call.emitter.finish())
        if self.stop_request is not None and truncated:
            self.stop_request = None  # closing fragments that are never sent pass no limit
        elif self.stop_request is not None:  # its last characters passed a limit: the parser stops it
            truncated, cut_off = True, False
        if truncated and len(self.events) > sent:
            # The fragments that would close an unfinished call's JSON are never sent: what a
            # client joined stays invalid JSON, so no client can run it as a finished call.
            index = call.index
            kept = [event for event in self.events[sent:] if type(event) is not ToolCallDelta or event.index != index]
            self.events[sent:] = kept
        # The emitter built a plain dict within the depth limit: constructed, not re-validated.
        tool_call = built(ToolCall, {"id": call.id, "name": call.name, "arguments": call.emitter.value})
        if truncated:
            self._incomplete.append(tool_call)
            if cut_off:
                self._truncated = tool_call
        else:
            self._calls.append(tool_call)
        if not self._lazy:
            self.events.append(ToolCallEnd(call.index, tool_call, complete=not truncated))
        self._call = None
