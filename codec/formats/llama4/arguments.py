"""Llama 4's calls, token by token: Python's keyword syntax as the models write it, and the JSON
object the template writes::

    [get_weather(city='Paris', days=3, tags=["a"], exact=True)]
    {"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}

The grammar (``grammars/llama4.lark``) has split both into pattern tokens and checked their
order; the values are read by Gemma 4's token reader (``codec.formats.gemma4.arguments``), whose
value syntax is the same tree: containers, quoted strings whose text streams, scalars typed by
the tool's schema. Python's words (``True``, ``None``) are given to it as JSON's, and a string's
escapes (``\\'``, ``\\n``, ``\\u00e9``) as the characters they stand for. The keyword call's
``(`` opens its arguments as ``{`` opens the object's; its ``)`` is the call's closer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar

from codec.arguments.reader import ArgumentContext
from codec.formats.gemma4.arguments import GemmaValues

# This grammar's terminal, as Gemma's reader knows it: `=` is the colon of a keyword argument,
# a string's quote (either) its quote token, its text (either) its text.
_AS_GEMMA = {
    "ARGS_OPEN": "BAD_PAREN_OPEN",
    "EQUALS": "BAD_EQUALS",
    "DQUOTE": "QUOTE",
    "SQUOTE": "QUOTE",
    "SQ_STRING_TEXT": "STRING_TEXT",
    "PY_TRUE": "TRUE",
    "PY_FALSE": "FALSE",
    "PY_NONE": "NULL",
}
_OPENERS = frozenset({"ARGS_OPEN", "LBRACE", "LBRACKET"})
_CLOSERS = frozenset({"RBRACE", "RBRACKET"})
_WORDS = {"True": "true", "False": "false", "None": "null"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0", "/": "/"}
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\s\S])")


def unescape(text: str) -> str:
    """The characters a string's escapes stand for (Python's and JSON's agree on the common ones);
    an escape neither knows keeps its backslash, as Python keeps it."""
    if "\\" not in text:
        return text
    return _ESCAPE.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) > 1:
        return chr(int(code[1:], 16))
    if code in "\\'\"":
        return code
    return _ESCAPES.get(code, match.group(0))


class PythonicCall:
    """The ``ArgumentReader`` for Llama 4 calls: ``GemmaValues`` behind the shared interface,
    fed this grammar's tokens under Gemma's names."""

    terminals: ClassVar[frozenset[str]] = frozenset(
        {"ARGS_OPEN", "KEY", "EQUALS", "COLON", "COMMA", "LBRACE", "RBRACE", "LBRACKET", "RBRACKET", "NUMBER"}
        | {"TRUE", "FALSE", "NULL", "PY_TRUE", "PY_FALSE", "PY_NONE"}
        | {"DQUOTE", "SQUOTE", "STRING_TEXT", "SQ_STRING_TEXT"}
    )

    def __init__(self, context: ArgumentContext) -> None:
        self._context = context
        self._values = GemmaValues(
            context.emitter,
            context.schema_of,
            context.report,
            context.delta,
            context.content,
            context.limits.max_depth,
            context.stop,
        )
        self._keywords = False  # the call is Python's `NAME(key=value, …)`, not the JSON object
        self._depth = 0  # containers open, the arguments' own `(` or `{` included
        self._position = 0  # the argument's position in a keyword call
        self._named = False  # the argument at this position has its keyword (or its name)

    def name(self, written: str, terminal: str, inserted: bool) -> str:
        """The name as written: bare before the keyword call's ``(``; in the JSON object, in
        its quotes (``'{"name": "' + tool_call.function.name + '", '``: not escaped)."""
        self._keywords = terminal == "ARGS_OPEN"
        return written.strip().strip('"')

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        if self._keywords and self._depth == 1:
            self._top_level(terminal)
        self._depth += terminal in _OPENERS
        self._depth -= terminal in _CLOSERS
        if terminal in ("STRING_TEXT", "SQ_STRING_TEXT"):
            text = unescape(text)
        elif terminal in ("PY_TRUE", "PY_FALSE", "PY_NONE"):
            text = _WORDS.get(text, text)
        self._values.token(_AS_GEMMA.get(terminal, terminal), text, inserted)

    def _top_level(self, terminal: str) -> None:
        """A keyword call's argument with no keyword (``bad_positional``) is named after the
        tool's parameter at its position, as Python binds it; a position past the schema's
        parameters (or with no schema) keeps the position itself as the name."""
        if terminal == "COMMA":
            self._position, self._named = self._position + 1, False
        elif terminal == "KEY":
            self._named = True
        elif not self._named:
            self._named = True
            parameters = self._context.parameters() or {}
            names = list(parameters.get("properties") or {})
            name = names[self._position] if self._position < len(names) else str(self._position)
            self._values.token("KEY", name)

    @property
    def held(self) -> int:
        """Of a string, only the end that may yet be structure is held (``GemmaValues.write``)."""
        return self._values.held

    @property
    def complete(self) -> bool:
        """The JSON object's arguments were closed (only its last ``}`` is missing). A keyword
        call is whole only at its own ``)``: a call the output cut before it is never run."""
        return not self._keywords and self._values.closed

    def run_sink(self, terminal: str) -> Callable[[str], None] | None:
        """None: every piece of a call is a pattern token, read through ``token``."""
        return None

    def finish(self, truncated: bool) -> None:
        emitter = self._context.emitter
        self._values.settle()
        if truncated:
            self._context.content(self._values.leftover())  # never lost, never an argument
            if emitter.in_string and emitter.depth == 1:
                self._context.delta(emitter.end_string())
        self._context.delta(emitter.finish())
