"""Turns the tokens the parser accepted into events and, at the end, the assistant message.

The engine (``stream.py``) decides *whether* a token fits the grammar; this module decides
*what it means*, by terminal name. The names are the contract with ``grammars/*.lark``:
``REASONING`` / ``CONTENT`` text, ``CALL_OPEN`` ... ``CALL_CLOSE`` around a call, its
``CALL_ID`` and ``TOOL_NAME``, GLM's ``KEY_*`` / ``VALUE_*`` pairs, Solar's ``ARGS_JSON`` and
Gemma's value tokens (``values.py``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codec.arguments import is_plain_string, property_schema, tool_schema, type_text
from codec.events import (
    ContentDelta,
    Event,
    ReasoningDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from codec.jsonemit import ArgumentsEmitter
from codec.jsonstream import JsonArgumentsStream
from codec.models import AssistantMessage, ToolCall
from codec.values import GemmaValues

Report = Callable[[str, str], None]
"""``report(code, detail)``: a repaired deviation (a diagnostic, or an error when strict)."""

NAME_LIMIT = 256
"""Longest tool name or id kept in full; a longer one is not a name (cap header buffers)."""


def random_call_id(index: int) -> str:
    """The default id for formats whose calls carry none: ``call_`` and 24 random hex digits."""
    return "call_" + secrets.token_hex(12)


class _Call:
    """A tool call being parsed."""

    def __init__(self, index: int, opener: str) -> None:
        self.index = index
        self.raw = [opener]  # the call's text until it starts: kept as content if cut off there
        self.id_parts: list[str] = []
        self.name_parts: list[str] = []
        self.started = False
        self.id = ""
        self.name = ""
        self.parameters: Mapping[str, Any] | None = None
        self.emitter = ArgumentsEmitter()
        self.key_parts: list[str] = []
        self.key = ""
        self.key_pending = False  # a key is complete and its value has not begun
        self.value_parts: list[str] | None = None  # a buffered (non-string) GLM value
        self.value_schema: Mapping[str, Any] | None = None
        self.skip_value = False
        self.json: JsonArgumentsStream | None = None
        self.values: GemmaValues | None = None


class MessageBuilder:
    """Events and the final message for one completion."""

    def __init__(
        self, tools: Sequence[Mapping[str, Any]], id_factory: Callable[[int], str] | None,
        report: Report,
    ) -> None:
        self._tools = tools
        self._new_id = id_factory or random_call_id
        self._report = report
        self.events: list[Event] = []
        self._reasoning: list[str] = []
        self._content: list[str] = []
        self._calls: list[ToolCall] = []
        self._ids: set[str] = set()
        self._call: _Call | None = None
        self._handlers: dict[str, Callable[..., None]] = {
            "REASONING": self._on_reasoning, "CONTENT": self._on_content,
            "CALL_OPEN": self._on_call_open, "CALL_CLOSE": self._on_call_close,
            "CALL_ID": self._on_call_id, "BAD_CALL_ID": self._on_call_id,
            "CALL_NAME": self._on_call_name,
            "TOOL_NAME": self._on_name, "FUNC_NAME": self._on_name,
            "CALL_ARGS": self._on_args_open, "ARGS_JSON": self._on_args_json,
            "KEY_OPEN": self._on_key_open, "ARG_KEY": self._on_key, "KEY_CLOSE": self._on_key_close,
            "VALUE_OPEN": self._on_value_open, "ARG_VALUE": self._on_value,
            "VALUE_CLOSE": self._on_value_close,
        }

    def token(self, terminal: str, text: str, inserted: bool = False) -> None:
        """A token the parser accepted (``inserted``: a missing marker the repair supplied)."""
        call = self._call
        if call is not None and not call.started:
            call.raw.append(text)
        handler = self._handlers.get(terminal)
        if handler is not None:
            handler(text, inserted)
        elif call is not None and terminal in GemmaValues.TERMINALS:
            self._gemma(call).token(terminal, text)

    def run_handler(self, terminal: str) -> Callable[[str], None]:
        """What to call with each further chunk of a run of free text just begun — the hot path
        of streaming, so the common cases skip ``token``'s dispatch."""
        call = self._call
        if call is not None and not call.started:
            return lambda text: self.token(terminal, text)  # the call's raw text is still kept
        if call is not None and call.emitter.in_string and (
            (terminal == "ARG_VALUE" and call.value_parts is None)
            or (terminal == "STRING_TEXT" and call.values is not None and call.values.streaming)
        ):
            emitter, index = call.emitter, call.index  # (self.events is replaced at each drain)
            return lambda text: self.events.append(ToolCallDelta(index, emitter.string_chunk(text)))
        handler = self._handlers.get(terminal)
        return handler if handler is not None else (lambda text: self.token(terminal, text))

    @property
    def call_pending(self) -> bool:
        """A call is open and its name is not complete yet (nothing of it was emitted)."""
        return self._call is not None and not self._call.started

    def abandon_call(self) -> None:
        """The open, unannounced call was not a call after all: its text becomes content."""
        if self._call is not None:
            raw, self._call = "".join(self._call.raw), None
            self._on_content(raw, False)

    def stray(self, text: str) -> None:
        """Text the grammar has no place for: it stays visible, as content."""
        self._on_content(text, False)

    def close(self) -> None:
        """The output ended: finish a call cut off midway with what arrived."""
        call = self._call
        if call is None:
            return
        if not call.started:
            self.abandon_call()
            return
        # A key whose value never came is not an argument (never invent one); its text stays.
        self._on_content("".join(call.key_parts) or (call.key if call.key_pending else ""), False)
        if call.values is not None and call.values.dangling_key is not None:
            self._on_content(call.values.dangling_key, False)
        self._finish_value(call, truncated=True)
        self._on_call_close("", True)

    def message(self) -> AssistantMessage:
        """The message so far (empty reasoning or content is ``None``)."""
        return AssistantMessage(
            content="".join(self._content) or None,
            reasoning="".join(self._reasoning) or None,
            tool_calls=tuple(self._calls),
        )

    def _on_reasoning(self, text: str, inserted: bool = False) -> None:
        if text:
            self._reasoning.append(text)
            self.events.append(ReasoningDelta(text))

    def _on_content(self, text: str, inserted: bool = False) -> None:
        if text:
            self._content.append(text)
            self.events.append(ContentDelta(text))

    def _on_call_open(self, text: str, inserted: bool = False) -> None:
        self._call = _Call(len(self._calls), text)

    def _on_call_id(self, text: str, inserted: bool = False) -> None:
        if self._call is not None:
            self._call.id_parts.append(text)

    def _on_call_name(self, text: str, inserted: bool = False) -> None:
        """The id is complete (Solar): a format that carries ids must give one."""
        if self._call is not None and not "".join(self._call.id_parts).strip():
            self._report("missing_call_id", "a call without an id; a new one is made")

    def _on_name(self, text: str, inserted: bool = False) -> None:
        if self._call is not None and not self._call.started:
            self._call.name_parts.append(text)

    def _delta(self, call: _Call, fragment: str) -> None:
        if fragment:
            self.events.append(ToolCallDelta(call.index, fragment))

    def _start(self, call: _Call) -> None:
        """The name is complete: announce the call (once)."""
        if call.started:
            return
        call.started = True
        name = "".join(call.name_parts)
        call.name = name.strip()
        if call.name != name:
            self._report("tool_name_whitespace", f"white space around tool name {call.name!r}")
        call.parameters = tool_schema(self._tools, call.name) if self._tools else None
        if self._tools and call.parameters is None:
            self._report("unknown_tool", f"call to {call.name!r}, a tool that was not offered")
        call.id = self._call_id(call)
        self.events.append(ToolCallStart(call.index, call.id, call.name))

    def _call_id(self, call: _Call) -> str:
        written = "".join(call.id_parts).strip()
        if written in self._ids:
            self._report("repeated_call_id", f"call id {written!r} used twice; a new one is made")
            written = ""
        call_id = written or self._new_id(call.index)
        self._ids.add(call_id)
        return call_id

    def _on_call_close(self, text: str, inserted: bool = False) -> None:
        call = self._call
        if call is None:
            return
        self._start(call)
        if call.json is not None:
            fragment, complete = call.json.close()
            if not complete:
                self._report("incomplete_arguments", "the arguments JSON was cut short")
                self._on_content(call.json.unconsumed, False)
        else:
            fragment = call.emitter.finish()
        self._delta(call, fragment)
        tool_call = ToolCall(id=call.id, name=call.name, arguments=call.emitter.value)
        self._calls.append(tool_call)
        self.events.append(ToolCallEnd(call.index, tool_call))
        self._call = None

    def _on_args_open(self, text: str, inserted: bool = False) -> None:
        call = self._call
        if call is not None:
            self._start(call)
            call.json = JsonArgumentsStream(call.emitter, self._schema_lookup(call))

    def _on_args_json(self, text: str, inserted: bool = False) -> None:
        call = self._call
        if call is None or call.json is None:
            return
        fragment, rejected = call.json.feed(text)
        self._delta(call, fragment)
        for dropped in call.json.dropped:
            self._report("duplicate_key", "an argument given twice; the first is kept")
            self._on_content(dropped, False)
        call.json.dropped.clear()
        if rejected:
            self._report("invalid_arguments", "arguments text that is not JSON is kept as content")
            self._on_content(rejected, False)

    def _schema_lookup(self, call: _Call) -> Callable[[str], Mapping[str, Any] | None]:
        return lambda key: property_schema(call.parameters, key)

    def _on_key_open(self, text: str, inserted: bool = False) -> None:
        call = self._call
        if call is None:
            return
        if inserted and not call.started:
            self._split_glued_key(call)
        self._start(call)

    def _split_glued_key(self, call: _Call) -> None:
        """``<tool_call>get_weathercity</arg_key>``: the opener was lost; the tool list tells
        where the name ends and the key begins."""
        glued = "".join(call.name_parts)
        names = [tool_name for tool_name in _tool_names(self._tools)
                 if glued.startswith(tool_name) and len(glued) > len(tool_name)]
        if names:
            name = max(names, key=len)
            call.name_parts = [name]
            call.key_parts = [glued[len(name):]]

    def _on_key(self, text: str, inserted: bool = False) -> None:
        if self._call is not None:
            self._call.key_parts.append(text)

    def _on_key_close(self, text: str, inserted: bool = False) -> None:
        call = self._call
        if call is not None:
            call.key = "".join(call.key_parts)
            call.key_parts = []
            call.key_pending = True

    def _on_value_open(self, text: str, inserted: bool = False) -> None:
        call = self._call
        if call is None:
            return
        self._start(call)
        call.key_pending = False
        call.skip_value = call.emitter.has_key(call.key)
        if call.skip_value:
            self._report("duplicate_key", f"argument {call.key!r} given twice; the first is kept")
            call.value_parts = []
            return
        call.value_schema = property_schema(call.parameters, call.key)
        call.emitter.key(call.key)
        if is_plain_string(call.value_schema):
            call.value_parts = None
            self._delta(call, call.emitter.begin_string())
        else:
            call.value_parts = []

    def _on_value(self, text: str, inserted: bool = False) -> None:
        call = self._call
        if call is None:
            return
        if call.value_parts is not None:
            call.value_parts.append(text)
        elif call.emitter.in_string:
            self._delta(call, call.emitter.string_chunk(text))

    def _on_value_close(self, text: str, inserted: bool = False) -> None:
        if self._call is not None:
            self._finish_value(self._call, truncated=False)

    def _finish_value(self, call: _Call, truncated: bool) -> None:
        if call.skip_value:
            call.skip_value = False
            self._on_content("".join(call.value_parts or ()), False)
        elif call.value_parts is not None:
            text = "".join(call.value_parts)
            self._delta(call, call.emitter.value_complete(type_text(text, call.value_schema)))
        elif call.emitter.in_string and call.emitter.depth == 1:
            self._delta(call, call.emitter.end_string())
        call.value_parts = None

    def _gemma(self, call: _Call) -> GemmaValues:
        if call.values is None:
            self._start(call)
            call.values = GemmaValues(
                call.emitter, self._schema_lookup(call), self._report,
                lambda fragment: self._delta(call, fragment), self.stray,
            )
        return call.values


def _tool_names(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    names = []
    for tool in tools:
        function = tool.get("function", tool)
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names
