"""One argument value written as text (a GLM ``<arg_value>``), read leniently: what the schema
admits, from what the model wrote, never invented.

Strict JSON typed by the schema comes first (``schema.type_text``). Only when that leaves text
does the tolerant decoder (``tolerant.decode_value``) get a say — Python literals, trailing
commas, JSON escaped once more, a number in quotes — and its reading is kept only when it is
complete and of a kind the schema admits (with no schema: anything but a bare string, which the
raw text already is). A JSON string literal in a union that admits strings (``"null"`` for
``["string", "null"]``) is the string it quotes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codec.arguments.schema import json_kind, kinds, type_text
from codec.arguments.tolerant import Decoded, Repair, decode_value

_ESCAPED_QUOTE = '\\"'
_MAY_READ_OTHERWISE = frozenset("[{\"'\\")
_PYTHON_WORDS = frozenset({"True", "False", "None"})

LOSSLESS = frozenset(
    {
        "single_quotes",
        "python_literal",
        "trailing_comma",
        "bare_key",
        "unquoted_string",
        "json_in_string",
        "quoted_scalar",
    }
)
"""Repairs that change how a value is written, never what it says: a reading that needed any
other (text after the value, a bracket that does not match, ...) would lose text, so it is not
taken."""


def read_value(text: str, schema: Mapping[str, Any] | None, max_depth: int) -> tuple[Any, tuple[Repair, ...]]:
    """The value ``text`` stands for under ``schema``, and the repairs that reading took."""
    value = type_text(text, schema)
    if not isinstance(value, str) or _enumerated(value, schema):
        return value, ()
    written = text.strip()
    if written[:1] not in _MAY_READ_OTHERWISE and written not in _PYTHON_WORDS:
        return value, ()  # a plain word or phrase: the tolerant reading could only say "a string"
    admitted = kinds(schema)
    for candidate in _readings(written, schema, max_depth):
        if not candidate.complete or not lossless(candidate.repairs):
            continue
        found = candidate.value
        if isinstance(found, str):
            union = admitted is not None and "string" in admitted and len(admitted) > 1
            if union and written.startswith('"') and not candidate.repairs:
                return found, ()
            continue
        if admitted is None or json_kind(found) in admitted:
            return found, candidate.repairs
    return value, ()


def lossless(repairs: tuple[Repair, ...]) -> bool:
    """Whether a reading kept every character the text says (``LOSSLESS`` repairs only)."""
    return all(repair.code in LOSSLESS for repair in repairs)


def _readings(written: str, schema: Mapping[str, Any] | None, max_depth: int) -> list[Decoded]:
    readings = [decode_value(written, schema, max_depth=max_depth)]
    if _ESCAPED_QUOTE in written:  # `\"42\"`: quotes escaped once too often, as JSON inside a string
        readings.append(decode_value(written.replace(_ESCAPED_QUOTE, '"'), schema, max_depth=max_depth))
    return readings


def _enumerated(value: str, schema: Mapping[str, Any] | None) -> bool:
    """Whether ``value`` is one of the schema's ``enum`` strings (then it is what was meant)."""
    options = schema.get("enum") if isinstance(schema, Mapping) else None
    return isinstance(options, list) and value in options
