"""The per-process memos of the library, registered so that they can all be emptied at once.

Memos never change a result, only its cost: a parser primed once per generation prompt, the LALR
steps taken once per (state, terminal), a grammar compiled once per process. Emptying them is
for tests that must see the code run again, not its remembered answer — mutation testing runs
each mutant in a process forked from one that has filled them (``docs/mutation.md``).
"""

from __future__ import annotations

import sys
from typing import Any, TypeVar

_Memo = TypeVar("_Memo", bound=dict[Any, Any])

_MEMOS: list[dict[Any, Any]] = []


def memo(table: _Memo) -> _Memo:
    """Register a module-level memo (a dict) and return it."""
    _MEMOS.append(table)
    return table


def clear_all() -> None:
    """Empty every registered memo, and every ``functools.cache`` of a loaded ``codec`` module."""
    for table in _MEMOS:
        table.clear()
    for name, module in list(sys.modules.items()):
        if name != "codec" and not name.startswith("codec."):
            continue
        for value in list(vars(module).values()):
            if callable(value) and hasattr(value, "cache_clear") and getattr(value, "__module__", None) == name:
                value.cache_clear()
