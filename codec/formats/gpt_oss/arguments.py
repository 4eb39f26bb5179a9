"""gpt-oss's arguments: one JSON object, the body of a message addressed to a tool::

    <|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>

read by Solar Open's reader (``codec.formats.solar_open.arguments``: the shared incremental JSON
reader, and a second, lenient reading of text it refuses, such as double-encoded arguments).
The header's last marker (``<|message|>``, inside the call's opener or after it) opens the
JSON: the reader begins at the first text of the body.
"""

from __future__ import annotations

from typing import ClassVar

from codec.formats.solar_open.arguments import JsonArguments


class BodyArguments(JsonArguments):
    """Solar's JSON arguments, opened by the message body's first text."""

    terminals: ClassVar[frozenset[str]] = frozenset({"ARGS_JSON"})

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        """The body's text; its first piece opens the JSON reader (Solar's opener marker)."""
        if self._json is None:
            super().token("CALL_ARGS", "", inserted)
        super().token(terminal, text, inserted)

    @property
    def complete(self) -> bool:
        """Whole, or refused text is held for the lenient second reading at the call's end
        (double-encoded arguments): the call's ``<|call|>`` may end it. Only a value still open
        (``{"city": "Par<|call|>``) leaves the call unfinished."""
        return super().complete or bool(self._rejected)
