"""Size estimates for the operations that can build far more than they are given.

``'x' * 10**9``, ``'x'.center(10**9)``, ``'%999999999s' % 1``, ``'{:>999999999}'.format(1)``,
``s.replace('a', s)``, ``big.join(range(100000))``, ``10 ** 10 ** 8``, ``lines | indent(10**8)``,
``[1] | batch(10**9, 0)``, ``text | list``, ``text.split(',')``, or ``[big] * 100000`` turned into
text: each builds its result in one step, so measuring the result afterwards is too late. These
functions say, before the operation runs, about how many characters it will build (a list's item
counting ``ITEM_CHARS``); ``codec.render.sandbox`` refuses it when that is over the budget
(``codec.render.budget``). The estimates are upper bounds where that is cheap, and never smaller
than the result.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping, Sized
from typing import Any

from codec.render.budget import text_size
from codec.render.sizes import ITEM_CHARS

Estimate = Callable[..., int]

# printf-style conversions: %(name)-10.5s, %*d, %%
_PRINTF = re.compile(r"%(?:\([^)]*\))?[#0 +\-]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")
_DIGITS = re.compile(r"\d+")


def _int(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def _ints(values: Any) -> int:
    """The sum of the positive integers among ``values`` (widths a format may read from them)."""
    return sum(_int(value) for value in values)


def repeat(left: Any, right: Any) -> int:
    """``left * right``: a sequence repeated, or 0 for numbers."""
    if isinstance(left, int) and isinstance(right, Sized) and not isinstance(right, Mapping):
        left, right = right, left
    if isinstance(left, Sized) and not isinstance(left, Mapping) and isinstance(right, int):
        return _items(left) * max(right, 0)
    return 0


def _items(value: Any) -> int:
    """What a copy of ``value`` counts for: a text's characters, or a sequence's items."""
    if isinstance(value, (str, bytes)):
        return len(value)
    return len(value) * ITEM_CHARS if isinstance(value, Sized) else 0


def _listed(value: Any, *_: Any, **__: Any) -> int:
    """A list of ``value``'s items (``list``, ``sort``, ``unique``): a text's characters become
    items; a mapping's items (from ``dictsort``, ``items``) are new pairs."""
    if not isinstance(value, Sized):
        return 0
    return len(value) * ITEM_CHARS * (4 if isinstance(value, Mapping) else 1)


def power_digits(left: Any, right: Any) -> float:
    """Decimal digits of ``left ** right`` for integers (0 for anything else)."""
    if type(left) is not int or type(right) is not int or right <= 1 or abs(left) <= 1:
        return 0
    return abs(left).bit_length() * right * 0.302


def printf(template: Any, arguments: Any) -> int:
    """``template % arguments`` for a string template: its length, the widths and precisions
    its conversions ask for (``*`` reads them from the arguments) and the arguments' text."""
    if not isinstance(template, str):
        return 0
    values = list(arguments.values()) if isinstance(arguments, Mapping) else arguments
    values = list(values) if isinstance(values, tuple) else [values]
    widths = 0
    for match in _PRINTF.finditer(template):
        for number in match.groups():
            widths += _ints(values) if number == "*" else int(number or 0)
    return len(template) + widths + sum(text_size(value) for value in values)


def format_method(template: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> int:
    """``template.format(*args, **kwargs)``: its length, the numbers in its format specs (a spec
    with a nested field may read a width from any argument) and the arguments' text."""
    values = [*args, *kwargs.values()]
    widths = 0
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return len(template)  # format raises the same error before building anything
    for _, _, spec, _ in fields:
        if spec:
            widths += sum(int(number) for number in _DIGITS.findall(spec))
            widths += _ints(values) if "{" in spec else 0
    return len(template) + widths + sum(text_size(value) for value in values)


def replace(text: Any, old: Any, new: Any, count: Any = -1) -> int:
    """``text.replace(old, new, count)`` (a string's or a bytes' method, or the filter, which
    first turns any value into text: then every character may be a match)."""
    size = text_size(text)
    if not isinstance(old, (str, bytes)) or not isinstance(new, (str, bytes)):
        return size
    searched: Any = text  # str or bytes, searched for `old` of the same kind (else count raises)
    found = searched.count(old) if isinstance(text, (str, bytes)) and old else size + 1
    if type(count) is int and count >= 0:
        found = min(found, count)
    return size + found * max(len(new) - len(old), 0)


def join(separator: Any, items: Any) -> int:
    """``separator.join(items)`` (``items`` already a sized collection)."""
    return sum(text_size(item) for item in items) + text_size(separator) * max(len(items) - 1, 0)


def _pad(text: Any, width: Any = 0, *_: Any, **__: Any) -> int:
    return max(text_size(text), _int(width))


def _expandtabs(text: Any, tabsize: Any = 8) -> int:
    return text_size(text) + (text.count("\t") if isinstance(text, str) else 0) * _int(tabsize)


def _translate(text: Any, table: Any) -> int:
    longest = max((len(value) for value in table.values() if isinstance(value, str)), default=1)
    return text_size(text) * max(longest, 1) if isinstance(table, Mapping) else text_size(text)


def _encode(text: Any, *_: Any, **__: Any) -> int:
    return text_size(text) * 4  # UTF-8 takes at most 4 bytes per character


def _join_method(separator: Any, items: Any) -> int:
    return join(separator, items)


def _split(text: Any, separator: Any = None, maxsplit: Any = -1) -> int:
    """``text.split(separator)`` (``rsplit`` alike): the text again, and an item per piece."""
    if not isinstance(text, (str, bytes)):
        return 0
    searched: Any = text  # str or bytes, searched for a separator of the same kind
    found = searched.count(separator) if isinstance(separator, type(text)) and separator else len(text) // 2
    if type(maxsplit) is int and maxsplit >= 0:
        found = min(found, maxsplit)
    return len(text) + (found + 1) * ITEM_CHARS


def _splitlines(text: Any, *_: Any, **__: Any) -> int:
    return len(text) + (len(text) + 1) * ITEM_CHARS if isinstance(text, (str, bytes)) else 0


# Methods of str (and bytes), by name: the estimate takes the string, then the call's arguments.
METHODS: dict[str, Estimate] = {
    "center": _pad,
    "ljust": _pad,
    "rjust": _pad,
    "zfill": _pad,
    "expandtabs": _expandtabs,
    "replace": replace,
    "join": _join_method,
    "translate": _translate,
    "encode": _encode,
    "split": _split,
    "rsplit": _split,
    "splitlines": _splitlines,
}


def _indent(text: Any, width: Any = 4, *_: Any, **__: Any) -> int:
    lines = text.count("\n") + 1 if isinstance(text, str) else text_size(text)
    return text_size(text) + lines * (len(width) if isinstance(width, str) else _int(width))


def _wordwrap(
    text: Any, width: Any = 79, break_long_words: Any = True, wrapstring: Any = None, *_: Any, **__: Any
) -> int:
    size = text_size(text)
    breaks = size // max(_int(width), 1) + (text.count("\n") if isinstance(text, str) else size) + 1
    return size + breaks * (len(wrapstring) if isinstance(wrapstring, str) else 1)


def _format_filter(template: Any, *args: Any, **kwargs: Any) -> int:
    return printf(template, kwargs or args)


def _join_filter(items: Any, separator: Any = "", *_: Any, **__: Any) -> int:
    return join(separator, items)


def _tojson(
    value: Any, ensure_ascii: Any = False, indent: Any = None, separators: Any = None, *_: Any, **__: Any
) -> int:
    width = len(indent) if isinstance(indent, str) else _int(indent)
    between = sum(map(len, separators)) if isinstance(separators, (list, tuple)) else 2
    escaped = 6 if ensure_ascii else 1  # a non-ASCII character as \uXXXX
    return text_size(value, indent=width + 1, per_item=between) * escaped  # +1: the line break


def _grow(items: Any, count: Any = 0, *_: Any, **__: Any) -> int:
    # batch(size) fills the last row: up to size - 1 more items; slice makes `count` rows, and
    # batch up to len(items) rows (of one item each), each row a list of its own: at most
    # len(items) + count items, and as many rows
    return (len(items) + _int(count)) * (ITEM_CHARS + _ROW_CHARS)


_ROW_CHARS = 64  # an empty list takes 56 bytes


def _groups(items: Any, *_: Any, **__: Any) -> int:
    # groupby sorts a copy of the items and makes up to one (grouper, list) pair per item
    return _listed(items) * 2 + len(items) * 2 * _ROW_CHARS if isinstance(items, Sized) else 0


def _sum(items: Any, attribute: Any = None, start: Any = 0) -> int:
    # sum() of lists copies the growing total once per item
    return len(items) * sum(text_size(item) for item in items) if isinstance(start, (list, tuple)) else 0


def _text(factor: int) -> Estimate:
    def estimate(value: Any, *_: Any, **__: Any) -> int:
        return text_size(value) * factor

    return estimate


# Filters, by name: the estimate takes the filter's value, then its arguments (without the
# context or environment jinja passes some filters first).
FILTERS: dict[str, Estimate] = {
    "center": _pad,
    "indent": _indent,
    "wordwrap": _wordwrap,
    "replace": replace,
    "format": _format_filter,
    "join": _join_filter,
    "tojson": _tojson,
    "batch": _grow,
    "slice": _grow,
    "sum": _sum,
    "list": _listed,
    "sort": _listed,
    "unique": _listed,
    "dictsort": _listed,
    "groupby": _groups,
    "reverse": _items,
    "pprint": _text(2),
    "urlize": _text(4),
    "escape": _text(6),
    "e": _text(6),
    "forceescape": _text(6),
    "xmlattr": _text(6),
    "urlencode": _text(12),
    **dict.fromkeys(
        ("string", "upper", "lower", "title", "capitalize", "trim", "striptags", "truncate", "safe", "wordcount"),
        _text(1),
    ),
}

# Filters that read their whole value, or more than once: a generator (``map``'s result) is
# made a list first, its items counted as they come (``Budget.collect``), and the filter is
# given that list.
SIZED_VALUE = frozenset({"join", "batch", "slice", "sum", "list", "sort", "unique", "reverse", "groupby"})


def lipsum(*args: Any, **kwargs: Any) -> int:
    """``lipsum(n=5, html=True, min=20, max=100)``: ``n`` paragraphs of at most ``max`` words."""
    paragraphs = args[0] if args else kwargs.get("n", 5)
    words = args[3] if len(args) > 3 else kwargs.get("max", 100)
    return _int(paragraphs) * (_int(words) * 16 + 16)
