"""Reading a chat template from where Hugging Face keeps it.

``codec.load(path)`` takes any of:

- a model directory: its ``chat_template.jinja`` if present (transformers writes it since 4.43,
  and reads it before the others), else ``chat_template.json`` (processors), else
  ``tokenizer_config.json``;
- a ``tokenizer_config.json`` (or any ``.json`` file) whose ``"chat_template"`` is the template
  text, or a list of ``{"name": ..., "template": ...}`` of which the ``"default"`` one is taken;
- any other file (``chat_template.jinja``, ``glm.jinja``): its text, exactly.

Files are decoded from bytes, so a template keeps its newlines exactly as written.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codec.errors import RenderError, describe
from codec.render.call import template_source

_IN_A_MODEL_DIRECTORY = ("chat_template.jinja", "chat_template.json", "tokenizer_config.json")
_DEFAULT = "default"  # transformers' name for the template used when none is asked for


@dataclass(frozen=True, slots=True)
class TemplateFile:
    """A chat template's text and where it came from (``origin``, for messages and reprs)."""

    text: str
    origin: str


def names_a_path(name: object) -> bool:
    """Whether ``load(name)`` means a file or directory: a ``PathLike``, or a ``str`` naming one
    that exists (anything else is a format name or a model id)."""
    if isinstance(name, os.PathLike):
        return True
    if not isinstance(name, str):
        return False
    try:
        return Path(name).exists()
    except (OSError, ValueError):  # a name too long for the file system, or holding a NUL
        return False


def given_template(template: str | os.PathLike[str] | None) -> TemplateFile | None:
    """``load``'s ``template=``: text as it is, a path read as ``read_template`` reads it."""
    if isinstance(template, os.PathLike):
        return read_template(template)
    if isinstance(template, str) and _is_a_path(template):
        return read_template(template)
    text = template_source(template)  # refuses bytes and other types, saying what it takes
    return None if text is None else TemplateFile(text, f"a template given as text ({len(text)} characters)")


def _is_a_path(text: str) -> bool:
    """Whether ``template=text`` means a file: a chat template has Jinja syntax and usually
    lines; one line without ``{{`` or ``{%`` is a path (``template="my.jinja"``), and reading
    it — or saying it does not exist — beats rendering the path as the prompt."""
    if "\n" in text or "{{" in text or "{%" in text:
        return False
    if names_a_path(text):
        return True
    raise RenderError(
        f"template={text!r} has no Jinja syntax, so it is taken as a path, and there is no such "
        "file or directory; pass the template's text, or the path of an existing one"
    )


def read_template(path: str | os.PathLike[str]) -> TemplateFile:
    """The chat template at ``path``: a model directory, a JSON config or a template file."""
    where = Path(path)
    if where.is_dir():
        return _from_directory(where)
    if where.suffix.lower() == ".json":
        return _from_config(where)
    return TemplateFile(_read(where), f"the chat template in {where}")


def _from_directory(directory: Path) -> TemplateFile:
    for name in _IN_A_MODEL_DIRECTORY:
        if (directory / name).is_file():
            return read_template(directory / name)
    raise RenderError(
        f"no chat template in the directory {directory}: expected one of {', '.join(_IN_A_MODEL_DIRECTORY)}"
    )


def _from_config(path: Path) -> TemplateFile:
    try:
        config = json.loads(_read(path))
    except json.JSONDecodeError as error:
        raise RenderError(f"{path} is not JSON: line {error.lineno}, column {error.colno}: {error.msg}") from None
    except (RecursionError, ValueError) as error:  # nested past the recursion limit, or a 5,000-digit number
        raise RenderError(
            f"{path} is JSON too large to read: {type(error).__name__}: {describe(str(error), 80)}"
        ) from None
    template = config.get("chat_template") if isinstance(config, dict) else None
    if template is None:
        raise RenderError(f'{path} has no "chat_template"; the model directory may hold a chat_template.jinja')
    return TemplateFile(_chosen(template, path), f"the chat_template of {path}")


def _chosen(template: Any, path: Path) -> str:
    """The template text of a config's ``chat_template``: a string, or the ``"default"`` of a
    list of named templates."""
    if isinstance(template, str):
        return template
    if not isinstance(template, list):
        raise RenderError(
            f'{path}: "chat_template" must be the template text or a list of {{"name", "template"}}, '
            f"got {type(template).__name__}"
        )
    named = {entry.get("name"): entry.get("template") for entry in template if isinstance(entry, dict)}
    default = named.get(_DEFAULT)
    if isinstance(default, str):
        return default
    found = ", ".join(repr(name) for name in named) or "none"
    raise RenderError(f'{path}: "chat_template" is a list of named templates with no "default" (names: {found})')


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, ValueError) as error:  # ValueError: not UTF-8, or a NUL in the path
        raise RenderError(f"cannot read the chat template {str(path)!r}: {error}") from None
