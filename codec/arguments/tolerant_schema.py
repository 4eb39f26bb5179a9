"""What the schema says about each value the tolerant decoder (``codec.arguments.tolerant``)
places: the JSON types admitted where it stands (``codec.arguments.schema.kinds``), the schema of
an object's member or an array's items, and whether strict JSON already fits as it is.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from codec.arguments.schema import Kinds, json_kind, kinds, nests_deeper_than, property_schema
from codec.arguments.tolerant_text import MISSING

Schema = Mapping[str, Any] | None


class Schemas:
    """The kinds and member schemas of the schemas met in one decode, each worked out once:
    values are typed one by one, and ``kinds`` may visit thousands of subschemas. Each entry
    holds its schema, so no ``id`` is reused while the cache lives."""

    def __init__(self) -> None:
        self._kinds: dict[int, tuple[Schema, Kinds | None]] = {}
        self._members: dict[tuple[int, str | None], tuple[Schema, Schema]] = {}

    def kinds(self, schema: Schema) -> Kinds | None:
        """The JSON types ``schema`` admits; ``None``: any."""
        if schema is None:
            return None
        if (cached := self._kinds.get(id(schema))) is None:
            cached = self._kinds[id(schema)] = (schema, kinds(schema))
        return cached[1]

    def member(self, schema: Schema, key: str | None) -> Schema:
        """The schema of member ``key`` of an object, or of an array's items (``key=None``)."""
        if not isinstance(schema, Mapping):
            return None
        if (cached := self._members.get((id(schema), key))) is None:
            cached = self._members[id(schema), key] = (schema, _member(schema, key))
        return cached[1]


def strict(text: str, schema: Schema, max_depth: int, schemas: Schemas) -> Any:
    """The value of ``text`` if it is strict JSON (finite numbers, no duplicate keys, nested at
    most ``max_depth`` deep) that fits the schema as it is; else ``MISSING``."""
    if nests_deeper_than(text, max_depth):
        return MISSING
    try:
        value = json.loads(text, parse_constant=_refuse, parse_float=_finite, object_pairs_hook=_unique)
    except (ValueError, RecursionError):
        return MISSING
    pending = [(value, schema)]
    while pending:
        item, item_schema = pending.pop()
        admitted = schemas.kinds(item_schema)
        if admitted is not None and typed(item, admitted) is not item:  # not admitted, or 3.0 for an integer
            return MISSING
        if isinstance(item, dict):
            pending.extend((member, schemas.member(item_schema, key)) for key, member in item.items())
        elif isinstance(item, list):
            items = schemas.member(item_schema, None)
            pending.extend((member, items) for member in item)
    return value


def typed(value: Any, admitted: Kinds | None) -> Any:
    """``value`` if the schema admits it (``3.0`` read as ``3`` for an integer), else ``MISSING``."""
    if value is MISSING or admitted is None:
        return value
    if isinstance(value, float) and value.is_integer() and "integer" in admitted and "number" not in admitted:
        value = int(value)
    return value if json_kind(value) in admitted else MISSING


def names(admitted: Kinds) -> str:
    """The admitted types, for a message: ``integer/string``."""
    return "/".join(sorted(admitted))


def _refuse(word: str) -> Any:
    raise ValueError(f"{word} is not a JSON number")


def _finite(word: str) -> float:
    number = float(word)
    if not math.isfinite(number):
        raise ValueError(f"{word} is too large for a JSON number")
    return number


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) < len(pairs):
        raise ValueError("duplicate key")  # the tolerant reading reports it
    return found


def _member(schema: Mapping[str, Any], key: str | None) -> Schema:
    """A union (``anyOf``/``oneOf``, as pydantic writes ``Optional[Model]``) is searched for its
    first branch that has ``properties``/``items``."""
    shaped = _branch_with(schema, "items" if key is None else "properties")
    if key is not None:
        return property_schema(shaped, key)
    items = shaped.get("items")
    return _inside(shaped, items) if isinstance(items, Mapping) else None


def _branch_with(schema: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    if field in schema or (field == "properties" and "additionalProperties" in schema):
        return schema
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        for branch in branches if isinstance(branches, list) else ():
            resolved = _inside(schema, branch)
            if resolved is not None and field in resolved:
                return resolved
    return schema


def _inside(schema: Mapping[str, Any], sub: Any) -> Schema:
    """``sub``, a subschema of ``schema``, with its ``$ref`` resolved and ``$defs`` carried:
    ``property_schema`` does both for a property, so ``sub`` is read as one."""
    return property_schema({**schema, "properties": {"": sub}}, "")
