"""Reading the CLI's inputs: files or stdin, exact text, JSON with a clear error at its line;
the format and template (``-f``, ``--template``), and request bodies as ``codec serve`` reads them."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO

import codec
from codec.chat_request import ChatRequest, read_request


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
        return json_value(read_text(path))
    except json.JSONDecodeError as error:
        raise UsageError(
            f"{display_name(path)}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        ) from None
    except ValueError as error:
        raise UsageError(f"{display_name(path)}: {error}") from None


def json_value(text: str) -> Any:
    """``json.loads(text)``; ``ValueError`` saying why for what the decoder cannot hold: arrays
    and objects nested past Python's recursion limit, and integers longer than Python reads."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read (thousands of levels of arrays or objects)") from None
    except json.JSONDecodeError:
        raise
    except ValueError as error:  # int(): more digits than sys.get_int_max_str_digits()
        raise ValueError(f"a JSON number too long to read ({error})") from None


def load_tools(path: str) -> list[Any]:
    """A JSON list of tools, or an object holding one under ``"tools"``."""
    return _load_list(path, "tools")


def load_messages(path: str) -> list[Any]:
    """A JSON list of messages, or an object holding one under ``"messages"``."""
    return _load_list(path, "messages")


def _load_list(path: str, key: str) -> list[Any]:
    data = load_json(path)
    found = data.get(key) if isinstance(data, dict) else data
    if not isinstance(found, list):
        raise UsageError(f'{display_name(path)}: expected a JSON list of {key} or {{"{key}": [...]}}')
    for index, item in enumerate(found):
        if not isinstance(item, dict):  # each is an object, in every command that reads them
            kind = "null" if item is None else type(item).__name__
            raise UsageError(f"{display_name(path)}: {key}[{index}] must be a JSON object, got {kind}")
    return found


def add_template_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """``-f`` and ``--template``, which ``load_codec`` reads: at least one (with ``--template``
    alone the format is recognised from the template)."""
    parser.add_argument(
        "-f",
        "--format",
        help=f"a format name or a model id: {what} ({', '.join(codec.formats())}); optional with --template",
    )
    parser.add_argument(
        "--template",
        metavar="PATH",
        help="your own chat template: a .jinja file, a tokenizer_config.json or a Hugging Face model "
        "directory; its format is recognised from it unless -f names one (it runs sandboxed)",
    )


def load_codec(name: str | None, template: str | None) -> codec.Codec:
    """``-f NAME`` and ``--template PATH``: the format named, with the template if given; the
    format recognised from the template when only it is given."""
    if template is None:
        if name is None:
            raise UsageError("say which format: -f NAME (a format or a model id), or --template PATH")
        return codec.load(name)
    path = Path(template)
    return codec.load(path) if name is None else codec.load(name, template=path)


def load_request(path: str, tools_path: str | None, c: codec.Codec) -> ChatRequest:
    """``codec render``'s input: a list of messages, or an OpenAI request body (or just
    ``{"messages", "tools"}``) read as ``codec serve`` reads it; ``--tools`` replaces its tools."""
    data = load_json(path)
    if not isinstance(data, (list, dict)):
        raise UsageError(f'{display_name(path)}: expected a list of messages or {{"messages": [...]}}')
    body = {"messages": data} if isinstance(data, list) else data
    if tools_path:
        body = {**body, "tools": load_tools(tools_path)}
    return read_request(body, c)


def option_pair(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` from ``--option``: VALUE as JSON when it parses (``true``, ``3``,
    ``"x"``), else the string."""
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json_value(value)
    except json.JSONDecodeError:
        return key, value
    except ValueError as error:  # JSON, but more than Python reads
        raise argparse.ArgumentTypeError(f"{key}: {error}") from None


def add_option_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """``--option KEY=VALUE`` / ``-o``, repeatable: the template options, in ``args.option``."""
    parser.add_argument("--option", "-o", action="append", default=[], type=option_pair, metavar="KEY=VALUE", help=help)
