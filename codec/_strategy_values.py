"""The values inside a conversation, for ``codec.strategies``: text, names, JSON values, call
arguments and tools with their JSON schemas.

Text never holds a special token of any bundled format (render refuses those). It does hold
their pieces, markup-like text, unicode and odd whitespace.
"""

from __future__ import annotations

import operator
import re
import string
from functools import cache
from typing import Any

from hypothesis import strategies as st

from codec.engine.grammar import special_tokens
from codec.registry import FORMATS

Json = Any


@cache
def reserved_tokens() -> tuple[str, ...]:
    """Every special token of every bundled format, longest first."""
    tokens = {token for spec in FORMATS.values() for token in special_tokens(spec.grammar)}
    return tuple(sorted(tokens, key=len, reverse=True))


@cache
def _reserved_pattern() -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, reserved_tokens())))


def _clean(text: str) -> bool:
    return _reserved_pattern().search(text) is None


# Pieces that come close to markers without forming one, plus markup, JSON and whitespace traps.
_FRAGMENTS = (
    "<", ">", "|", "</", "<|", "|>", "<think", "think>", "<tool", "[gMASK", "<tools>", "</tools>",
    '"', "'", "\\", "{", "}", "[", "]", ":", ",", "null", "true", "1e5", "call:", "<b>",
    " ", "  ", "\t", "\n", "\n\n", "\r\n", "\r", "\u00a0", "\u2028", "\u3000", "\x00",
    "é", "日本語", "🙂", "שלום", "\U0001d518", "e\u0301",
)  # fmt: skip

# glm-effort reads these control tags from message text (docs/formats.md: glm-effort extras).
_CONTROL_FRAGMENTS = ("[regular]", "[vanilla]", "{REASON:low}", "{REASON:i3}", "[MODE:high]")


@cache
def texts(*, controls: bool = False, min_size: int = 0, max_size: int = 12) -> st.SearchStrategy[str]:
    """Message text: words, marker-like pieces, unicode and whitespace, never a special token.

    ``controls`` mixes in glm-effort's ``[regular]`` / ``{REASON:x}`` / ``[MODE:x]`` tags.
    """
    fragments = _FRAGMENTS + (_CONTROL_FRAGMENTS if controls else ())
    piece = st.one_of(
        st.text(st.characters(codec="utf-8"), min_size=1, max_size=6),
        st.sampled_from(["hello", "the weather", "Paris", "42", "x"]),
        st.sampled_from(fragments),
    )
    joined = st.lists(piece, min_size=min_size, max_size=max_size).map("".join)
    return joined.filter(_clean)


_NAME_HEAD = string.ascii_letters + "_"


@cache
def names() -> st.SearchStrategy[str]:
    # What ``[A-Za-z_][A-Za-z0-9_]{0,11}`` matches, drawn a character at a time (``from_regex``
    # is several times slower, and names are drawn for every call and tool).
    head = st.sampled_from(_NAME_HEAD)
    return st.builds(operator.add, head, st.text(st.sampled_from(_NAME_HEAD + string.digits), max_size=11))


@cache
def _keys() -> st.SearchStrategy[str]:
    odd = st.sampled_from(["a b", "Ünïcode", "UPPER", "lower", "x-y", "$ref", "a.b"])
    return st.one_of(names(), odd)


@cache
def json_values(*, max_leaves: int = 8) -> st.SearchStrategy[Json]:
    """JSON values as arguments and tool results hold them: nested objects and arrays."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**12), 10**12),
        st.floats(allow_nan=False, allow_infinity=False),
        texts(max_size=5),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys(), inner, max_size=3)),
        max_leaves=max_leaves,
    )


@cache
def arguments() -> st.SearchStrategy[dict[str, Json]]:
    """A call's arguments: a JSON object (possibly empty)."""
    return st.dictionaries(_keys(), json_values(), max_size=4)


@st.composite
def _schema(draw: st.DrawFn, depth: int = 0) -> dict[str, Json]:
    kinds = ["string", "integer", "number", "boolean"] + (["array", "object"] if depth < 2 else [])
    kind = draw(st.sampled_from(kinds))
    schema: dict[str, Json] = {"type": kind}
    if draw(st.booleans()):
        schema["description"] = draw(texts(max_size=4))
    if kind == "string" and draw(st.booleans()):
        schema["enum"] = draw(st.lists(texts(min_size=1, max_size=3), min_size=1, max_size=3))
    if kind == "array":
        schema["items"] = draw(_schema(depth + 1))
    if kind == "object":
        properties = draw(st.dictionaries(_keys(), _schema(depth + 1), max_size=3))
        schema["properties"] = properties
        wants_required = draw(st.booleans())
        if properties and wants_required:
            schema["required"] = sorted(properties)[:1]
    if draw(st.integers(0, 4)) == 0:
        schema["nullable"] = True
    if draw(st.integers(0, 6)) == 0:
        schema["type"] = [kind, "null"]
    return schema


@st.composite
def tools(draw: st.DrawFn) -> dict[str, Json]:
    """A function tool in the OpenAI shape with a nested JSON-schema ``parameters`` object."""
    properties = draw(st.dictionaries(_keys(), _schema(), max_size=4))
    parameters: dict[str, Json] = {"type": "object", "properties": properties}
    if properties:
        parameters["required"] = draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
    function: dict[str, Json] = {"name": draw(names()), "description": draw(texts(max_size=6))}
    function["parameters"] = parameters
    tool: dict[str, Json] = {"type": "function", "function": function}
    extra = draw(st.integers(0, 9))
    if extra == 0:
        function["strict"] = True  # GLM leaves the key out
    elif extra == 1:
        function["defer_loading"] = draw(st.booleans())  # GLM leaves a deferred tool out
    return tool
