"""Reading a chat template from where Hugging Face keeps it.

``codec.load(path)`` takes any of:

- a model directory: its ``chat_template.jinja`` if present (transformers writes it since 4.43,
  and reads it before the others), else ``chat_template.json`` (processors), else
  ``tokenizer_config.json``;
- a ``tokenizer_config.json`` (or any ``.json`` file) whose ``"chat_template"`` is the template
  text, or a list of ``{"name": ..., "template": ...}`` of which the ``"default"`` one is taken;
- any other file (``chat_template.jinja``, ``glm.jinja``): its text, exactly.

Files are decoded from bytes, so a template keeps its newlines exactly as written. Sizes are
bounded (``MAX_TEMPLATE_SIZE``, ``MAX_CONFIG_SIZE``) and checked before a file is read whole: a
path given by mistake (a model's weights, ``/dev/zero``) is a ``TemplateTooLargeError``, not
gigabytes read into memory.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codec.errors import RenderError, describe
from codec.render.call import template_source

MAX_TEMPLATE_SIZE = 1 << 20
"""The largest chat template ``load`` and ``detect`` take: 1 MiB (bytes of a file, characters of
text). Real templates are 5 to 40 KB (the bundled ones at most 22 KB); a template is compiled
and searched whole, so its size is bounded like any other input."""

MAX_CONFIG_SIZE = 16 << 20
"""The largest JSON config (``tokenizer_config.json``, ``chat_template.json``) ``load`` reads:
16 MiB. A tokenizer config lists the added tokens too, so it can be far larger than the template
it holds (a model with thousands of added tokens has a config of a megabyte or more)."""

_IN_A_MODEL_DIRECTORY = ("chat_template.jinja", "chat_template.json", "tokenizer_config.json")
_DEFAULT = "default"  # transformers' name for the template used when none is asked for


class TemplateTooLargeError(RenderError):
    """A chat template, or the config holding one, is larger than ``load`` or ``detect`` take.
    ``size`` and ``limit`` are in bytes for a file, in characters for text."""

    def __init__(self, what: str, size: int, limit: int, unit: str, limit_name: str) -> None:
        super().__init__(
            f"{what} has {size:,} {unit}, over the limit of {limit:,} "
            f"(codec.template_files.{limit_name}); is it the right file?"
        )
        self.size, self.limit = size, limit


def check_template_text(text: str, what: str) -> str:
    """``text``, if it is no larger than ``MAX_TEMPLATE_SIZE`` characters."""
    if len(text) > MAX_TEMPLATE_SIZE:
        raise TemplateTooLargeError(what, len(text), MAX_TEMPLATE_SIZE, "characters", "MAX_TEMPLATE_SIZE")
    return text


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
    if text is None:
        return None
    return TemplateFile(
        check_template_text(text, "the template given as text"), f"a template given as text ({len(text)} characters)"
    )


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
    return TemplateFile(_read(where, MAX_TEMPLATE_SIZE, "MAX_TEMPLATE_SIZE"), f"the chat template in {where}")


def _from_directory(directory: Path) -> TemplateFile:
    for name in _IN_A_MODEL_DIRECTORY:
        if (directory / name).is_file():
            return read_template(directory / name)
    raise RenderError(
        f"no chat template in the directory {directory}: expected one of {', '.join(_IN_A_MODEL_DIRECTORY)}"
    )


def _from_config(path: Path) -> TemplateFile:
    try:
        config = json.loads(_read(path, MAX_CONFIG_SIZE, "MAX_CONFIG_SIZE"))
    except json.JSONDecodeError as error:
        raise RenderError(f"{path} is not JSON: line {error.lineno}, column {error.colno}: {error.msg}") from None
    except (RecursionError, ValueError) as error:  # nested past the recursion limit, or a 5,000-digit number
        raise RenderError(
            f"{path} is JSON too large to read: {type(error).__name__}: {describe(str(error), 80)}"
        ) from None
    template = config.get("chat_template") if isinstance(config, dict) else None
    if template is None:
        raise RenderError(f'{path} has no "chat_template"; the model directory may hold a chat_template.jinja')
    text = check_template_text(_chosen(template, path), f'the "chat_template" of {path}')
    return TemplateFile(text, f"the chat_template of {path}")


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


def _read(path: Path, limit: int, limit_name: str) -> str:
    """The text of the file at ``path``, read only if it has at most ``limit`` bytes: its size
    is looked up first, and at most ``limit + 1`` bytes are read (it may have grown since). A
    device or a pipe, which has no size and may never end, is refused unopened."""
    try:
        found = path.stat()
        if not stat.S_ISREG(found.st_mode):
            raise RenderError(f"{path} is not a regular file (a device, a pipe?), so it holds no chat template")
        data = b""
        if found.st_size <= limit:
            with path.open("rb") as file:
                data = file.read(limit + 1)
        if max(found.st_size, len(data)) > limit:
            raise TemplateTooLargeError(str(path), max(found.st_size, len(data)), limit, "bytes", limit_name)
        return data.decode("utf-8")
    except (OSError, ValueError) as error:  # ValueError: not UTF-8, or a NUL in the path
        raise RenderError(f"cannot read the chat template {str(path)!r}: {error}") from None
