"""Llama 3's call syntax: one bare JSON object, the whole reply, with the name inside::

    {"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>

The grammar's ``CALL_OPEN`` is the object's ``{`` (taken only when the head follows it); the
rest of the object is one run of ``CALL_JSON``. It is read as Qwen3's call object is
(``codec.formats.qwen3.arguments.CallObject``: the head first, then the arguments streamed
through the shared incremental JSON reader, string values as they arrive), with the ``{`` the
opener took put back in front of it. What models write wrong is read as there: ``"arguments"``
for ``"parameters"``, arguments written as a JSON string or in Python's syntax (read again by the
tolerant decoder, ``arguments_repaired``), the keys in another order.
"""

from __future__ import annotations

from typing import ClassVar

from codec.arguments.reader import ArgumentContext
from codec.formats.qwen3.arguments import CallObject


class BareCallObject(CallObject):
    """The arguments of one Llama 3 call: ``CALL_JSON``, the call object after its ``{``."""

    terminals: ClassVar[frozenset[str]] = frozenset({"CALL_JSON"})

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        # The opener (CALL_OPEN) took the object's ``{``: the head reader reads it first, at
        # offset -1 of the first piece, so every offset it reports stays in that piece.
        self._head = ["{"]

    @property
    def complete(self) -> bool:
        """The call object was closed: nothing but ``<|eot_id|>`` follows it (the template
        writes ``{{- "}" }}`` then ``{{- "<|eot_id|>" }}``, no new line between). Arguments the
        JSON reader refused (text after a string that is not JSON: unescaped quotes) can grow no
        more whole: the call ends with the output as Qwen3's does at its closing marker, read
        again leniently (``finish``)."""
        if self._rejected:
            return True
        if not self._closed:
            return False
        return self._done or (self._json is not None and self._json.closed)
