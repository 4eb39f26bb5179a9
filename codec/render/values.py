"""The values a chat template is given: rebuilt from JSON types, walked without recursion.

transformers rebuilds everything a template sees from plain JSON types (``_plain_template_data``:
string, number and mapping subclasses become the base type, dataclasses and pydantic models their
fields) and turns any other object into a ``"<TypeName>"`` placeholder, so no caller object with
methods the sandbox does not know reaches the template. ``plain`` does exactly that, for media
payloads: templates only test which media keys are there, never print them.

Arguments, tool schemas and option values are printed, though: a ``datetime.date`` there would
render as ``"<date>"`` and the caller's value would be lost without a word. ``json_value``
rebuilds them the same way but refuses such a value with a ``RenderError`` naming its path.

Both walks are iterative, and both refuse a value nested deeper than ``MAX_DEPTH``: templates
walk values recursively, and a value deep enough would end the render in a ``RecursionError``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from codec.errors import RenderError, describe

MAX_DEPTH = 100
"""The deepest nesting of lists and objects, counted from the top of each value (an argument
object, a tool, an option value), that a template is given. Gemma's ``format_argument`` macro
takes about five Python frames per level and reaches Python's default recursion limit (1,000)
near 200 levels; 100 leaves room for the caller's own stack. Parsed replies nest at most
``Limits.max_depth`` (64) levels, so they always render back."""

_SCALARS = frozenset({str, int, float, bool, type(None)})

# Where a value sits, as a chain of (parent, key) links from a root label; formatted only for
# an error message, so that walking a large value builds no path strings.
_Where = tuple[Any, ...]
_SHOWN = 120  # characters of a path shown in an error; a path 100 levels deep is cut in the middle


def where_text(where: _Where) -> str:
    """``messages[2].tool_calls[0].function.arguments.when`` for a chain of links."""
    parts: list[str] = []
    while len(where) == 2:
        where, key = where
        parts.append(f"[{key}]" if isinstance(key, int) and not isinstance(key, bool) else f".{key}")
    parts.append(str(where[0]))
    text = "".join(reversed(parts))
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN // 2]}...{text[-_SHOWN // 2 :]}"


def plain(value: Any) -> Any:
    """``value`` rebuilt from JSON types as transformers does; any other object becomes a
    ``"<TypeName>"`` placeholder."""
    return _rebuild(value, ("value",), None, placeholders=True)


def json_value(value: Any, where: str, message_index: int | None = None) -> Any:
    """``value`` rebuilt from JSON types as transformers does; any other object is a
    ``RenderError`` naming its path (``where`` names the value itself)."""
    if type(value) in _SCALARS:  # an option is nearly always one: nothing to walk
        return value
    return _rebuild(value, (where,), message_index, placeholders=False)


class _Refused(Exception):
    """A value the template cannot be given; the text says which and why."""


class _InProgress(list[Any]):
    """A tuple's copy while its items are filled in (tuples stay tuples, as in transformers)."""


def _rebuild(value: Any, root: _Where, message_index: int | None, *, placeholders: bool) -> Any:
    """The iterative walk behind ``plain`` and ``json_value``: each container is copied when
    popped, and its children are written into the copy as they are popped in turn. Tuples are
    filled as lists and frozen at the end, innermost first."""
    top: list[Any] = [None]
    stack: list[_Task] = [(value, top, 0, root, 0)]
    tuples: list[tuple[Any, Any]] = []
    try:
        while stack:
            item, target, slot, where, depth = stack.pop()
            copy = target[slot] = _copy(item, where, depth, stack, placeholders)
            if type(copy) is _InProgress:
                tuples.append((target, slot))
    except _Refused as error:
        raise RenderError(str(error), message_index=message_index) from None
    for target, slot in reversed(tuples):
        target[slot] = tuple(target[slot])
    return top[0]


# A value still to copy: (value, the container to write it into, its slot there, where, depth).
_Task = tuple[Any, Any, Any, _Where, int]


def _copy(item: Any, where: _Where, depth: int, stack: list[_Task], placeholders: bool) -> Any:
    """``item`` as the template gets it: a scalar, or a copy of a container whose children are
    pushed onto ``stack`` (``_Refused`` when it cannot be given)."""
    kind = type(item)
    if kind in _SCALARS:
        return item
    if isinstance(item, (Mapping, list, tuple)):
        if depth >= MAX_DEPTH:
            raise _Refused(
                f"{where_text(where)} nests deeper than {MAX_DEPTH} levels of lists and objects, "
                "the most a template is given (codec.render.values.MAX_DEPTH)"
            )
        return _container(item, where, depth + 1, stack, placeholders)
    base = _base_value(item)
    if base is not item:
        return base
    converted = _converted(item)
    if converted is not item:
        return _copy(converted, where, depth, stack, placeholders)  # once: the result is plain
    if placeholders:
        return f"<{kind.__name__}>"
    raise _Refused(
        f"{where_text(where)} is {describe(item)} ({kind.__name__}), not a JSON value; convert it "
        "(a date to an ISO 8601 string, a set to a list, ...) before rendering"
    )


def _base_value(item: Any) -> Any:
    """A str, int or float subclass (an enum, a numpy float) as its base value, as the base type
    prints it (``str(StrEnum.A)`` would say "StrEnum.A"): a sandbox does not know the subclass's
    methods. Anything else is returned as it is."""
    for base in (str, int, float):
        if isinstance(item, base):
            return getattr(base, f"__{base.__name__}__")(item)
    return item


def _converted(item: Any) -> Any:
    """A numpy scalar's value, a dataclass's fields or a pydantic model's dump; else ``item``."""
    if any(cls.__name__ == "generic" and cls.__module__ == "numpy" for cls in type(item).__mro__):
        return item.item()  # without importing numpy
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return {field.name: getattr(item, field.name) for field in dataclasses.fields(item)}
    if callable(getattr(item, "model_dump", None)):
        return item.model_dump()
    return item


def _container(item: Any, where: _Where, depth: int, stack: list[_Task], placeholders: bool) -> Any:
    """An empty-slotted copy of a mapping, list or tuple; its non-scalar children go onto
    ``stack`` in reverse, so they are popped in document order and the first problem is the one
    reported."""
    pending: list[_Task] = []
    copy: Any
    if isinstance(item, Mapping):
        copy = {}
        for key, child in item.items():
            key = _key(key, where, placeholders)
            copy[key] = child
            if type(child) not in _SCALARS:
                pending.append((child, copy, key, (where, key), depth))
    else:
        copy = list(item) if isinstance(item, list) else _InProgress(item)
        for number, child in enumerate(copy):
            if type(child) not in _SCALARS:
                pending.append((child, copy, number, (where, number), depth))
    stack.extend(reversed(pending))
    return copy


def _key(key: Any, where: _Where, placeholders: bool) -> Any:
    """A mapping key as transformers rebuilds it; only JSON's scalar keys when refusing others
    (``json.dumps`` writes numbers, booleans and null as strings; nothing else)."""
    if type(key) is str:
        return key
    if placeholders:
        return _rebuild(key, (where, "key"), None, placeholders=True)  # hashable: a scalar or tuple
    base = _base_value(key)
    if type(base) in _SCALARS:
        return base
    raise _Refused(
        f"{where_text(where)} has the key {describe(key)} ({type(key).__name__}), which is not "
        "a JSON object key; use a string"
    )


def strings(value: Any) -> Iterator[str]:
    """Every string in a rebuilt value, keys included, in no particular order."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            yield item
        elif type(item) is dict:
            for key, child in item.items():
                if type(key) is str:
                    yield key
                stack.append(child)
        elif type(item) in (list, tuple):
            stack.extend(item)


def strings_with_paths(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every string in a rebuilt value, keys included, with its path, in document order."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, Mapping):
            for key, child in reversed(list(item.items())):
                stack.append((child, f"{where}.{key}"))
                if isinstance(key, str):
                    stack.append((key, f"{where} key {describe(key)}"))
        elif isinstance(item, (list, tuple)):
            stack.extend((child, f"{where}[{number}]") for number, child in reversed(list(enumerate(item))))
