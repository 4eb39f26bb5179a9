"""The words of the tolerant argument decoder (``codec.arguments.tolerant``): quoted strings in
JSON's and Python's quotes and in a verbatim quote, bare runs of text, and JSON's scalars, each
read in one forward pass.

The verbatim quote is a token the caller takes from the format's grammar, or none. Gemma 4 quotes
strings with one and escapes nothing inside them (``gemma4.jinja``:
``'<|"|>' + argument + '<|"|>'``), so a model may also use the token for quotes *inside* a
string. A quote closes a string only when the structure follows it — white space, then a
character of ``follow`` or the end of the text; any other quote is text. The same rule reads
``'it's'`` and ``"say "hi""``. A bare run is text up to a stop character outside the brackets it
opened itself (``x[1], y`` runs to the comma).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

QUOTES = ('"', "'")
"""The quotes every syntax has; a verbatim quote, when given, comes before them (``quotes``)."""

CODES = {
    "single_quotes": "a string in Python's single quotes",
    "python_literal": "True/False/None, or a Python escape (\\x41, \\U0001F600, \\') in a JSON string",
    "trailing_comma": "a comma before a closing bracket",
    "bare_key": "an object key without quotes",
    "unquoted_string": "text without quotes (a word, a phrase, a number or bracket text) read as a string",
    "json_in_string": "an array or object written as JSON inside a string (or escaped once more)",
    "quoted_scalar": "a number, boolean or null in quotes where the schema wants that scalar",
    "untyped": "a value the schema's types cannot hold, kept as written",
    "inner_quote_token": "the verbatim quote inside a string it quotes, kept as text: the structure does not follow it",
    "unescaped_quote": "a quote inside a string, kept as text: the structure does not follow it",
    "invalid_escape": "a backslash escape neither JSON nor Python knows, kept as written",
    "control_character": "a raw control character inside a JSON string, kept",
    "unclosed_string": "the text ended inside a string",
    "unclosed_container": "the text ended inside an array or object",
    "mismatched_bracket": "] closing an object or } closing an array",
    "missing_colon": "a key and its value without a colon between them",
    "missing_value": "a key without a value, or an empty array element: nothing placed",
    "missing_key": "a member that begins with a colon: not placed",
    "duplicate_key": "a key given twice: the first value is kept",
    "trailing_text": "text after a complete top-level array or object",
    "too_deep": "an array or object nested deeper than max_depth, kept as its text",
}
"""Every ``Repair.code``, with what it forgives."""


@dataclass(frozen=True, slots=True)
class Repair:
    """One deviation from strict JSON that the decoder forgave: ``code`` (a key of ``CODES``),
    ``offset`` (characters from the start of the decoded text) and what was read instead."""

    code: str
    offset: int
    message: str


@dataclass(frozen=True, slots=True)
class Quoted:
    """A quoted string: its decoded ``text``, where it ``end``s, whether its closing quote came,
    and where the first quote that was not a closer stood (-1: none)."""

    text: str
    end: int
    closed: bool
    first_inner: int


MISSING: Any = object()
"""Not a scalar (``read_scalar``)."""

SPACE = " \t\n\r"  # JSON's white space: other spaces are text
_SPACE = re.compile(r"[ \t\n\r]*")
_STRUCTURE = re.compile(r"[][{},:]")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
# Up to an unescaped quote, or up to a lone backslash at the very end of the text.
_CHUNK = {quote: re.compile(rf"[^{quote}\\]*(?:\\.[^{quote}\\]*)*", re.S) for quote in "\"'"}
_ESCAPE = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|U([0-9a-fA-F]{8})|(.?))",
    re.S,
)
_SIMPLE = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_CONTROL = re.compile(r"[\x00-\x1f]")
_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}
_PYTHON_WORDS: dict[str, Any] = {"True": True, "False": False, "None": None}
_PAIRS = {"[": "]", "{": "}"}


def excerpt(text: str, size: int = 40) -> str:
    """``text`` cut short for a message (a repair must not copy a 5 MB argument)."""
    return repr(text if len(text) <= size else text[:size] + "…")


def skip_space(text: str, pos: int) -> int:
    """Where the white space starting at ``pos`` ends."""
    found = _SPACE.match(text, pos)
    return found.end() if found else pos


def quotes(verbatim: str | None) -> tuple[str, ...]:
    """The quotes a string may open with: the ``verbatim`` quote (if any) first, then ``QUOTES``.
    A verbatim quote that begins with ``,``, ``]`` or ``}`` is refused: after a value it stands
    where the comma or closing bracket does, and no reading could move past it."""
    if verbatim == "":
        raise ValueError("a verbatim quote cannot be empty")
    if verbatim is not None and verbatim[0] in ",]}":
        raise ValueError(f"a verbatim quote cannot begin with {verbatim[0]!r}: the structure stands there")
    return QUOTES if verbatim is None else (verbatim, *QUOTES)


def quote_at(text: str, pos: int, quotes: tuple[str, ...]) -> str | None:
    """The quote (of ``quotes``) that opens at ``pos``, if any."""
    return next((quote for quote in quotes if text.startswith(quote, pos)), None)


def read_quoted(text: str, pos: int, quote: str, follow: str, repairs: list[Repair], verbatim: str | None) -> Quoted:
    """The string whose ``quote`` opens at ``pos``; it closes at the first quote followed by
    white space and then a character of ``follow`` or the end of the text. Inside the
    ``verbatim`` quote nothing is escaped."""
    start = pos + len(quote)
    at, first_inner = start, -1
    while True:
        at = _next_quote(text, at, quote, verbatim)
        if at < 0:
            return Quoted(_content(text[start:], start, quote, verbatim, repairs), len(text), False, first_inner)
        after = skip_space(text, at + len(quote))
        if after == len(text) or text[after] in follow:
            content = _content(text[start:at], start, quote, verbatim, repairs)
            return Quoted(content, at + len(quote), True, first_inner)
        code = "inner_quote_token" if quote == verbatim else "unescaped_quote"
        repairs.append(Repair(code, at, f"{quote} not followed by the structure: kept as text"))
        first_inner = at if first_inner < 0 else first_inner
        at += len(quote)


def _next_quote(text: str, at: int, quote: str, verbatim: str | None) -> int:
    """Where the next ``quote`` stands from ``at`` (escaped ones are skipped, unless ``quote`` is
    the ``verbatim`` one), or -1."""
    if quote == verbatim:
        return text.find(quote, at)
    found = _CHUNK[quote].match(text, at)
    end = found.end() if found else len(text)
    return end if end < len(text) and text[end] == quote else -1


def _content(raw: str, offset: int, quote: str, verbatim: str | None, repairs: list[Repair]) -> str:
    """A string's text from what was written between its quotes (the ``verbatim`` quote's: as is)."""
    if quote == verbatim:
        return raw
    if quote == '"' and (control := _CONTROL.search(raw)):
        repairs.append(Repair("control_character", offset + control.start(), "raw control character in a string"))
    return unescape(raw, offset, quote == "'", repairs)


def unescape(raw: str, offset: int, python: bool, repairs: list[Repair]) -> str:
    """``raw`` with JSON's escapes decoded, and Python's (``\\x41``, ``\\U0001F600``, ``\\'``),
    which are repairs unless the string is in ``python`` quotes. Unknown escapes stay as written."""
    if "\\" not in raw:
        return raw

    def one(escape: re.Match[str]) -> str:
        high, low, four, two, eight, simple = escape.groups()
        if high:
            return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
        digits = four or two or eight
        if digits and int(digits, 16) <= 0x10FFFF:
            decoded = chr(int(digits, 16))
        elif simple in _SIMPLE:
            decoded = _SIMPLE[simple]
        else:
            repairs.append(Repair("invalid_escape", offset + escape.start(), f"unknown escape {escape.group()!r} kept"))
            return escape.group()
        if not python and (two or eight or simple == "'"):
            repairs.append(Repair("python_literal", offset + escape.start(), f"Python escape {escape.group()}"))
        return decoded

    return _ESCAPE.sub(one, raw)


def run_end(text: str, pos: int, stops: str) -> int:
    """Where a bare run from ``pos`` ends: at the first character of ``stops`` outside brackets
    the run opened itself (a closer it did not open stops it too), or at the end of the text."""
    if not stops:
        return len(text)
    opened: list[str] = []
    at = pos
    while found := _STRUCTURE.search(text, at):
        at, char = found.start(), found.group()
        if char in _PAIRS:
            opened.append(_PAIRS[char])
        elif opened and char == opened[-1]:
            opened.pop()
        elif char in stops and (char in "]}" or not opened):  # a closer the run did not open ends it
            return at
        at += 1
    return len(text)


def read_scalar(word: str) -> tuple[Any, bool]:
    """The JSON number, ``true``/``false``/``null`` or Python ``True``/``False``/``None`` that
    ``word`` spells (``MISSING`` if none), and whether it was Python's spelling. Numbers JSON
    cannot hold (``NaN``, ``1e400``, more than 4300 digits) are not scalars: they stay text."""
    if word in _WORDS:
        return _WORDS[word], False
    if word in _PYTHON_WORDS:
        return _PYTHON_WORDS[word], True
    number = _NUMBER.fullmatch(word)
    if number is None:
        return MISSING, False
    if number.group(1) or number.group(2):
        real = float(word)
        return (real if math.isfinite(real) else MISSING), False
    try:
        return int(word), False
    except ValueError:  # more digits than Python's int() reads
        return MISSING, False
