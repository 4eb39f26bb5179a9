"""How deeply a JSON-like value nests, found without recursion.

Values from callers and from parsed output reach ``json.dumps``, pydantic and Jinja, which all
recurse: a value nested a few thousand levels deep ends in ``RecursionError``. Checking depth
first, iteratively, turns that into a clear error at a documented limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_VALUE_DEPTH = 256
"""Deepest nesting of arrays and objects accepted in arguments and tool results (far below
what ``json.dumps`` survives, far above what a tool call needs)."""


class NestedTooDeep(ValueError):
    """A value nested deeper than ``MAX_VALUE_DEPTH`` (a ``ValueError``, so pydantic reports it
    as a validation error and keeps it, for those who must tell it from other errors)."""


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests mappings and lists/tuples more than ``limit`` levels deep."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
