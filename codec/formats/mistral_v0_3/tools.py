"""The tools block of a Mistral v0.3 prompt, read back. The template writes each function's
members itself, a string member as it is, unescaped, any other as JSON::

    [{"type": "function", "function": {"name": "f", "description": "say "hi"", "parameters": {…}}}, …]

(``{{- '"' + key + '": "' + val + '"' }}`` / ``{{- '"' + key + '": ' + val|tojson }}``), so the
block is not JSON when a description holds a quote. It is read member by member: a string
member ends at a quote that the next member (``, "``) or the declaration's end (``}}``)
follows; where several such quotes could end it, the first reading that reads the whole
block is taken.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from codec.errors import CodecError

_OPEN = "["  # ``{{- "[AVAILABLE_TOOLS] [" }}``
_CLOSE = "]"
_TOOL = '{"type": "function", "function": {'
_END = "}}"
_NEXT = ", "
_KEY_END = '": '
_DECODER = json.JSONDecoder()

Members = dict[str, Any]


def declarations(text: str) -> list[dict[str, Any]]:
    """The tools of a block's text (after ``[AVAILABLE_TOOLS]``): an empty list is written as
    its ``[`` alone (the loop that writes the ``]`` has nothing to loop over)."""
    if text == _OPEN:
        return []
    found = next(_tools(text, len(_OPEN)), None) if text.startswith(_OPEN) else None
    if found is None:
        raise CodecError(f"a tools block the template does not write: {text[:40]!r}")
    return [{"type": "function", "function": members} for members in found]


def _tools(text: str, at: int) -> Iterator[list[Members]]:
    """Every reading of the declarations from ``at`` to the block's end."""
    if not text.startswith(_TOOL, at):
        return
    for members, end in _members(text, at + len(_TOOL), {}):
        if text[end:] == _CLOSE:
            yield [members]
        elif text.startswith(_NEXT, end):
            for rest in _tools(text, end + len(_NEXT)):
                yield [members, *rest]


def _members(text: str, at: int, members: Members) -> Iterator[tuple[Members, int]]:
    """Every reading of a declaration's members from ``at``: the members and where its ``}}``
    ends."""
    if not members and text.startswith(_END, at):
        yield members, at + len(_END)
        return
    key_end = text.find(_KEY_END, at + 1)
    if not text.startswith('"', at) or key_end < 0:
        return
    key, start = text[at + 1 : key_end], key_end + len(_KEY_END)
    for value, end in _values(text, start):
        read = {**members, key: value}
        if text.startswith(_END, end):
            yield read, end + len(_END)
        if text.startswith(_NEXT + '"', end):
            yield from _members(text, end + len(_NEXT), read)


def _values(text: str, at: int) -> Iterator[tuple[Any, int]]:
    """Every reading of a member's value at ``at``: a string as written, up to each quote that
    may end it, or one JSON value."""
    if text.startswith('"', at):
        end = text.find('"', at + 1)
        while end >= 0:
            if text.startswith(_END, end + 1) or text.startswith(_NEXT + '"', end + 1):
                yield text[at + 1 : end], end + 1
            end = text.find('"', end + 1)
        return
    try:
        value, end = _DECODER.raw_decode(text, at)
    except ValueError:
        return
    yield value, end
