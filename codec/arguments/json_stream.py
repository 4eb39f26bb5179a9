"""Solar Open's JSON arguments, tokenized as they stream, driving an ``ArgumentsEmitter``.

Solar writes ``<|tool_call:args|>{"path": "a.py", "text": "..."}<|tool_call:end|>`` and the JSON
arrives in pieces of any size. String values stream out as their text arrives — escapes decoded,
only an incomplete escape (at most ``\\uD83D\\uDE0`` : 11 characters) held back — and every
character is examined a bounded number of times, so a 50 KB argument costs O(chunk) per feed.
Numbers, ``true``/``false``/``null`` are held until their delimiter, then emitted whole.

The states and what may follow each are one table (``_TABLE``); a character the table lacks is
where the text stops being JSON: from there on everything is ``rejected`` (the caller keeps it as
content), together with any text consumed since the last fragment went out, so nothing is lost.

Longer than ~300 lines: one state machine — its table, its handlers and the decoding helpers
they share; split up, the table and its handlers would live apart.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from codec.arguments.emitter import ArgumentsEmitter
from codec.arguments.schema import is_plain_string

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_STRING_RUN = re.compile(r'[^"\\]*')
# Text inside a string: characters and complete escapes (group 1, ending in group 2), then
# perhaps the beginning of one more escape (group 3).
_STRING_CHUNK = re.compile(r'((?:[^"\\]|(\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}))*)(\\(?:u[0-9a-fA-F]{0,3})?)?')
_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LITERAL_RUN = re.compile(r"[0-9A-Za-z+\-.]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# ``json.dumps`` writes these for non-finite floats; accepting them keeps its output readable.
_WORDS = frozenset({"true", "false", "null", "NaN", "Infinity", "-Infinity"})
_NOT_JSON_NUMBERS = frozenset({"NaN", "Infinity", "-Infinity"})
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = frozenset("0123456789abcdefABCDEF")
_OPENER = {"}": "{", "]": "["}
_MISSING: Any = object()
_scanstring: Any = getattr(json.decoder, "scanstring")  # noqa: B009 - the C scanner; untyped in the stubs
_NEED_MORE = ("", 0)
_INVALID = ("", -1)


class _State(enum.Enum):
    """Where in the JSON the next character falls."""

    START = "before the opening {"
    FIRST_KEY = "after {: a key or }"
    KEY = "after , in an object: a key"
    KEY_STRING = "inside a key"
    COLON = "after a key: a colon"
    VALUE = "a value"
    FIRST_ITEM = "after [: a value or ]"
    AFTER_VALUE = "after a value: , or a closing bracket"
    STRING = "inside a string value"
    LITERAL = "inside a number, true, false or null"
    DONE = "after the closing }: white space only"


_AWAITING_VALUE = frozenset({_State.COLON, _State.VALUE, _State.LITERAL})
"""Where a member's key is named and not yet written: until its value starts (a number or
word is written whole, when it ends)."""


# The states the per-chunk checks compare with, as plain names: an enum member's lookup through
# its class costs several times a name's.
_STRING = _State.STRING
_START = _State.START


class JsonArgumentsStream:
    """One call's arguments JSON, fed in chunks; ``feed`` returns what to stream out.

    ``failed`` turns true at the first character that cannot continue the JSON, and stays true;
    ``duplicates`` names the keys repeated within one object, whose later values were dropped
    (the dict and the text could not both hold them); ``examined`` counts characters looked at.
    """

    def __init__(
        self,
        emitter: ArgumentsEmitter,
        schema_for_key: Callable[[str], Mapping[str, Any] | None] = lambda key: None,
        max_depth: int = 64,
    ) -> None:
        self._emitter = emitter
        self._max_depth = max_depth
        self.too_deep = False  # failed at an opening bracket past ``max_depth``
        self._schema_for_key = schema_for_key
        self._state = _State.START
        self._stack: list[str] = []  # "{" or "[" per open container, the top-level object first
        self._key: list[str] = []
        self._named = 0  # characters of the last key named, written only when its value starts
        self._pieces: list[str] = []  # decoded string text not yet given to the emitter
        self._escape = ""  # an escape cut off by the end of a chunk, from its backslash
        self._literal: list[str] = []
        self._plain = False  # the current top-level member's schema says "always a string"
        self._skip = 0  # stack depth of a duplicate member whose value is dropped; 0: none
        self._held: list[str] = []  # text of earlier chunks consumed but not yet reflected
        self._finished = False
        self._text = ""
        self._mark = 0  # start of this chunk's text not yet reflected in a fragment
        self._out: list[str] = []
        self.failed = False
        self.taken = False  # the whole object was read at once (``_whole_object``)
        self.duplicates: list[str] = []
        self.examined = 0
        self.unconsumed = ""
        self.dropped: list[str] = []  # the text of each duplicate member whose value was left out
        # where each dropped text starts, in characters from the start of the text fed last
        # (negative: it began in an earlier chunk), so its diagnostic points at it however chunked
        self.dropped_at: list[int] = []

    @property
    def held(self) -> int:
        """Characters of a key or a number or word read and not yet written (a fragment is
        written when it ends), and of a key named whose value has not started (the emitter
        writes it with the value: ``, "key": {``)."""
        named = self._named if self._state in _AWAITING_VALUE and self._stack[-1:] == ["{"] else 0
        return sum(map(len, self._key)) + sum(map(len, self._literal)) + named

    @property
    def closed(self) -> bool:
        """The top-level object was closed (text after it may have been refused since)."""
        return self._state is _State.DONE

    @property
    def done(self) -> bool:
        """The top-level object was closed and everything before it was JSON."""
        return self._state is _State.DONE and not self.failed

    def string_text(self, text: str) -> str | None:
        """The fragment for ``text`` when it is more of a string value and nothing else (the
        common chunk: then nothing is rejected or dropped), else ``None`` and nothing changes:
        ``feed`` reads it. Plain text, or escapes — the last perhaps cut off: held, as the
        character-by-character reading holds it."""
        if self._state is not _STRING or self._skip or self.failed:
            return None
        if not self._escape and '"' not in text and "\\" not in text:  # no quote, no escape
            self.examined += len(text)
            if self._held:
                self._held.clear()
            return self._emitter.string_chunk(text)
        inside = _inside_string(self._escape + text)
        if inside is None:
            return None
        decoded, self._escape = inside
        self.examined += len(text)
        self._held.clear()
        if self._escape:
            self._held.append(self._escape)
        return self._emitter.string_chunk(decoded) if decoded else ""

    def feed(self, text: str) -> tuple[str, str]:
        """``(JSON fragment, rejected text)`` for the next piece of the arguments text."""
        if self.failed:
            return "", text
        fragment = self.string_text(text)
        if fragment is not None:
            return fragment, ""
        if self._state is _START and text.endswith("}"):
            whole = self._whole_object(text)
            if whole is not None:
                return whole, ""
        self._text, self._mark, self._out = text, 0, []
        position = 0
        while position < len(text) and not self.failed:
            step = _HANDLERS[self._state](self, position)
            self.examined += step - position + 1
            position = step
        self._flush()
        if self.failed:
            rejected = "".join(self._held) + text[self._mark :]
            self._held = []
            return "".join(self._out), rejected
        if self._mark < len(text):
            self._held.append(text[self._mark :])
            self._mark = len(text)  # held now: a value that ``close`` ends must not take it twice
        return "".join(self._out), ""

    def _whole_object(self, text: str) -> str | None:
        """The fragment for ``text`` when it is the whole arguments object, read at once by
        ``json.loads`` (a whole parse gives it in one piece): exactly what reading it character
        by character gives, or ``None`` — then it is read so — wherever the two could differ: a
        duplicate key, ``NaN`` or ``Infinity`` (kept as text), nesting past the limit, or a
        number where the schema wants a string (its text is kept)."""
        try:
            value = _DECODE_WHOLE(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict) or _nests_deeper_than(value, self._max_depth):
            return None
        for key, member in value.items():
            if not isinstance(member, (str, dict, list)) and is_plain_string(self._schema_for_key(key)):
                return None
        self.examined += len(text)
        self._state, self.taken = _State.DONE, True
        return self._emitter.take(value, len(text))

    def close(self) -> tuple[str, bool]:
        """The closing fragment, and whether the JSON arrived whole and well-formed."""
        self._out = []  # string text went out with each feed; a cut-off escape never decoded
        if self._state is _State.LITERAL and _literal_value("".join(self._literal)) is not _MISSING:
            self._end_literal(len(self._text))  # cut off after a number: ``12`` was ``12``
        if not self._finished:
            self._finished = True
            self._out.append(self._emitter.finish())
        complete = self.done
        # Text consumed but never reflected in a fragment (a cut-off key, word or escape): the
        # caller keeps it as content, so a truncated call loses nothing.
        self.unconsumed = "" if complete else "".join(self._held)
        return "".join(self._out), complete

    def _emit(self, fragment: str, reflected: int) -> None:
        """Send a fragment out; the text up to ``reflected`` is now accounted for."""
        if fragment:
            self._out.append(fragment)
        self._reflect(reflected)

    def _reflect(self, position: int) -> None:
        """The text before ``position`` is accounted for; an escape still pending (the follower
        of a lone surrogate, from an earlier chunk) is not."""
        self._held.clear()
        self._mark = position
        if self._escape:
            self._held.append(self._escape)

    def _fail(self, position: int) -> int:
        self.failed = True  # for good: a failed stream rejects all further text (as h11 does)
        return position

    def _structural(self, position: int) -> int:
        """Skip white space, then act on the next character as the state's table says."""
        position = _run_end(_WHITESPACE, self._text, position)
        if position == len(self._text):
            return position
        action = _TABLE[self._state].get(self._text[position])
        if isinstance(action, _State):
            self._state = action
            return position + 1
        return action(self, position) if action is not None else self._fail(position)

    def _open(self, position: int) -> int:
        """A nested object or array; the top-level ``{`` is the emitter's implicit object."""
        bracket = self._text[position]
        if len(self._stack) > self._max_depth:  # the top-level object is depth 0
            self.too_deep = True
            return self._fail(position)
        self._state = _State.FIRST_KEY if bracket == "{" else _State.FIRST_ITEM
        if not self._stack:
            self._reflect(position + 1)
        elif not self._skip:
            self._emit(self._emitter.begin_container({} if bracket == "{" else []), position + 1)
        self._stack.append(bracket)
        return position + 1

    def _close(self, position: int) -> int:
        bracket = self._text[position]
        if self._stack[-1] != _OPENER[bracket]:
            return self._fail(position)
        self._stack.pop()
        if not self._stack:  # its ``}`` is written when the call ends (``close``): until its
            self._state = _State.DONE  # closing marker, the streamed JSON never closes
            self._reflect(position + 1)
            return position + 1
        if not self._skip:
            self._emit(self._emitter.end_container(), position + 1)
        self._value_done(position + 1)
        return position + 1

    def _comma(self, position: int) -> int:
        self._state = _State.KEY if self._stack[-1] == "{" else _State.VALUE
        return position + 1

    def _end_key(self) -> None:
        """A key is complete: a duplicate's value is skipped; a new one names the next member."""
        key = "".join(self._key)
        self._key = []
        self._state = _State.COLON
        if self._skip:
            return
        if self._emitter.has_key(key):
            self.duplicates.append(key)
            self._skip = len(self._stack)
            return
        self._emitter.key(key)
        self._named = len(key)
        if len(self._stack) == 1:
            self._plain = is_plain_string(self._schema_for_key(key))

    def _begin_string(self, position: int) -> int:
        self._state = _State.STRING
        if not self._skip:
            self._emit(self._emitter.begin_string(), position + 1)
        return position + 1

    def _string(self, position: int) -> int:
        """Text of a key or string value: a run up to the next quote or backslash at once."""
        if self._escape:
            return self._continue_escape(position)
        text = self._text
        whole = _whole_string(text, position)
        if whole is not None:  # the closing quote is in this chunk: decode it all in C
            decoded, end = whole
            if decoded:
                self._piece(decoded, end - 1)
            self._end_string(end)
            return end
        end = _run_end(_STRING_RUN, text, position)
        if end > position:
            self._piece(text[position:end], end)
        if end == len(text):
            return end
        if text[end] == "\\":
            self._escape = "\\"
            return end + 1
        self._end_string(end + 1)
        return end + 1

    def _piece(self, decoded: str, reflected: int) -> None:
        """Decoded string text: a key's is kept, a value's goes out (unless skipped)."""
        if self._state is _State.KEY_STRING:
            self._key.append(decoded)
        elif not self._skip:
            self._pieces.append(decoded)
            self._reflect(reflected)

    def _flush(self) -> None:
        if self._pieces:
            self._out.append(self._emitter.string_chunk("".join(self._pieces)))
            self._pieces = []

    def _end_string(self, position: int) -> None:
        if self._state is _State.KEY_STRING:
            self._end_key()
            return
        if not self._skip:
            self._flush()
            self._emit(self._emitter.end_string(), position)
        self._value_done(position)

    def _continue_escape(self, position: int) -> int:
        """Decode the escape begun by ``self._escape`` with what this chunk adds (≤ 11 chars)."""
        held = len(self._escape)
        candidate = self._escape + self._text[position : position + 12 - held]
        decoded, used = _decode_escape(candidate)
        if used == -1:
            return self._fail(position)
        if used == 0:  # the chunk ended first; the candidate took all of it
            self._escape = candidate
            return len(self._text)
        self._escape = candidate[used:held] if used < held else ""  # a lone surrogate's follower
        consumed = max(used - held, 0)
        self._piece(decoded, position + consumed)
        return position + consumed

    def _literal_run(self, position: int) -> int:
        """Characters that may belong to a number or word; anything else ends the token."""
        self._state = _State.LITERAL
        end = _run_end(_LITERAL_RUN, self._text, position)
        self._literal.append(self._text[position:end])
        if end < len(self._text):
            self._end_literal(end)
        return end

    def _end_literal(self, position: int) -> None:
        token = "".join(self._literal)
        self._literal = []
        value = _literal_value(token)
        if value is _MISSING:
            self._fail(position)
            return
        if not self._skip:
            plain = self._plain and len(self._stack) == 1
            self._emit(self._emitter.value_complete(token if plain else value), position)
        self._value_done(position)

    def _value_done(self, position: int) -> None:
        """A value is complete; a skipped duplicate member ends with it, and its text (never
        reflected in a fragment) goes to ``dropped`` for the caller to keep."""
        self._state = _State.AFTER_VALUE
        if self._skip == len(self._stack):
            self._skip = 0
            dropped = "".join(self._held) + self._text[self._mark : position]
            self.dropped.append(dropped)
            self.dropped_at.append(position - len(dropped))
            self._reflect(position)


def _inside_string(text: str) -> tuple[str, str] | None:
    """``(decoded, held)`` when all of ``text`` lies inside one string value: no closing quote,
    every escape valid. ``held`` is an escape cut off at the end, kept whole with a first half
    of a surrogate pair before it (``\\uD83D\\uDE``): what ``_decode_escape`` waits on."""
    last = text.rfind("\\")
    if last >= 0 and len(text) - last < 6 and (len(text) - last == 1 or text[last + 1] == "u"):
        return _inside_string_cut(text)  # it may end inside an escape
    try:  # the common case, decoded in C at once
        decoded, end = _scanstring(text + '"', 0, False)
    except ValueError:
        return None
    if end != len(text) + 1:
        return None  # a closing quote inside
    if decoded and "\ud800" <= decoded[-1] <= "\udbff":
        return _inside_string_cut(text)  # a first half of a pair: its second may follow
    return str(decoded), ""


def _inside_string_cut(text: str) -> tuple[str, str] | None:
    """``_inside_string`` where ``text`` may end inside an escape."""
    found = _STRING_CHUNK.fullmatch(text)
    if found is None:
        return None
    body, last, held = found.group(1), found.group(2), found.group(3) or ""
    if last and found.end(2) == found.end(1) and _HIGH_SURROGATE.fullmatch(last):
        body, held = body[: -len(last)], last + held  # its second half may follow: it waits
    if "\\" not in body:
        return body, held
    return str(_scanstring(body + '"', 0, False)[0]), held


def _nests_deeper_than(value: dict[str, Any], limit: int) -> bool:
    """Whether containers nest more than ``limit`` levels inside the top-level object (which
    is level 0), found without recursion."""
    pending: list[tuple[Any, int]] = [(member, 1) for member in value.values() if isinstance(member, (dict, list))]
    while pending:
        container, depth = pending.pop()
        if depth > limit:
            return True
        members = container.values() if isinstance(container, dict) else container
        pending += [(member, depth + 1) for member in members if isinstance(member, (dict, list))]
    return False


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object with each key once (``json.loads`` would keep the last of two)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a duplicate key")
    return value


def _refuse(word: str) -> Any:
    raise ValueError(f"{word} is not a JSON number")


# ``json.loads`` with these options, its decoder made once (``loads`` makes one per call).
_DECODE_WHOLE = json.JSONDecoder(object_pairs_hook=_unique, parse_constant=_refuse).decode


def _whole_string(text: str, position: int) -> tuple[str, int] | None:
    """The string that starts at ``position`` (after its opening quote) and the index after
    its closing quote, if both are in ``text``; ``None`` when it goes on past the chunk or is
    not valid JSON there (the step-by-step path then decides)."""
    if text.find('"', position) < 0:
        return None
    try:
        decoded, end = _scanstring(text, position, False)
    except ValueError:
        return None
    return str(decoded), int(end)


def _decode_escape(text: str) -> tuple[str, int]:
    """The escape at the start of ``text``: ``(decoded, length)``, ``_NEED_MORE`` or ``_INVALID``.

    ``\\uD83D\\uDE00`` is one character; a high surrogate without its low half decodes alone, as
    ``json.loads`` does, and what follows it is read afresh.
    """
    if len(text) < 2:
        return _NEED_MORE
    if text[1] != "u":
        return (_ESCAPES[text[1]], 2) if text[1] in _ESCAPES else _INVALID
    if not _HEX.issuperset(text[2:6]):
        return _INVALID
    if len(text) < 6:
        return _NEED_MORE
    high = int(text[2:6], 16)
    if not 0xD800 <= high < 0xDC00:
        return chr(high), 6
    tail = text[6:12]
    if not "\\u".startswith(tail[:2]) or not _HEX.issuperset(tail[2:]):
        return chr(high), 6
    if len(tail) < 6:
        return _NEED_MORE
    low = int(tail[2:], 16)
    if not 0xDC00 <= low < 0xE000:
        return chr(high), 6
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)), 12


def _literal_value(token: str) -> Any:
    """A number or word's value, or ``_MISSING`` if ``token`` is neither."""
    if not (token in _WORDS or _NUMBER.fullmatch(token)):
        return _MISSING
    if token in _NOT_JSON_NUMBERS:
        return token  # Python's json reads it, but the arguments must stay valid JSON: its text
    try:
        return json.loads(token)
    except ValueError:  # more digits than Python converts to int
        return _MISSING


def _run_end(pattern: re.Pattern[str], text: str, position: int) -> int:
    """Where the run of ``pattern`` (which may match empty) from ``position`` ends."""
    found = pattern.match(text, position)
    return found.end() if found else position


_Action = Callable[[JsonArgumentsStream, int], int]
_Stream = JsonArgumentsStream
# What each structural state allows next: a state to move to (the character consumed), or an
# action; a character missing from its row is where the text stops being JSON.
_VALUE_START: dict[str, _State | _Action] = {
    '"': _Stream._begin_string,
    "{": _Stream._open,
    "[": _Stream._open,
    **dict.fromkeys("-0123456789tfnNI", _Stream._literal_run),
}
_TABLE: dict[_State, dict[str, _State | _Action]] = {
    _State.START: {"{": _Stream._open},
    _State.FIRST_KEY: {'"': _State.KEY_STRING, "}": _Stream._close},
    _State.KEY: {'"': _State.KEY_STRING},
    _State.COLON: {":": _State.VALUE},
    _State.VALUE: _VALUE_START,
    _State.FIRST_ITEM: {**_VALUE_START, "]": _Stream._close},
    _State.AFTER_VALUE: {",": _Stream._comma, "}": _Stream._close, "]": _Stream._close},
    _State.DONE: {},
}
_HANDLERS: dict[_State, _Action] = {
    **dict.fromkeys(_TABLE, _Stream._structural),
    _State.KEY_STRING: _Stream._string,
    _State.STRING: _Stream._string,
    _State.LITERAL: _Stream._literal_run,
}
