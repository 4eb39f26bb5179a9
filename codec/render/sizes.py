"""How the budget measures what a user's chat template builds and reads
(``codec.render.budget``): characters of text, ``ITEM_CHARS`` per item of a collection, and
steps of reading (``work``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sized
from typing import Any

import jinja2.utils

ITEM_CHARS = 8
"""What one item of a list or tuple a template builds counts for, in characters: the item is a
pointer of 8 bytes, where a character of text takes about one. Counting an item as one character
would let ``text | list`` or ``text.split(',')`` build eight times the memory of the text for
free. A mapping's entry counts twice (a key and a value)."""

CHARS_PER_STEP = 64
"""Characters of text a filter, method, test or comparison may read for one step (at about a
nanosecond a character, 64 take about as long as running a template node). An item of a list
it reads counts as a step."""


def built_size(value: str | list[Any] | tuple[Any, ...] | Mapping[Any, Any]) -> int:
    """What a text or a collection the template built counts for: its characters, or
    ``ITEM_CHARS`` per item (two per mapping entry). Items are not looked into: an item built
    on its own was counted when it was built."""
    if isinstance(value, str):
        return len(value)
    return len(value) * ITEM_CHARS * (2 if isinstance(value, Mapping) else 1)


def work(value: Any, cap: int) -> int:
    """The steps of reading ``value`` once: a text's characters over ``CHARS_PER_STEP``, a
    collection's items and theirs, all the way down (comparing or printing ``[row] * 1000``
    reads the row a thousand times); nothing for anything else (a number, a generator, whose
    items are counted as they are made). Counting stops past ``cap``."""
    kind = type(value)
    if kind is str or kind is bytes:
        return len(value) // CHARS_PER_STEP
    if kind in _SCALARS:  # the common case, in a comparison: no walk
        return 0
    total = 0
    stack = [value]
    while stack and total <= cap:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            total += 1 + len(item) // CHARS_PER_STEP  # it was an item of the walk, too
        elif isinstance(item, jinja2.utils.Namespace):
            stack.append(object.__getattribute__(item, "_Namespace__attrs"))
        elif isinstance(item, Mapping):
            total += len(item)
            stack.extend(part for pair in item.items() for part in pair if type(part) not in _SCALARS)
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += len(item)
            stack.extend(child for child in item if type(child) not in _SCALARS)
        elif isinstance(item, Sized):  # a range, a mapping's view: its length
            total += len(item)
    return total


_SCALARS = frozenset({int, float, bool, type(None)})
