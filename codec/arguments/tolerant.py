"""Argument values as models actually write them, decoded with the tool's schema as a guide.

One decoder reads the three argument syntaxes — Solar Open's JSON, GLM's values (JSON, or a
string written raw), and Gemma 4's, where keys are bare words and strings sit between
``<|"|>`` tokens::

    {"city": "Paris", "days": 3, "tags": ["a"]}
    {city:<|"|>Paris<|"|>,days:3,tags:[<|"|>a<|"|>]}

Gemma 4's quote token is no constant here: the caller passes it as ``verbatim_quote``, taken from
the format's grammar; without it, only ``"`` and ``'`` quote strings and the token is text. The
decoder forgives what models get wrong: Python literals (``'single'``, ``True``, ``None``),
trailing commas, bare keys, unquoted strings, JSON escaped into a string, a number in quotes,
quotes inside strings, text cut off mid-value. Each thing forgiven is a ``Repair`` with its
offset (``CODES`` lists them); strict JSON that fits the schema has none.

The schema decides what ambiguous text means (``codec.arguments.schema.kinds``): ``"42"`` is 42
for an ``integer``, a bare ``007`` stays ``"007"`` for a ``string``, ``"[1, 2]"`` is a list for
an ``array``. What the schema's types cannot hold stays as written, with an ``untyped`` repair:
no key or value is invented, no text dropped without a repair saying so.

Every call is a pure function of its arguments, never raises on a ``str`` and recurses on
nothing: nesting past ``max_depth`` stays text (``too_deep``). Time is linear in the text: strict
``json.loads`` first, then one forward pass, which reads a string's text once more to unwrap the
JSON in it (never twice), and a value's text once more when junk after it makes both one string
(``"x" y``; nested, once per level, so at most ``max_depth`` times).

A quote closes a string only where the structure follows it, so a string whose closing quote is
followed by junk inside a container runs to the end of the text (``complete=False``): reading a
cut-off string as cut off is worth more than guessing where an ill-closed one ended.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from codec.arguments.schema import kinds
from codec.arguments.tolerant_parse import decode
from codec.arguments.tolerant_text import CODES, Repair

__all__ = ["CODES", "Decoded", "Repair", "decode_arguments", "decode_value"]


@dataclass(frozen=True, slots=True)
class Decoded:
    """A decoded value: what the text says (never invented), each ``Repair`` made on the way,
    and ``complete``: ``False`` when the text ended inside a string or a container (a cut-off
    value: ``value`` holds what arrived). Repairs inside JSON unwrapped from a string carry the
    string's offset."""

    value: Any
    repairs: tuple[Repair, ...]
    complete: bool


def decode_value(
    text: str, schema: Mapping[str, Any] | None = None, *, max_depth: int = 64, verbatim_quote: str | None = None
) -> Decoded:
    """The value ``text`` writes, typed by ``schema`` (``None``: any JSON value); arrays and
    objects nest at most ``max_depth`` deep.

    ``verbatim_quote`` is a string delimiter token inside which nothing is escaped — Gemma 4's
    ``<|"|>``, which the caller takes from the format's grammar. It closes a string only where
    the structure follows it; elsewhere inside the string it is text (``inner_quote_token``).
    With ``None`` only ``"`` and ``'`` quote strings, and the token is ordinary text. An empty
    ``verbatim_quote``, or one that begins with ``,``, ``]`` or ``}`` (where a value's comma or
    closing bracket stands), is a ``ValueError``.

    ``decode_value('{a:<|"|>x<|"|>,b:[1,],}', verbatim_quote='<|"|>')`` is
    ``{"a": "x", "b": [1]}`` with ``bare_key`` and ``trailing_comma`` repairs;
    ``decode_value("Paris")`` is ``"Paris"`` (``unquoted_string``).
    """
    value, repairs, complete = decode(text, schema, max_depth, verbatim=verbatim_quote)
    return Decoded(value, repairs, complete)


def decode_arguments(
    text: str, schema: Mapping[str, Any] | None = None, *, max_depth: int = 64, verbatim_quote: str | None = None
) -> Decoded | None:
    """The arguments object of one call, typed by the tool's ``parameters`` ``schema``; ``None``
    when the text is not an object at all. An object written as a JSON string
    (``"{\\"a\\": 1}"``) is that object. ``verbatim_quote``: as for ``decode_value``."""
    decoded = decode_value(text, _as_object(schema), max_depth=max_depth, verbatim_quote=verbatim_quote)
    return decoded if isinstance(decoded.value, dict) else None


def _as_object(schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``schema`` narrowed to objects: arguments are always one (so a JSON string holding the
    object is unwrapped)."""
    if isinstance(schema, Mapping) and kinds(schema) is not None:
        return schema
    return {**(schema if isinstance(schema, Mapping) else {}), "type": "object"}
