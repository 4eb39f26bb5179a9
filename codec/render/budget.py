"""What a user's chat template may spend in one render.

A user's template is code from outside (a model repository, a request). Jinja's sandbox keeps it
from reaching Python internals but not from spending: ``{{ 'x' * 10**9 }}``,
``'x'.center(10**9)``, three nested ``range(100000)`` loops or a macro calling itself twice per
level would take minutes and gigabytes. So every render of a user template carries a ``Budget``,
and going over any of its limits stops the render with a ``RenderError`` naming the limit:

- ``MAX_OUTPUT_CHARS``: the prompt, and any one text or value the template builds (a macro's
  output, a ``{% set %}`` block, the result of ``*``, ``+``, ``~``, ``center``, ``format``,
  ``list``, ``split``, ...), in characters of text (about bytes), a list's item counting
  ``ITEM_CHARS``;
- ``MAX_BUILT_CHARS``: all the text and values it builds, added up;
- ``MAX_LOOP_ITERATIONS``: loop iterations, all loops together (recursive loops included);
- ``MAX_STEPS``: template nodes run, each loop iteration and macro call counting its body's size,
  and the work of every filter, test, method and comparison in proportion to what it reads
  (``work``): ``'x' in text`` a million times over reads a long text a million times;
- ``MAX_CALLS``: calls of macros, methods and functions;
- ``MAX_NUMBER_DIGITS``: the size of an integer it computes.

Operations whose result can be far larger than their operands (repetition, powers, padding,
``replace``, ``join``, formatting, splitting, turning text into a list or a list that repeats
one long string into text) are estimated before they run (``codec.render.amplifiers``); a filter
given a generator counts its items as it takes them (``Budget.collect``); everything else is
measured after. So a render's time and memory are bounded, whatever the template does.

The limits are far above what real templates use: every bundled template, run as a user's
template, renders a 3,200-message conversation within them. codec's own templates run without a
budget (``Renderer`` with ``trusted=True``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

import jinja2.utils

from codec.errors import RenderError
from codec.render.sizes import CHARS_PER_STEP, ITEM_CHARS, built_size, work

MAX_OUTPUT_CHARS = 50_000_000
"""Characters of the prompt, and of any one text or value a template builds. A prompt of a
million tokens is about 4 million characters; a single tool result of 10 MB still renders."""

MAX_BUILT_CHARS = 500_000_000
"""Characters of all the text and values a template builds in one render, added up (the output
of nested macros counts at each level)."""

CALL_STEPS = 10
"""Steps a filter or test call costs, besides what it reads: about 2 µs, the time of ten
template nodes. ``map``, ``select`` and their kind call one for every item."""

READS_PER_CHAR = 64
"""How many times a long conversation may have each of its characters read, in steps
(``Budget.for_input``): templates read a message's text a few times (GLM's looks for its think
closer in the content, splits it there and strips it twice), never dozens."""

MAX_LOOP_ITERATIONS = 1_000_000
"""Loop iterations in one render, every loop counted (about 0.3 s of empty loops). A long
conversation raises it to the square of its length (``Budget.for_input``): Gemma's template
looks at every later message from each message, 5 million iterations for 3,200 messages."""

MAX_CALLS = 100_000
"""Calls of macros, methods and functions in one render (about 0.5 s of macro calls): a macro
that calls itself twice per level would otherwise double its work with each level, without a
loop. Raised like ``MAX_LOOP_ITERATIONS`` for long conversations; the bundled templates make
about ten calls per message."""

MAX_STEPS = 5_000_000
"""Template nodes run in one render, counted by body: each loop iteration and each macro call
spends the size of its body (its nodes, nested ones included). Counting iterations alone would
let a loop with a large body run a million times over; this bounds the work (at 0.1 to 0.3 µs
a node, about a second). A long conversation raises it to ``STEPS_PER_PAIR`` times the square
of its length."""

STEPS_PER_PAIR = 100
"""Steps a long conversation allows per pair of messages: Gemma's template, the costliest
bundled one, spends about 30, and up to 58 when every message is the assistant's (a 30-node
body for each later message, twice, from each assistant message)."""

MAX_NUMBER_DIGITS = 10_000
"""Decimal digits of an integer a template computes (``10 ** 10 ** 8`` would take minutes).
Python refuses to print integers over 4,300 digits anyway."""

_DIGITS_PER_BIT = 0.302  # log10(2): an integer of n bits has about 0.302 n decimal digits


class BudgetExceeded(RenderError):
    """A user's template went over one of its budgets (the message names which)."""


_T = TypeVar("_T")


@dataclasses.dataclass(slots=True)
class Budget:
    """What one render of a user's template has spent so far, against its limits."""

    loop_limit: int = MAX_LOOP_ITERATIONS
    call_limit: int = MAX_CALLS
    step_limit: int = MAX_STEPS
    loops: int = 0
    calls: int = 0
    steps: int = 0
    built: int = 0

    @classmethod
    def for_input(cls, items: int, chars: int = 0) -> Budget:
        """The budget for a conversation of ``items`` messages and tools holding ``chars``
        characters of text: templates may look at every later message from each message
        (Gemma's does), so loops and calls may number ``items ** 2``, and steps
        ``STEPS_PER_PAIR * items ** 2``, when that is more than their own limits; steps may
        also read every character ``READS_PER_CHAR`` times."""
        pairs = items * items
        return cls(
            loop_limit=max(MAX_LOOP_ITERATIONS, pairs),
            call_limit=max(MAX_CALLS, pairs),
            step_limit=max(MAX_STEPS, STEPS_PER_PAIR * pairs, READS_PER_CHAR * chars // CHARS_PER_STEP),
        )

    def iterate(self, iterable: Iterable[_T]) -> Iterator[_T]:
        """``iterable``'s items, each counted as a loop iteration."""
        for item in iterable:
            self.loops += 1
            if self.loops > self.loop_limit:
                raise _exceeded(f"loop iterations exceed {self.loop_limit:,}", "MAX_LOOP_ITERATIONS")
            yield item

    def step(self, size: int) -> None:
        """Count a loop iteration's or a macro call's body: ``size`` template nodes."""
        self.steps += size
        if self.steps > self.step_limit:
            raise _exceeded(f"template steps exceed {self.step_limit:,}", "MAX_STEPS")

    def call(self) -> None:
        """Count one call."""
        self.calls += 1
        if self.calls > self.call_limit:
            raise _exceeded(f"calls exceed {self.call_limit:,}", "MAX_CALLS")

    def expect(self, size: int, what: str) -> None:
        """Refuse an operation estimated to build ``size`` characters, before it runs (what it
        builds is charged after, by ``charge``)."""
        if size > MAX_OUTPUT_CHARS:
            raise _exceeded(f"{what} would build {size:,} characters, over {MAX_OUTPUT_CHARS:,}", "MAX_OUTPUT_CHARS")

    def digits(self, digits: float, what: str) -> None:
        """Refuse an integer estimated to have ``digits`` decimal digits, before computing it."""
        if digits > MAX_NUMBER_DIGITS:
            too_many = f"{what} would have about {int(digits):,} digits, over {MAX_NUMBER_DIGITS:,}"
            raise _exceeded(too_many, "MAX_NUMBER_DIGITS")

    def charge(self, value: _T, what: str = "a value the template builds") -> _T:
        """Count what the template built: ``value``'s ``built_size`` (a number: its digits)."""
        if isinstance(value, int) and not isinstance(value, bool):
            self.digits(value.bit_length() * _DIGITS_PER_BIT, what)
        elif isinstance(value, (str, list, tuple, Mapping)):
            size = built_size(value)
            if size > MAX_OUTPUT_CHARS:
                raise _exceeded(f"{what} has {size:,} characters, over {MAX_OUTPUT_CHARS:,}", "MAX_OUTPUT_CHARS")
            self._spend(size)
        return value

    def read(self, *values: Any) -> None:
        """Spend the steps of reading ``values`` once (``work``), before an operation does."""
        for value in values:
            self.step(self.measure(value))

    def measure(self, value: Any) -> int:
        """``work(value)``, counted no further than the steps left (the count is a walk too)."""
        return work(value, self.step_limit - self.steps + 1)

    def collect(self, iterable: Iterable[_T], what: str) -> list[_T]:
        """``iterable``'s items as a list (a generator a filter is given), each counted as a
        step and as ``ITEM_CHARS`` as it is taken, so that a generator of too many items stops
        before they are all made."""
        collected: list[_T] = []
        for item in iterable:
            collected.append(item)
            self.step(1)
            if len(collected) * ITEM_CHARS > MAX_OUTPUT_CHARS:
                too_many = f"{what} takes more than {MAX_OUTPUT_CHARS // ITEM_CHARS:,} items"
                raise _exceeded(f"{too_many} ({MAX_OUTPUT_CHARS:,} characters)", "MAX_OUTPUT_CHARS")
        return self.charge(collected, what)

    def output(self, pieces: Iterable[str]) -> list[str]:
        """The pieces of a template's output (or of a macro's, a block's), counted as they
        arrive: the output stops at ``MAX_OUTPUT_CHARS`` before it is joined."""
        collected: list[str] = []
        total = 0
        for piece in pieces:
            total += len(piece)
            if total > MAX_OUTPUT_CHARS:
                raise _exceeded(f"template output exceeds {MAX_OUTPUT_CHARS:,} characters", "MAX_OUTPUT_CHARS")
            collected.append(piece)
        self._spend(total)
        return collected

    def _spend(self, size: int) -> None:
        self.built += size
        if self.built > MAX_BUILT_CHARS:
            raise _exceeded(f"text and values built exceed {MAX_BUILT_CHARS:,} characters", "MAX_BUILT_CHARS")


class Counted:
    """A loop's iterable, each item counted against ``budget``. Its length is the iterable's,
    so ``loop.length`` reads it without going through the items."""

    __slots__ = ("_budget", "_iterable")

    def __init__(self, iterable: Any, budget: Budget) -> None:
        self._iterable, self._budget = iterable, budget

    def __iter__(self) -> Iterator[Any]:
        return self._budget.iterate(self._iterable)

    def __len__(self) -> int:
        return len(self._iterable)


def _exceeded(what: str, name: str) -> BudgetExceeded:
    return BudgetExceeded(f"the chat template went over its budget: {what} (codec.render.budget.{name})")


_CURRENT: ContextVar[Budget] = ContextVar("codec_template_budget")


def current() -> Budget:
    """The budget of the render running in this thread or task."""
    return _CURRENT.get()


def spending(budget: Budget) -> Any:
    """Make ``budget`` the current one; returns the token ``restore`` takes."""
    return _CURRENT.set(budget)


def restore(token: Any) -> None:
    """Put back the budget that was current before ``spending``."""
    _CURRENT.reset(token)


def text_size(value: Any, indent: int = 0, per_item: int = 2) -> int:
    """About how many characters ``str(value)`` or its JSON would have (``indent`` characters
    per level and ``per_item`` per item: quotes or brackets, separators), counted without
    building it; counting stops past ``MAX_OUTPUT_CHARS``.

    A list that repeats one long string a thousand times is small, but its text is not.
    """
    if type(value) is str:
        return len(value)
    total = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack and total <= MAX_OUTPUT_CHARS:
        item, depth = stack.pop()
        total += per_item + depth * indent
        leaf = _leaf_size(item)
        if leaf is not None:
            total += leaf
        elif isinstance(item, (str, bytes)):
            total += len(item)
        elif isinstance(item, jinja2.utils.Namespace):
            stack.append((object.__getattribute__(item, "_Namespace__attrs"), depth))
        elif isinstance(item, (Mapping, list, tuple, set, frozenset)):
            total += _children(item, depth + 1, per_item + (depth + 1) * indent, stack)
        else:
            total += 24  # a number of another type, an object's short repr
    return total


def _leaf_size(item: Any) -> int | None:
    """The text size of a plain scalar (``text_size`` without the item's own share), or
    ``None`` for anything else."""
    kind = type(item)
    if kind is str or kind is bytes:
        return len(item)
    if kind is int:
        return int(item.bit_length() * _DIGITS_PER_BIT)
    if kind is float or kind is bool or item is None:
        return 24
    return None


def _children(item: Any, depth: int, share: int, stack: list[tuple[Any, int]]) -> int:
    """The text size of a collection's scalar children, each with its ``share``; the others
    go onto ``stack`` (counted one by one, they made ``text_size`` slow on large mappings)."""
    total = 0
    children = (part for pair in item.items() for part in pair) if isinstance(item, Mapping) else item
    for child in children:
        leaf = _leaf_size(child)
        if leaf is None:
            stack.append((child, depth))
        else:
            total += share + leaf
            if total > MAX_OUTPUT_CHARS:
                break
    return total
