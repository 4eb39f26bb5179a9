"""Reading the CLI's inputs: files or stdin, exact text, JSON with a clear error at its line."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, BinaryIO


class UsageError(Exception):
    """A problem with the command's input (a file, its JSON, an option), not with the library."""


def display_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def open_binary(path: str) -> BinaryIO:
    return os.fdopen(os.dup(sys.stdin.fileno()), "rb") if path == "-" else open(path, "rb")


def read_text(path: str) -> str:
    """The file's exact text (no newline translation), or stdin's."""
    with open_binary(path) as source:
        data: bytes = source.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{display_name(path)}: not UTF-8 text (byte {error.start})") from None


def load_json(path: str) -> Any:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise UsageError(
            f"{display_name(path)}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        ) from None


def load_tools(path: str) -> list[Any]:
    """A JSON list of tools, or an object holding one under ``"tools"``."""
    data = load_json(path)
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list):
        raise UsageError(f'{path}: expected a JSON list of tools or {{"tools": [...]}}')
    return tools
