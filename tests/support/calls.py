"""One tool call written in any format's own syntax, for the gap tests (``test_gaps_*.py``).

The completion is what the format's template writes for an assistant message holding the call
(``test_prompt_roundtrip.completion_after``), so no test spells a format's syntax. A duplicated
argument, which no dict and so no template can write, is made by renaming a placeholder key in
the rendered text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import codec
from codec import strategies
from codec.engine.grammar import compiled
from codec.engine.scanner import MarkerScanner
from codec.registry import FORMATS
from support.parsing import ids
from test_prompt_roundtrip import completion_after

NOW = datetime(2026, 11, 30)
HISTORY = [{"role": "user", "content": "Go."}]
TOKEN = re.compile(r"[^\W_]+")
"""A token, as the "kept" checks count them: a run of letters and digits."""


def tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI tool whose parameters are an object with ``properties``, described as tools
    usually are (gpt-oss's template cannot write a tool without a description:
    ``"// " + tool.description``)."""
    parameters = {"type": "object", "properties": properties}
    return {
        "type": "function",
        "function": {"name": name, "description": f"The {name} tool.", "parameters": parameters},
    }


CALL_ID = "abcdefghi0"


def call_id(fmt: str, written: str = CALL_ID) -> str:
    """``written`` as the format's template takes a call id: its end, or it padded with ``x``, of
    the length it requires (``FormatSpec.call_id_length``: Mistral v0.3's raises on any other)."""
    return written if (length := FORMATS[fmt].call_id_length) is None else written.ljust(length, "x")[-length:]


def call_completion(fmt: str, tools: list[dict[str, Any]], name: str, arguments: dict[str, Any]) -> str:
    """The completion in which the model calls ``name`` with ``arguments`` (and writes nothing else)."""
    call = {
        "id": strategies.call_id(fmt, "abcdefghi0", name, 0),
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    message = {"role": "assistant", "tool_calls": [call]}
    text = completion_after(codec.load(fmt), HISTORY, message, tools, NOW, {})
    assert text is not None, f"{fmt}: the template did not write the call"
    return text


def renamed(text: str, placeholder: str, key: str) -> str:
    """``text`` with its one occurrence of the key ``placeholder`` renamed ``key``."""
    assert text.count(placeholder) == 1, (placeholder, text)
    return text.replace(placeholder, key)


def markers(fmt: str) -> dict[str, str]:
    """Marker text -> terminal name, from the format's compiled grammar."""
    return compiled(FORMATS[fmt].grammar).markers


def text_runs(fmt: str, text: str) -> list[str]:
    """The text between the markers of ``text`` (a marker cut off at the end is text)."""
    scanner = MarkerScanner(markers(fmt))
    return [piece for name, piece in scanner.feed(text) + scanner.close() if name is None]


def tokens(texts: Iterable[str]) -> set[str]:
    return {token.lower() for text in texts for token in TOKEN.findall(text)}


def parse(fmt: str, chunks: Iterable[str], tools: list[dict[str, Any]], **kwargs: Any) -> codec.AssistantMessage:
    """The message and diagnostics of ``chunks`` fed one by one, then closed."""
    parser = codec.load(fmt).stream(tools=tools, id_factory=ids, **kwargs)
    for chunk in chunks:
        parser.feed(chunk)
    parser.close()
    return parser.message


def where(message: codec.AssistantMessage) -> list[tuple[str, int]]:
    """The diagnostics of a message: what was repaired, and where."""
    return [(diagnostic.code, diagnostic.offset) for diagnostic in message.diagnostics]


def call_ends(fmt: str, text: str) -> list[tuple[int, int]]:
    """Where each call's closing marker starts and ends in ``text``. A format whose grammar
    implies the closer (``CompiledGrammar.implied``: Mistral's calls end with their arguments)
    writes none: its span is empty, where the call's text ends — at the next call's opener, a
    stop token, or the end of the text."""
    grammar = compiled(FORMATS[fmt].grammar)
    if "CALL_CLOSE" in grammar.patterns:  # a call object's own `}` (Mistral v0.3's list of calls)
        return _object_ends(fmt, text)
    if "CALL_CLOSE" not in grammar.implied:
        closer = grammar.display("CALL_CLOSE")
        found = [at.start() for at in re.finditer(re.escape(closer), text)]
        return [(at, at + len(closer)) for at in found]
    opener, stops = grammar.display("CALL_OPEN"), codec.load(fmt).stop_tokens
    starts = [at.start() for at in re.finditer(re.escape(opener), text)]
    ends = []
    for index, start in enumerate(starts):
        following = starts[index + 1] if index + 1 < len(starts) else len(text)
        stop = min((at for at in (text.find(s, start, following) for s in stops) if at >= 0), default=following)
        ends.append((stop, stop))
    return ends


def _object_ends(fmt: str, text: str) -> list[tuple[int, int]]:
    """Where the bracket that closes each call starts and ends: from each match of the grammar's
    ``CALL_OPEN`` pattern to the bracket that closes the call (strings skipped). The opener's
    own bracket counts where ``CALL_CLOSE`` closes it (Mistral v0.3's object ``{``); where it
    does not (Llama 4's list ``[`` or the ``,`` before a later call, ``[f(x=1), g()]``), the
    call is what follows it, and ends at the bracket that closes its first one (the ``)``)."""
    grammar = compiled(FORMATS[fmt].grammar)
    opener, closer = grammar.patterns["CALL_OPEN"].regex, grammar.patterns["CALL_CLOSE"].regex
    ends: list[tuple[int, int]] = []
    at = 0
    while (found := opener.search(text, at)) is not None:
        own = closer.fullmatch(_PAIRS.get(found.group()[:1], "")) is not None
        end = _closing(text, found.start() if own else found.end())
        if end is None:
            break
        ends.append((end - 1, end))
        at = end
    return ends


_PAIRS = {"{": "}", "[": "]", "(": ")"}


def _closing(text: str, at: int) -> int | None:
    """Just after the bracket that closes the first one at or after ``at`` (``None``: it never
    closes); strings in JSON's or Python's quotes skipped."""
    depth, quote, escaped = 0, "", False
    for index in range(at, len(text)):
        char = text[index]
        if quote:
            quote, escaped = ("" if char == quote and not escaped else quote), (not escaped and char == "\\")
        elif char in "\"'":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def without_unread_ids(fmt: str, text: str) -> str:
    """``text`` with the call ids the format writes where a stream cannot read them left out
    (``FormatSpec.unread_call_id``): the parse keeps the ids it made instead."""
    pattern = FORMATS[fmt].unread_call_id
    return text if pattern is None else re.sub(pattern, " ", text)
