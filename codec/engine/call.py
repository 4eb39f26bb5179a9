"""A tool call while the builder assembles it: the text it keeps until its name is complete,
its id and name, and the emitter its argument reader writes into."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from codec.arguments.emitter import ArgumentsEmitter
from codec.arguments.reader import ArgumentReader


def random_call_id(index: int) -> str:
    """The default id for formats whose calls carry none: ``call_`` and 24 random hex digits."""
    return "call_" + secrets.token_hex(12)


class Call:
    """A tool call being parsed."""

    def __init__(self, index: int, opener: str, lazy: bool) -> None:
        self.index = index
        self.raw = [opener]  # the call's text until it starts: kept as content if cut off there
        self.id_parts: list[str] = []
        self.name_parts: list[str] = []
        self.ahead: list[str] = []  # the name written before the opener (a header recipient)
        self.started = False
        self.id = ""
        self.name = ""
        self.parameters: Mapping[str, Any] | None = None
        self.emitter = ArgumentsEmitter(lazy)  # lazy: its fragments are not read (a whole parse)
        self.arguments: ArgumentReader | None = None
        self.size = 0  # characters of arguments JSON emitted so far


def tool_names(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    names = []
    for tool in tools:
        function = tool.get("function", tool)
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names
