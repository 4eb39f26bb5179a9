"""The head of Qwen3's call object, ``{"name": "…", "arguments": ``, read before the arguments
stream (``read_head``), and an object held whole until its braces balance (``Whole``), for a
call whose name does not come first."""

from __future__ import annotations

import json
import re

_WHITE = re.compile(r"[ \t\n\r]*")
_NAME = re.compile(r'"((?:[^"\\]|\\.)*)"')
_OPEN_NAME = re.compile(r'"(?:[^"\\]|\\.)*\\?')
_KEYS = ('"arguments"', '"parameters"')
HEAD_LIMIT = 1024  # characters of a head read again per token before it is held whole instead
MORE = "more"  # the head may still come


def read_head(text: str) -> tuple[str, int, bool] | str | None:
    """``(name, where the arguments value starts, closed)`` once ``text`` begins with the head
    ``{"name": "…", "arguments": `` (``closed``: ``{"name": "…"}``, no arguments); ``"more"``
    while it may still; ``None`` when it cannot."""
    at = _skip(text, 0)
    name = ""
    for piece in ("{", '"name"', ":", None, ",", _KEYS, ":"):
        at = _skip(text, at)
        if at == len(text):
            return MORE
        if piece is None:
            found = _NAME.match(text, at)
            if found is None:
                return MORE if _OPEN_NAME.fullmatch(text, at) else None
            name, at = _decoded(found.group(1)), found.end()
            continue
        if piece == "," and text[at] == "}":
            return name, at + 1, True
        choices = piece if isinstance(piece, tuple) else (piece,)
        taken = next((choice for choice in choices if text.startswith(choice, at)), None)
        if taken is None:
            return MORE if any(choice.startswith(text[at:]) for choice in choices) else None
        at += len(taken)
    return name, at, False


def _skip(text: str, at: int) -> int:
    found = _WHITE.match(text, at)
    return found.end() if found else at


def _decoded(raw: str) -> str:
    try:
        value = json.loads(f'"{raw}"')
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


class Whole:
    """A JSON object's text, held until its braces balance (strings and escapes skipped)."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self.size = 0
        self._depth = 0
        self._string = False
        self._escape = False
        self._closed = False

    def add(self, text: str) -> int | None:
        """Hold ``text``; where in it the object closed (after its last bracket), else ``None``."""
        if self._closed:
            self._parts.append(text)
            self.size += len(text)
            return None
        for at, char in enumerate(text):
            if self._string:
                if self._escape:
                    self._escape = False
                elif char == "\\":
                    self._escape = True
                elif char == '"':
                    self._string = False
            elif char == '"':
                self._string = True
            elif char in "{[":
                self._depth += 1
            elif char in "}]":
                self._depth -= 1
                if self._depth <= 0:
                    self._closed = True
                    self._parts.append(text[: at + 1])
                    self.size += at + 1
                    return at + 1
        self._parts.append(text)
        self.size += len(text)
        return None

    def text(self) -> str:
        """All the text held."""
        return "".join(self._parts)
