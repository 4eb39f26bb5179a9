"""How the Qwen3-Coder template writes a value as text, and what such a text stood for.

The template writes a call's argument (``templates/qwen3_coder.jinja``)::

    {%- set args_value = args_value | tojson | safe if args_value is mapping or
        (args_value is sequence and args_value is not string) else args_value | string %}

so a string is raw, an object or array is JSON (``tojson``: ``json.dumps`` with
``ensure_ascii=False``), and any other value is Python's ``str()``: ``True``, ``None``, ``3``,
``1e+20``. The tools listing writes extra schema keys the same way (``render_extra_keys``).
``exact`` reads a text back only when writing that value again gives the same text: ``"1e5"``
or ``"true"`` stay strings (a completion is read more loosely: ``arguments.py``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from codec.arguments.schema import is_plain_string, json_kind, kinds

_WORDS: dict[str, Any] = {"True": True, "False": False, "None": None}
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:e[+-][0-9]+)?")
_MISSING: Any = object()


def written(value: Any) -> str:
    """The text the template writes for ``value`` (``tojson`` or ``| string``)."""
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, ensure_ascii=False)
    return value if isinstance(value, str) else str(value)


def exact(text: str) -> Any:
    """The value ``text`` is the template's writing of, other than a string; ``_MISSING`` if none."""
    if text in _WORDS:
        return _WORDS[text]
    if _INTEGER.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        number = float(text)
        return number if math.isfinite(number) and str(number) == text else _MISSING
    if text[:1] in "[{":
        try:
            value = json.loads(text)
        except ValueError:
            return _MISSING
        return value if json.dumps(value, ensure_ascii=False) == text else _MISSING
    return _MISSING


def read_back(text: str, schema: Mapping[str, Any] | None) -> Any:
    """What a value the template wrote stood for: the text itself for a plain string parameter,
    else the value it is the exact writing of when the schema admits that kind, else the text."""
    if is_plain_string(schema):
        return text
    value = exact(text)
    if value is _MISSING:
        return text
    admitted = kinds(schema)
    if admitted is not None and json_kind(value) not in admitted:  # "number" admits integers too
        return text
    return value


def retyped(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """``value`` as it comes back after the template wrote it."""
    return read_back(written(value), schema)


def is_exact(text: str) -> bool:
    """Whether ``text`` is the template's writing of a value other than a string."""
    return exact(text) is not _MISSING
