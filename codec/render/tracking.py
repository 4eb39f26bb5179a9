"""Which message (or tool) a failing template was reading, found in one more render.

When a template fails, the error names the message at fault. Rendering every prefix of the
conversation until one fails would find it, at a cost quadratic in the conversation's length
(17 s for 3,200 messages). Instead the template is rendered once more, with the messages and
tools wrapped so that each read records which one it was and at what path: when the render
fails again, the last read is where it failed, and the last key looked up and missing explains
Jinja's ``'dict object' has no attribute 'id'`` in words. The wrappers are ``dict`` and ``list``
subclasses holding the same values, so the template behaves as it did; they are used only on
this second render, so a render that succeeds pays nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any


@dataclasses.dataclass(slots=True)
class Reads:
    """What a render read: the last message or tool (``owner``: ``("messages", 3)``) and the
    path of the last mapping read in it; the path of the last lookup of each missing key."""

    owner: tuple[str, int] | None = None
    path: str | None = None
    missing: dict[str, str] = dataclasses.field(default_factory=dict)
    last_missing: str | None = None

    @property
    def message_index(self) -> int | None:
        """The index of the message read last, ``None`` when a tool was read after it."""
        return self.owner[1] if self.owner is not None and self.owner[0] == "messages" else None


def track(items: list[Any] | None, name: str, reads: Reads) -> list[Any] | None:
    """``items`` (the template's messages or tools) wrapped so that reads are recorded."""
    if items is None:
        return None
    wrapped = [_wrap(item, (name, index), f"{name}[{index}]", reads) for index, item in enumerate(items)]
    return _TrackedList(wrapped, None, name, reads)


def failing_read(render: Callable[[dict[str, Any]], str], context: dict[str, Any]) -> Reads:
    """What the template read last when it failed, from one more render of ``context``; empty
    when that render does not fail."""
    reads = Reads()
    tracked = {
        **context,
        "messages": track(context["messages"], "messages", reads),
        "tools": track(context["tools"], "tools", reads),
    }
    try:
        render(tracked)
    except Exception:  # the same failure as before: the template's code is outside our control
        return reads
    return Reads()


def _wrap(value: Any, owner: tuple[str, int] | None, path: str, reads: Reads) -> Any:
    """``value`` tracked, when it is a mapping or a list (inside a message or tool ``owner``)."""
    if owner is None:  # the top-level list: its items were wrapped with their own owners
        return value
    if type(value) is dict:
        return _TrackedDict(value, owner, path, reads)
    if type(value) is list:
        return _TrackedList(value, owner, path, reads)
    return value


class _TrackedDict(dict[str, Any]):
    """A message, a tool or a mapping inside one: a ``dict`` recording each key read."""

    __slots__ = ("_codec_owner", "_codec_path", "_codec_reads")

    def __init__(self, value: dict[str, Any], owner: tuple[str, int], path: str, reads: Reads) -> None:
        super().__init__(value)
        self._codec_owner, self._codec_path, self._codec_reads = owner, path, reads

    def __getitem__(self, key: str) -> Any:
        reads = self._codec_reads
        reads.owner, reads.path = self._codec_owner, self._codec_path
        try:
            value = super().__getitem__(key)
        except KeyError:
            if isinstance(key, str):
                reads.missing[key] = reads.last_missing = f"{self._codec_path} has no {key!r}"
            raise
        return _wrap(value, self._codec_owner, f"{self._codec_path}.{key}", reads)

    def get(self, key: str, default: Any = None) -> Any:
        """``dict.get``, recorded like ``[key]`` (a missing key is not recorded as missing:
        ``get`` is how templates ask whether it is there)."""
        return self[key] if super().__contains__(key) else default


class _TrackedList(list[Any]):
    """A list whose items are tracked as they are taken out (a copy of the item references;
    the items are wrapped when read, so only what the template reads costs anything)."""

    __slots__ = ("_codec_owner", "_codec_path", "_codec_reads")

    def __init__(self, items: list[Any], owner: tuple[str, int] | None, path: str, reads: Reads) -> None:
        super().__init__(items)
        self._codec_owner, self._codec_path, self._codec_reads = owner, path, reads

    def __getitem__(self, index: Any) -> Any:
        item = super().__getitem__(index)
        if isinstance(index, slice):
            path = f"{self._codec_path}[{index.start or ''}:{index.stop or ''}]"
            return _TrackedList(item, self._codec_owner, path, self._codec_reads)
        return self._read(item, index % len(self) if isinstance(index, int) else index)

    def __iter__(self) -> Iterator[Any]:
        for number, item in enumerate(super().__iter__()):
            yield self._read(item, number)

    def __reversed__(self) -> Iterator[Any]:
        last = len(self) - 1
        for number, item in enumerate(super().__reversed__()):
            yield self._read(item, last - number)

    def _read(self, item: Any, number: Any) -> Any:
        item = _wrap(item, self._codec_owner, f"{self._codec_path}[{number}]", self._codec_reads)
        if isinstance(item, _TrackedDict):
            reads = self._codec_reads
            reads.owner, reads.path = item._codec_owner, item._codec_path
        return item
