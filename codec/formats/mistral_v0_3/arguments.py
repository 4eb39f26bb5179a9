"""Mistral v0.3's call: one object of the JSON list after ``[TOOL_CALLS]``, with its name inside
and the id after the arguments::

    [TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}, {…}]

The grammar's ``CALL_OPEN`` is the object's ``{`` and ``CALL_CLOSE`` its ``}``; the text between
is one run of ``CALL_JSON``, and nothing but a ``,`` separates two calls. The object is read as
Llama 3's bare call object is (``codec.formats.llama3.arguments.BareCallObject``, Qwen3's reader
after the ``{`` the opener took: the head first, then the arguments streamed, string values as
they arrive; keys out of order, double-encoded arguments read leniently). Two things are this
family's own:

- the run ends at the object's own ``}`` (``Whole`` counts the brackets, strings skipped): the
  reader asks the engine to end it there (``ArgumentContext.end``), and the grammar reads the
  ``}`` and the list's ``,`` or ``]`` after it;
- the ``"id"`` member after the arguments (``{{- ', "id": "' + tool_call.id + '"}' }}``) is
  the template's: it is not an argument. It comes after the call is announced, so the call's
  id is made as for a call written without one (``Family.new_id``: nine letters or digits, as
  the template asks), as vLLM makes it for these models; a call without it is
  ``missing_call_id``, a member other than ``id`` there is content (``invalid_arguments``). A
  call whose arguments and id came is whole (``complete``): only its ``}`` is missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from codec.arguments.reader import ArgumentContext
from codec.formats.llama3.arguments import BareCallObject
from codec.formats.qwen3.head import Whole

_ID_MEMBER = r',\s*"id"\s*:\s*"(?:[^"\\]|\\.)*"\s*'
_ID_TAIL = re.compile(rf"\s*({_ID_MEMBER})?\}}\s*")
_ID_AT_END = re.compile(rf"{_ID_MEMBER}$")
_ID_SO_FAR = re.compile(rf"\s*{_ID_MEMBER}")


class ListedCallObject(BareCallObject):
    """The arguments of one Mistral v0.3 call: ``CALL_JSON``, the call object after its ``{``,
    up to its own ``}``."""

    terminals: ClassVar[frozenset[str]] = frozenset({"CALL_JSON"})

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        self._object = Whole()
        self._object.add("{")  # the opener's
        self._tail: list[str] = []  # text after the arguments, judged when the object closes
        self._ended = False
        self._counted = False  # a piece the sink counted already goes on through ``token``

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        if self._counted:
            super().token(terminal, text, inserted)
        else:
            self._take(terminal, text, self._object.add(text), super().token)

    def run_sink(self, terminal: str) -> Callable[[str], None] | None:
        """The reader's sink for the common piece, behind the count of the object's brackets."""
        inner = super().run_sink(terminal)
        if inner is None:
            return None
        add, take = self._object.add, self._take

        def sink(text: str) -> None:
            end = add(text)
            self._counted = True  # Qwen3's sink sends a piece that is no string's through ``token``
            try:
                take(terminal, text, end, lambda _terminal, piece, _inserted: inner(piece))
            finally:
                self._counted = False

        return sink

    def _take(self, terminal: str, text: str, end: int | None, read: Callable[[str, str, bool], Any]) -> None:
        """``text`` to the object's reader (``read``); where the object closed in it (``end``,
        after its ``}``), that much only, and the run ends before the ``}``, which the grammar
        reads."""
        if self._ended:
            return
        if end is None:
            read(terminal, text, False)
            return
        read(terminal, text[:end], False)
        self._ended = True
        self._object_closed(end - 1)
        self._context.end(end - 1)

    @property
    def complete(self) -> bool:
        """The arguments are whole and nothing but the template's id member followed them: only
        the object's ``}`` is missing (or refused arguments, read again at the end)."""
        if self._rejected or self._closed:
            return super().complete
        whole = self._done or (self._json is not None and self._json.closed)
        return whole and _ID_SO_FAR.fullmatch("".join(self._tail)) is not None

    def finish(self, truncated: bool) -> None:
        """Text held after the arguments, where the object never closed, is content — but the
        id member of a call finished without its ``}`` (the model stopped there)."""
        tail, self._tail = "".join(self._tail), []
        if not truncated and _ID_SO_FAR.fullmatch(tail) and not self._closed:
            self._closed = True
        elif tail:
            self._context.content(tail)
        super().finish(truncated)

    def _outer(self, text: str, at: int) -> None:
        """Text after the arguments: held until the object closes, then judged whole."""
        if self._closed or self._junk:
            super()._outer(text, at)
        else:
            self._tail.append(text)

    def _object_closed(self, at: int) -> None:
        """The object's ``}`` came, ``at`` characters into the piece being read: what stood
        between the arguments and it is the template's ``, "id": "…"`` (or nothing), else
        content."""
        if self._closed or self._junk or (self._json is None and not self._done):
            return
        tail, self._tail = "".join(self._tail), []
        found = _ID_TAIL.fullmatch(tail)
        if found:
            if found.group(1) is None:
                self._missing_id(at)
            super()._outer("}", at)
        else:
            super()._outer(tail, at + 1 - len(tail))

    def _taken(self, value: dict[str, Any], whole: str, at: int) -> None:
        """An object read whole (its name did not come first): its ``id`` is the template's."""
        if "id" not in value:
            self._missing_id(at)
        super()._taken({key: item for key, item in value.items() if key != "id"}, whole, at)

    def _missing_id(self, at: int) -> None:
        """The template writes an id in every call (``', "id": "' + tool_call.id + '"}'``)."""
        self._context.report("missing_call_id", "a call without an id; a new one is made", at)

    def _reread_text(self) -> str:
        """The arguments text read again leniently (double-encoded arguments), without the
        ``"id"`` member after them."""
        return _ID_AT_END.sub("", super()._reread_text().rstrip())
