"""How deeply a JSON-like value nests, found without recursion.

Values from callers and from parsed output reach ``json.dumps``, pydantic and Jinja, which all
recurse: a value nested a few thousand levels deep ends in ``RecursionError``. Checking depth
first, iteratively, turns that into a clear error at a documented limit. An integer too long for
Python to write as text (``sys.get_int_max_str_digits``, 4,300 digits) is the same kind of trap:
``json.dumps`` and ``repr`` raise ``ValueError`` on it, so ``unwritable`` finds both.
"""

from __future__ import annotations

import sys
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


def unwritable(value: Any, limit: int = MAX_VALUE_DEPTH) -> str | None:
    """Why ``value`` cannot be written as JSON text — nested more than ``limit`` levels, or an
    integer longer than Python writes — or ``None`` when it can (other types are not checked)."""
    if deeper_than(value, limit):
        return f"nested deeper than {limit} levels"
    if holds_long_integer(value):
        return (
            f"holds an integer of more than {sys.get_int_max_str_digits()} digits, "
            "more than Python writes as text (sys.set_int_max_str_digits)"
        )
    return None


def holds_long_integer(value: Any) -> bool:
    """Whether ``value`` (of bounded depth: see ``deeper_than``) holds an integer ``too_long``."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, int) and too_long(item):
            return True
    return False


def too_long(number: int) -> bool:
    """Whether ``str(number)`` would raise: more digits than ``sys.get_int_max_str_digits()``."""
    digits = sys.get_int_max_str_digits()
    # 2**(3 * digits) < 10**digits: anything that short is surely writable, and cheap to tell
    return digits > 0 and number.bit_length() > 3 * digits and abs(number) >= 10**digits
