"""Builds a tool call's arguments and, at the same time, the JSON text that streams out for them.

Every format drives one ``ArgumentsEmitter``: GLM with raw key/value text, Gemma with the tokens
of its value syntax, Solar with an incremental JSON tokenizer. Each method returns the fragment
of JSON text it adds, and the emitter builds the Python value alongside, so by construction::

    "".join(fragments) == json.dumps(emitter.value, ensure_ascii=False)

which is ``ToolCall.arguments_json`` — the invariant that lets a streaming client concatenate
``ToolCallDelta.arguments`` and get exactly what a whole parse gives. Strings stream one chunk at
a time (escaped as ``json.dumps`` escapes them); everything else is emitted when complete.

A lazy emitter (``Codec.parse``: nobody reads its fragments) leaves the long ones unwritten and
keeps only a bound on their length, counted exactly when a size limit needs it (``settle``).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

LONGEST_ESCAPE = 6
"""A character takes at most six in JSON (``\\u001f``); an item read from JSON text is at most
six times as long written again (a digit of ``1e5`` gives ``100000.0``: eight for three)."""

# ``json.dumps(value, ensure_ascii=False)``, its encoder made once: ``json.dumps`` makes a new one
# per call whenever an option differs from its defaults.
_DUMPS = json.JSONEncoder(ensure_ascii=False).encode

# What ``json.dumps(text, ensure_ascii=False)`` runs for a string, without its Python frames:
# strings stream out one chunk per feed, so this is on the streaming hot path.
_ENCODE = encode_basestring

_WORDS = {True: "true", False: "false", None: "null"}


def dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``. A string, an integer, a boolean or ``None``
    is written as the encoder writes it, without the encoder's set-up for each value (most
    arguments are one of these)."""
    kind = type(value)
    if kind is str:
        return _ENCODE(value)
    if kind is int:
        return int.__repr__(value)
    if kind is bool or value is None:
        return _WORDS[value]
    return _DUMPS(value)


def escape(text: str) -> str:
    """``text`` escaped for the inside of a JSON string, exactly as ``json.dumps`` escapes it."""
    return _ENCODE(text)[1:-1]


class _Container:
    """An open object or array, with what has been put into it."""

    __slots__ = ("first", "key", "value")

    def __init__(self, value: dict[str, Any] | list[Any]) -> None:
        self.value = value
        self.first = True
        self.key: str | None = None


class ArgumentsEmitter:
    """The arguments object of one call, built and serialised member by member.

    The top level is always an object; ``begin_object`` for it is implicit and ``finish`` closes
    everything still open, so a call cut off mid-value still yields valid JSON for what arrived.
    """

    def __init__(self, lazy: bool = False) -> None:
        self.value: dict[str, Any] = {}
        self._stack: list[_Container] = [_Container(self.value)]
        self._string: list[str] | None = None
        self._started = False
        # ``lazy``: nobody reads the fragments (a whole parse), so the long ones — string text
        # (``string_part``) and whole values (``take``) — are not written out: their JSON
        # length, which a size limit needs, is bounded until ``settle`` counts it.
        self._lazy = lazy
        self._unwritten: list[Any] = []
        self.unwritten_bound = 0  # the JSON of ``_unwritten`` is at most this many characters

    @property
    def depth(self) -> int:
        """How many containers are open (1 at the top level)."""
        return len(self._stack)

    @property
    def in_string(self) -> bool:
        """Whether a string value is being streamed."""
        return self._string is not None

    def has_key(self, key: str) -> bool:
        """Whether the innermost open object already holds ``key`` (a duplicate cannot be
        emitted: the JSON text and the dict would disagree)."""
        top = self._stack[-1].value
        return isinstance(top, dict) and key in top

    def key(self, key: str) -> None:
        """Name the next member of the innermost open object. Nothing is emitted until its value
        starts, so a call cut off between a key and its value leaves valid JSON behind."""
        self._stack[-1].key = key

    @property
    def prefix_bound(self) -> int:
        """At most how many characters go before the next value (``_item_prefix``): ``{``, ``, ``
        and a named key not yet written (``key`` writes nothing until its value starts). A size
        limit's room counts them, or the value's first character would write more than it."""
        top = self._stack[-1]
        if isinstance(top.value, list):
            return 3
        return 3 + 2 + LONGEST_ESCAPE * len(top.key or "") + 2

    def value_complete(self, value: Any) -> str:
        """A whole value (scalar, or a nested object/array already built)."""
        fragment = self._item_prefix()
        self._store(value)
        return fragment + dumps(value)

    def begin_string(self) -> str:
        """Start a string value whose text will come in chunks."""
        fragment = self._item_prefix()
        self._string = []
        return fragment + '"'

    def string_chunk(self, text: str) -> str:
        """More text of the open string value."""
        if self._string is None:
            raise RuntimeError("string_chunk outside a string")  # engine bug, not input
        self._string.append(text)
        return _ENCODE(text)[1:-1]  # ``escape``, written out: the streaming hot path

    def string_part(self, text: str) -> str:
        """More text of the open string value: its fragment, or nothing when lazy."""
        if not self._lazy:
            return self.string_chunk(text)
        if self._string is None:
            raise RuntimeError("string_part outside a string")  # engine bug, not input
        self._string.append(text)
        self._unwritten.append(text)
        self.unwritten_bound += LONGEST_ESCAPE * len(text)
        return ""

    def take(self, value: dict[str, Any], written: int) -> str:
        """Take ``value`` as the whole arguments, read at once from ``written`` characters of
        JSON before anything else: the fragment for all of it but its last ``}`` (``finish``
        writes that), or nothing when lazy (each character read is at most ``LONGEST_ESCAPE``
        characters of JSON again)."""
        self.value.update(value)
        self._started = True
        if not self._lazy:
            return dumps(value)[:-1]
        self._unwritten.append(value)
        self.unwritten_bound += LONGEST_ESCAPE * written
        return ""

    def settle(self) -> int:
        """How many characters of JSON what was left unwritten holds (counted once)."""
        # A string is a value's text; a dict, arguments taken whole, written but for their ``}``.
        size = sum(len(escape(item)) if isinstance(item, str) else len(dumps(item)) - 1 for item in self._unwritten)
        self._unwritten.clear()
        self.unwritten_bound = 0
        return size

    def end_string(self) -> str:
        """Close the open string value."""
        if self._string is None:
            raise RuntimeError("end_string outside a string")  # engine bug, not input
        self._store("".join(self._string))
        self._string = None
        return '"'

    def begin_container(self, container: dict[str, Any] | list[Any]) -> str:
        """Open a nested object (``{}``) or array (``[]``) as the next value."""
        fragment = self._item_prefix()
        self._store(container)
        self._stack.append(_Container(container))
        return fragment + ("{" if isinstance(container, dict) else "[")

    def end_container(self) -> str:
        """Close the innermost nested object or array (never the top level)."""
        if len(self._stack) == 1:
            return ""
        closed = self._stack.pop()
        return "}" if isinstance(closed.value, dict) else "]"

    def finish(self) -> str:
        """Close whatever is open, the top level last; the emitter is done."""
        fragment = self._open()
        if self._string is not None:
            fragment += self.end_string()
        while len(self._stack) > 1:
            fragment += self.end_container()
        return fragment + "}"

    def replace(self, value: dict[str, Any], sent: str) -> str | None:
        """Take ``value`` as the whole arguments, read afresh (a lenient second reading of text
        the streaming one refused): the fragment that completes it, when the JSON sent so far
        (``sent``) begins its JSON; else ``None`` and nothing changes. The emitter is then done."""
        text = dumps(value)
        if not text.startswith(sent):
            return None
        self.value.clear()
        self.value.update(value)
        self._stack = [_Container(self.value)]
        self._string = None
        self._started = True
        return text[len(sent) :]

    def _open(self) -> str:
        if self._started:
            return ""
        self._started = True
        return "{"

    def _item_prefix(self) -> str:
        """What goes before the next value: ``{`` if nothing was written yet (``_open``), then
        ``, `` after an earlier item, and an object member's key (one call: once per value)."""
        opening = "" if self._started else self._open()
        top = self._stack[-1]
        if top.first:
            top.first = False
            separator = opening
        else:
            separator = opening + ", "
        if isinstance(top.value, list):
            return separator
        return separator + _ENCODE(top.key if top.key is not None else "") + ": "

    def _store(self, value: Any) -> None:
        top = self._stack[-1]
        if isinstance(top.value, list):
            top.value.append(value)
        else:
            top.value[top.key if top.key is not None else ""] = value
