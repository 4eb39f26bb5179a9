"""JSON as RFC 8259 writes it, for what crosses ``codec serve``'s wire in either direction.

Python's ``json.loads`` takes more than JSON, and what it takes breaks later, far from the
cause: ``NaN`` and ``Infinity`` (not JSON; ``httpx`` refuses to send them on, a 500), a lone
surrogate ``"\\ud800"`` (valid escape, invalid text: encoding the prompt or the reply to UTF-8
fails), an integer of 5,000 digits (``ValueError``), and nesting thousands deep
(``RecursionError`` in the decoder, or later in pydantic, Jinja or ``json.dumps``). ``loads``
refuses all of them here, with where.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_SHOWN_STEPS = 4  # of a long path, at each end


class BadJSON(Exception):
    """The text is not JSON codec serve takes: ``message`` says what and ``path`` where
    (``messages[0].content``; ``None`` for the text as a whole)."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message if path is None else f"{path}: {message}")
        self.message = message
        self.path = path


def loads(text: str | bytes, *, max_depth: int) -> Any:
    """The JSON value in ``text`` (UTF-8 when bytes); ``BadJSON`` when it is not JSON, holds
    ``NaN`` or ``Infinity``, a lone surrogate, or arrays and objects nested deeper than
    ``max_depth``."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BadJSON(f"not UTF-8: byte {error.object[error.start]:#04x} at offset {error.start}") from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}, offset {error.pos}"
        raise BadJSON(f"not JSON: {error.msg} ({where})") from None
    except RecursionError:
        raise BadJSON(_too_deep(max_depth)) from None
    except ValueError as error:  # integers longer than sys.get_int_max_str_digits()
        raise BadJSON(f"not JSON codec takes: {error}") from None
    check(value, max_depth=max_depth)
    return value


def check(value: Any, *, max_depth: int) -> None:
    """``BadJSON`` when a string (or key) in ``value`` holds a lone surrogate, or arrays and
    objects nest deeper than ``max_depth``. Depth-first with a stack of iterators: memory grows
    with the depth, not the width, and the check itself cannot recurse too deep."""
    if isinstance(value, str):
        _check_text(value, ())
    if not isinstance(value, dict | list):
        return
    stack: list[tuple[Iterator[tuple[Any, Any]], tuple[Any, ...]]] = [(_pairs(value), ())]
    while stack:
        pairs, path = stack[-1]
        for key, inner in pairs:
            if isinstance(key, str):
                _check_text(key, path, key)
            if isinstance(inner, str):
                _check_text(inner, path, key)
            elif isinstance(inner, dict | list):
                if len(stack) >= max_depth:
                    raise BadJSON(_too_deep(max_depth), _dotted((*path, key)))
                stack.append((_pairs(inner), (*path, key)))
                break
        else:
            stack.pop()


def _pairs(container: dict[str, Any] | list[Any]) -> Iterator[tuple[Any, Any]]:
    return iter(container.items()) if isinstance(container, dict) else enumerate(container)


def _refuse_constant(name: str) -> Any:
    raise BadJSON(f"{name} is not JSON (numbers must be finite)")


def _check_text(text: str, path: tuple[Any, ...], *key: Any) -> None:
    """``key``: the last step of the path, joined only when there is an error to report."""
    found = _SURROGATE.search(text)
    if found is not None:
        code = f"\\u{ord(found.group()):04x}"
        where = _dotted((*path, *key))
        raise BadJSON(f"a lone surrogate {code} at character {found.start()}: not Unicode text", where)


def _too_deep(max_depth: int) -> str:
    return f"arrays and objects nested deeper than {max_depth}"


def _dotted(path: tuple[Any, ...]) -> str | None:
    """``("messages", 0, "content")`` as ``messages[0].content``; a deep path keeps its first
    and last steps, and keys are escaped (a key may be the lone surrogate reported)."""
    if not path:
        return None
    text = ""
    for number, key in enumerate(path):
        if _SHOWN_STEPS <= number < len(path) - _SHOWN_STEPS:
            text += "…" if number == _SHOWN_STEPS else ""
            continue
        shown = str(key).encode("utf-8", "backslashreplace").decode("utf-8")
        text += f"[{shown}]" if isinstance(key, int) else (f".{shown}" if text else shown)
    return text
