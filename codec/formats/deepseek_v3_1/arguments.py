"""DeepSeek-V3.1's argument syntax: one JSON object after ``<｜tool▁sep｜>``::

    <｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>

It is Solar Open's (``<|tool_call:args|>{json}``), so Solar's reader reads it: the grammar names
the separator ``CALL_ARGS`` and the JSON text ``ARGS_JSON``, the terminals that reader takes.
The shared incremental JSON reader streams string values as they arrive; text it refuses
(double-encoded arguments ``"{\\"city\\": …}"``, Python's syntax, trailing commas) is read again
leniently when the call ends (``codec.arguments.read_again``).

One more thing the model writes wrong: DeepSeek-V3's layout, the call's type where the name
goes and the name and fenced JSON after the separator (vLLM's, SGLang's and llama.cpp's V3
parsers read it)::

    <｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\\n```json\\n{"city": "Paris"}\\n```<｜tool▁call▁end｜>

The name is read from the text after the separator, then the call is announced
(``ArgumentContext.start``) and the JSON streams as usual; the closing fence is dropped. Each
such call is reported as ``malformed``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from codec.arguments.reader import ArgumentContext
from codec.formats.solar_open.arguments import JsonArguments as _SolarJsonArguments

_V3_TYPE = "function"  # DeepSeek-V3's call type, written where V3.1 writes the name
# The name and the opening fence: `get_weather\n```json\n` (or the JSON right after the fence).
_V3_HEAD = re.compile(r"\s*([^\s`{}\"]+)\s*```(?:json)?[ \t]*(?:\n|(?=\{))")
_V3_MAYBE = re.compile(r"\s*[^\s`{}\"]*\s*`{0,3}(?:j(?:s(?:o(?:n)?)?)?)?[ \t]*")  # a head so far
_V3_HEAD_LIMIT = 256  # characters held while the head may still come
_FENCE = " \t\r\n`"  # what may follow the JSON object: the closing fence and its new lines


class JsonArguments(_SolarJsonArguments):
    """The arguments of one DeepSeek-V3.1 call: ``CALL_ARGS`` (``<｜tool▁sep｜>``) opens them,
    ``ARGS_JSON`` is their text. Solar Open's reader, plus DeepSeek-V3's layout."""

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        self._v3 = False  # the call is written in DeepSeek-V3's layout
        self._head: list[str] | None = None  # its text while the name is not yet read
        self._shift = 0  # where the text fed to Solar's reader starts in the piece being read
        self._fence = ""  # white space and backticks after the closed object: a fence, or text if more follows

    def name(self, written: str, terminal: str, inserted: bool) -> str | None:
        if written.strip() == _V3_TYPE and not inserted:
            self._v3, self._head = True, []
            return None  # read after the separator (``_read_head``), then announced
        return written

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        if self._head is not None and terminal == "ARGS_JSON":
            self._read_head(text)
        elif self._v3 and terminal == "ARGS_JSON":
            self._fenced(text)
        else:
            super().token(terminal, text, inserted)

    def run_sink(self, terminal: str) -> Callable[[str], None] | None:
        # A call in V3's layout takes each piece through ``token``: its fence must be seen.
        return None if self._v3 else super().run_sink(terminal)

    def finish(self, truncated: bool) -> None:
        if self._head:  # never named: the text is content
            self._context.content("".join(self._head))
        self._head = None
        self._fence = ""  # nothing followed it: the closing fence, dropped
        super().finish(truncated)

    def _read_head(self, text: str) -> None:
        assert self._head is not None
        self._head.append(text)
        head = "".join(self._head)
        base = len(text) - len(head)  # where the head began, from the start of ``text`` (<= 0)
        found = _V3_HEAD.match(head)
        if found is None:
            if len(head) > _V3_HEAD_LIMIT or not _V3_MAYBE.fullmatch(head):
                self._no_head(head, base)
            return
        self._head = None
        # The message names what was dropped (the type word, the fence's json): no word is lost.
        layout = f"a call in DeepSeek-V3's layout: type {_V3_TYPE}, name, fenced json"
        self._context.report("malformed", layout, base)
        self._context.start(found.group(1), base + found.start(1))
        if found.end() < len(head):
            self._fenced(head[found.end() :], base + found.end())

    def _no_head(self, head: str, base: int) -> None:
        """Text after ``function`` and the separator that is no name and fence: the call is
        named ``function``, as written, and the text is its arguments."""
        self._head, self._v3 = None, False
        self._context.start(_V3_TYPE, base)
        self._fed_at(head, base)

    def _fenced(self, text: str, at: int = 0) -> None:
        """JSON text of a call in V3's layout, ``at`` characters into the piece being read: the
        white space and backticks it ends with are fed while the object is open; after it they
        are held, the closing fence if nothing else follows in the call (dropped), else fed with
        what follows — whatever the pieces, as a whole parse reads them."""
        held, self._fence = self._fence, ""
        text, at = held + text, at - len(held)
        body = text.rstrip(_FENCE)
        if body:
            self._fed_at(body, at)
        tail = text[len(body) :]
        if tail and self._json is not None and self._json.closed:
            self._fence = tail
        elif tail:
            self._fed_at(tail, at + len(body))

    def _fed_at(self, text: str, at: int) -> None:
        self._shift = at
        super().token("ARGS_JSON", text, False)
        self._shift = 0

    def _rejected_at(self, text: str, rejected: str) -> int:
        # What was fed starts ``_shift`` characters into the piece being read (< 0: in an earlier one).
        return self._shift + len(text) - len(rejected)
