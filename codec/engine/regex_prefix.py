"""``prefix_regex``: a regex of the texts that may still grow into a match of another regex.

A stream lexer that sees ``\\n{"name"`` must know whether more text could make it a match of
``\\s*\\{\\s*"name"\\s*:…`` (Hermes' call head) before it reads the text as something else, or
the reading would depend on where a chunk happened to end. Python's ``re`` has no partial
matching, so the regex is rewritten, from its parsed form, into one whose full matches are the
prefixes of the original's matches.

The rewrite may accept more than the true prefixes (look-arounds and anchors are taken as always
holding, a repeat's bounds as ``{0,max}``): a lexer that asks it waits a little longer than it
must, never less, and its buffer limit bounds the wait. A regex it cannot rewrite (a back
reference) gives ``None``: no answer, and the lexer decides as it did without one.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

# Python's own regex parser (3.11+), whose parsed form is rewritten; private modules without
# type stubs (their public aliases ``sre_parse``, ``sre_constants`` warn on import).
sre_parse: Any = importlib.import_module("re._parser")
sre: Any = importlib.import_module("re._constants")

_CATEGORIES = {
    sre.CATEGORY_DIGIT: r"\d",
    sre.CATEGORY_NOT_DIGIT: r"\D",
    sre.CATEGORY_SPACE: r"\s",
    sre.CATEGORY_NOT_SPACE: r"\S",
    sre.CATEGORY_WORD: r"\w",
    sre.CATEGORY_NOT_WORD: r"\W",
}
_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))


class _Unsupported(Exception):
    """A construct the rewrite does not know (a back reference, a conditional group)."""


def prefix_regex(source: str, flags: int = 0) -> re.Pattern[str] | None:
    """A regex whose full matches include every prefix of a match of ``source`` (the empty one
    too), or ``None`` where ``source`` uses a construct the rewrite does not know."""
    try:
        parsed = sre_parse.parse(source, flags)
        rewritten = _Rewrite(parsed.state.flags).prefix(list(parsed))
    except (_Unsupported, re.error, RecursionError):
        return None
    return re.compile(rewritten, parsed.state.flags & ~re.VERBOSE)


class _Rewrite:
    """``whole``: the regex of one parsed item as it was; ``prefix``: the regex of its prefixes."""

    def __init__(self, flags: int) -> None:
        self.flags = flags

    def prefix(self, items: list[Any]) -> str:
        """The prefixes of a sequence: a prefix of its first item, or that item whole followed
        by a prefix of the rest (nested, so the regex grows with the sequence, not its square)."""
        runs = _literal_runs(items)
        source = ""
        for item in reversed(runs):
            if isinstance(item, str):  # a run of literal characters: one of its prefixes
                head = "|".join(re.escape(item[:end]) for end in range(len(item), -1, -1))
                whole = re.escape(item)
            else:
                head, whole = self._item_prefix(item), self._item(item)
            source = f"(?:{whole}{source}|{head})" if source else f"(?:{head})"
        return source

    def whole(self, items: list[Any]) -> str:
        return "".join(self._item(item) for item in items)

    def _item(self, item: tuple[Any, Any]) -> str:
        op, value = item
        if op is sre.LITERAL:
            return re.escape(chr(value))
        if op is sre.NOT_LITERAL:
            return f"[^{re.escape(chr(value))}]"
        if op is sre.ANY:
            return r"[\s\S]" if self.flags & re.DOTALL else r"[^\n]"
        if op is sre.IN:
            return _char_class(value)
        if op is sre.BRANCH:
            return "(?:" + "|".join(self.whole(list(branch)) for branch in value[1]) + ")"
        if op in (sre.SUBPATTERN, sre.ATOMIC_GROUP):
            return self._group(value, self.whole)
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            return self._repeated(value, value[0])
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            return ""  # taken as holding: the rewrite may accept more, never less
        raise _Unsupported(op)

    def _item_prefix(self, item: tuple[Any, Any]) -> str:
        op, value = item
        if op in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
            return f"{self._item(item)}?"  # one character: nothing of it yet, or all of it
        if op is sre.BRANCH:
            return "(?:" + "|".join(self.prefix(list(branch)) for branch in value[1]) + ")"
        if op in (sre.SUBPATTERN, sre.ATOMIC_GROUP):
            return self._group(value, self.prefix)
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            body, repeated = value[2], self._repeated(value, 0)
            if _one_character(list(body)):
                return repeated  # a prefix of a run of single characters is a shorter run
            return f"{repeated}{self.prefix(list(body))}"
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            return ""
        raise _Unsupported(op)

    def _repeated(self, value: tuple[int, int, Any], low: int) -> str:
        """A repeat's body, whole, from ``low`` times up to the repeat's own bound."""
        _, high, body = value
        bound = "" if high == sre.MAXREPEAT else str(high)
        return f"(?:{self.whole(list(body))}){{{low},{bound}}}"

    def _group(self, value: Any, inner: Any) -> str:
        """A group, without its capture, under the flags it sets (``(?i:…)``)."""
        if isinstance(value, tuple) and len(value) == 4:
            _, added, removed, body = value
        else:  # an atomic group: its body alone
            added, removed, body = 0, 0, value
        text = inner(list(body))
        on = "".join(letter for flag, letter in _FLAGS if added & flag)
        off = "".join(letter for flag, letter in _FLAGS if removed & flag)
        if not (on or off):
            return f"(?:{text})"
        if added & re.DOTALL or removed & re.DOTALL:
            raise _Unsupported("a group that switches DOTALL")  # `.` inside is written per flags
        return f"(?{on}{'-' + off if off else ''}:{text})"


def _literal_runs(items: list[Any]) -> list[Any]:
    """``items`` with each run of literal characters joined into one string."""
    runs: list[Any] = []
    for op, value in items:
        if op is sre.LITERAL:
            if runs and isinstance(runs[-1], str):
                runs[-1] += chr(value)
            else:
                runs.append(chr(value))
        else:
            runs.append((op, value))
    return runs


def _one_character(items: list[Any]) -> bool:
    return len(items) == 1 and items[0][0] in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN)


def _char_class(members: list[Any]) -> str:
    parts, negated = [], False
    for op, value in members:
        if op is sre.NEGATE:
            negated = True
        elif op is sre.LITERAL:
            parts.append(re.escape(chr(value)))
        elif op is sre.RANGE:
            parts.append(f"{re.escape(chr(value[0]))}-{re.escape(chr(value[1]))}")
        elif op is sre.CATEGORY and value in _CATEGORIES:
            parts.append(_CATEGORIES[value])
        else:
            raise _Unsupported(op)
    return f"[{'^' if negated else ''}{''.join(parts)}]"
