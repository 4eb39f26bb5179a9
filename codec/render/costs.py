"""What each call a user's chat template makes costs its budget (``codec.render.budget``).

``StrictSandbox`` (``codec.render.sandbox``) wraps every filter and test with ``budgeted_filter``
and ``budgeted_test``, and passes every call through ``estimated_call``:

- every filter and test call spends ``CALL_STEPS`` (``map`` and ``select`` make one per item);
- filters, tests, methods and functions spend the work of reading what they are given
  (``Budget.measure``), weighted where they do more than read it once (sorting, regular
  expressions, pretty-printing: ``_WORK_FACTOR``, from measured times);
- calls that can build far more than they are given are estimated first
  (``codec.render.amplifiers``), and a generator a filter consumes whole is counted an item at
  a time (``Budget.collect``).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Mapping, Sized
from typing import Any

import jinja2.runtime
import jinja2.utils

from codec.render import amplifiers
from codec.render.budget import CALL_STEPS, Budget, current


def estimated_call(budget: Budget, function: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Spend the work of reading what a call is given (not for a macro, whose body is counted as
    it runs), and refuse a call estimated to build too much; returns the arguments to call with
    (``join`` is given its items as a list, read once)."""
    owner = getattr(function, "__self__", None)
    wrapped = getattr(function, "__wrapped__", None)  # the sandbox's wrapper of str.format
    if type(function) is types.BuiltinMethodType and isinstance(owner, (str, bytes)):
        estimate = amplifiers.METHODS.get(function.__name__)
        if function.__name__ == "join" and args and not isinstance(args[0], Sized):
            args = (budget.collect(args[0], "str.join()"), *args[1:])
        budget.read(owner, *args, *kwargs.values())
        if estimate is not None:
            _expect(budget, estimate, (owner, *args), kwargs, f"str.{function.__name__}()")
    elif type(function) is types.BuiltinMethodType and isinstance(owner, (list, tuple, Mapping)):
        budget.read(*args, *kwargs.values(), *(() if isinstance(owner, Mapping) else (owner,)))  # d.get(k): O(1)
    elif type(wrapped) is types.BuiltinMethodType and isinstance(wrapped.__self__, str):
        budget.read(wrapped.__self__)
        mapping = kwargs if wrapped.__name__ == "format" else (args[0] if args else {})
        positional = args if wrapped.__name__ == "format" else ()
        _expect(budget, amplifiers.format_method, (wrapped.__self__, positional, mapping), {}, "str.format()")
    elif function is jinja2.utils.generate_lorem_ipsum:
        _expect(budget, amplifiers.lipsum, args, kwargs, "lipsum()")
    elif not isinstance(function, jinja2.runtime.Macro):  # loop.changed(text) compares it, dict(d) copies
        budget.read(*args, *kwargs.values())  # a macro's body is counted instead, as it runs
    return args


def _expect(budget: Budget, estimate: amplifiers.Estimate, args: Any, kwargs: Any, what: str) -> None:
    try:
        size = estimate(*args, **kwargs)
    except (TypeError, ValueError, AttributeError):
        return  # arguments the operation itself refuses: it raises its own error, building nothing
    budget.expect(size, what)


def budgeted_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (the filter ``name``) estimated before it runs when it can build much more
    than it is given, and measured after. The wrapper keeps Jinja's ``pass_context`` /
    ``pass_environment`` marks, so it is called exactly as the filter was."""
    estimate = amplifiers.FILTERS.get(name)
    skip = 1 if hasattr(function, "jinja_pass_arg") else 0  # a context or an environment comes first
    sized = name in amplifiers.SIZED_VALUE
    factor = _WORK_FACTOR.get(name, 1) if name not in _CONSTANT_TIME else 0
    by_item = name in _BY_ITEM

    @functools.wraps(function)
    def budgeted(*args: Any, **kwargs: Any) -> Any:
        budget = current()
        if sized and len(args) > skip and not isinstance(args[skip], Sized):
            args = (*args[:skip], budget.collect(args[skip], f"the {name} filter"), *args[skip + 1 :])
        if estimate is not None:  # first: what a refusal says is more telling
            _expect(budget, estimate, args[skip:], kwargs, f"the {name} filter")
        if factor:
            reading = sum(map(budget.measure, (*args[skip + 1 :], *kwargs.values())))
            budget.step(factor * (reading + _value_work(budget, args[skip:], by_item)))
        budget.step(CALL_STEPS)
        return budget.charge(function(*args, **kwargs), f"the result of the {name} filter")

    return budgeted


def _value_work(budget: Budget, args: tuple[Any, ...], by_item: bool) -> int:
    """The work of reading a filter's value: ``work``, or for a filter that takes a text
    character by character (``join``, ``max``, ``map``), a step per character."""
    if not args:
        return 0
    value = args[0]
    return len(value) if by_item and isinstance(value, (str, bytes)) else budget.measure(value)


# Filters that read nothing but the value's length or one end: the call alone, whatever its size.
_CONSTANT_TIME = frozenset({"length", "count", "first", "last", "default", "d", "attr"})
# Filters that do more than read once: sorting makes about log2(n) comparisons an item (for
# lists of up to a million items); regular expressions take several steps a character.
# Measured: ``title`` takes about 85 ns a character, ``pprint`` 2.7 µs an entry of a mapping.
_REGEX_FILTERS = ("title", "striptags", "urlize", "wordwrap", "wordcount")
_WORK_FACTOR = {
    **dict.fromkeys(("sort", "dictsort", "groupby"), 20),
    **dict.fromkeys(_REGEX_FILTERS, 32),
    **dict.fromkeys(("pprint", "urlencode", "xmlattr"), 16),
    "tojson": 4,  # the estimate walks the value in Python, then json.dumps writes it
}
# Filters that go through their value item by item: a text's characters one at a time.
_BY_ITEM = frozenset(
    {"join", "min", "max", "sum", "unique", "sort", "list", "batch", "slice", "groupby", "map"}
    | {"select", "reject", "selectattr", "rejectattr"}
)
# Tests that look only at their value's type or a number (``is string``, ``is defined``): the
# call alone. Any other (``x is in text``, ``text is lower``) reads its operands.
_CONSTANT_TESTS = frozenset(
    {"defined", "undefined", "none", "boolean", "false", "true", "integer", "float", "number", "string"}
    | {"mapping", "iterable", "sequence", "callable", "sameas", "escaped", "filter", "test"}
    | {"odd", "even", "divisibleby"}
)


def budgeted_test(name: str, test: Any) -> Callable[..., Any]:
    """The test ``name``, spending a call's steps before it runs (``select('odd')`` runs it
    once an item), and the work of reading its operands unless it looks only at a type."""
    reads = name not in _CONSTANT_TESTS

    @functools.wraps(test)
    def budgeted(*args: Any, **kwargs: Any) -> Any:
        budget = current()
        budget.step(CALL_STEPS + (sum(map(budget.measure, args)) if reads else 0))
        return test(*args, **kwargs)

    return budgeted
