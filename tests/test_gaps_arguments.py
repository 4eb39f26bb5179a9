"""Argument behaviour no test checked before (issue 12, "Tests that bite"), for every format.

- A duplicated argument (``city`` twice, then ``days``): the first value is kept, ``days``
  survives, the duplicate's text is content (every token of it, in order) and one
  ``duplicate_key`` diagnostic says so; whole, a character at a time and split anywhere.
- A bare scalar where the schema says string stays the text that was written (``123`` is
  ``"123"``).
- ``JsonArgumentsStream`` (Solar's arguments): the exact text it rejects, leaves unconsumed or
  drops after ``[``, ``{``, a nested close, a string's opening quote and a skipped duplicate,
  the same for every chunking; and a property: every token fed comes back out somewhere.

The completions are written by each format's own template (``support.calls``); a duplicate is
made by renaming a placeholder key.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec
from codec.arguments.emitter import ArgumentsEmitter
from codec.arguments.json_stream import JsonArgumentsStream
from codec.registry import FORMATS
from support.calls import call_completion, parse, renamed, tokens, tool, where
from support.parsing import fold, stream_chunks

QUICK = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
DUPLICATED = tool("f", {"city": {}, "days": {"type": "integer"}})
PLACEHOLDER = "cj"  # sorts between "city" and "days": Gemma's template writes keys sorted

words = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8)  # never JSON, never a key
scalars = words | st.integers(-(10**6), 10**6) | st.sampled_from([0.5, -2.25, 1e-05]) | st.booleans() | st.none()
values = scalars | st.lists(st.integers(0, 99), max_size=3) | st.fixed_dictionaries({"k": st.integers(0, 99)})


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


def is_subsequence(part: str, text: str) -> bool:
    """Whether ``part``'s characters occur in ``text`` in order. Not a slice: Gemma's reader is
    not handed the colons inside a skipped value (``{k:0}`` is kept as ``{k0}``)."""
    rest = iter(text)
    return all(char in rest for char in part)


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_duplicated_argument_keeps_the_first_value_and_the_duplicate_as_content(fmt: str) -> None:
    @QUICK
    @given(first=values, duplicate=values, cuts=st.lists(st.integers(0, 10**4), max_size=6))
    def check(first: Any, duplicate: Any, cuts: list[int]) -> None:
        written = call_completion(fmt, [DUPLICATED], "f", {"city": first, PLACEHOLDER: duplicate, "days": 3})
        text = renamed(written, PLACEHOLDER, "city")
        events, message, codes = stream_chunks(fmt, [text], tools=[DUPLICATED])
        assert [call.arguments for call in message.tool_calls] == [{"city": first, "days": 3}]
        assert codes == ["duplicate_key"]
        content = codec.models.content_text(message.content)
        assert content and is_subsequence(content, text), "the duplicate's text, in order"
        spellings = (json.dumps(duplicate), str(duplicate))  # str: a scalar as Qwen3-Coder writes it
        assert any(tokens([spelled]) <= tokens([content]) for spelled in spellings)
        assert fold(events) == message.to_openai()
        for chunks in (list(text), split(text, cuts)):
            streamed = parse(fmt, chunks, [DUPLICATED])
            assert streamed == message
            assert where(streamed) == where(message)

    check()


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_bare_scalar_for_a_string_parameter_stays_its_text(fmt: str) -> None:
    """The model writes ``city`` as a number, a boolean or null (Gemma ``{city:123}``, Solar
    ``{"city": 123}``, GLM ``<arg_value>123``): the schema says string, so it is the text —
    unless the format writes the value's kind beside it (``FormatSpec.written_kinds``:
    DeepSeek-V3.2's ``string="false">123``), which says it is the scalar."""
    string_city = tool("f", {"city": {"type": "string"}, "days": {"type": "integer"}})

    @QUICK
    @given(scalar=scalars.filter(lambda value: not isinstance(value, str)))
    def check(scalar: Any) -> None:
        text = call_completion(fmt, [string_city], "f", {"city": scalar, "days": 3})
        written = next(w for w in (json.dumps(scalar), str(scalar)) if w in text)  # str: Qwen3-Coder's None
        city = scalar if FORMATS[fmt].written_kinds else written
        for chunks in ([text], list(text)):
            message = parse(fmt, chunks, [string_city])
            assert [call.arguments for call in message.tool_calls] == [{"city": city, "days": 3}]
            assert not message.diagnostics

    check()


class Fed:
    """``JsonArgumentsStream`` fed ``text`` in ``size``-character chunks, then closed."""

    def __init__(self, text: str, size: int) -> None:
        emitter = ArgumentsEmitter()
        stream = JsonArgumentsStream(emitter)
        fragments, rejected = [], []
        for start in range(0, len(text), size):
            fragment, refused = stream.feed(text[start : start + size])
            fragments.append(fragment)
            rejected.append(refused)
        fragment, self.complete = stream.close()
        self.json = "".join(fragments) + fragment
        self.rejected = "".join(rejected)
        self.unconsumed = stream.unconsumed
        self.dropped = list(stream.dropped)
        self.dropped_at = list(stream.dropped_at)
        self.value = emitter.value

    def outcome(self) -> tuple[Any, ...]:
        return (self.value, self.rejected, self.unconsumed, self.dropped, self.complete)


# (text, value, rejected, unconsumed, dropped): what the stream does right after each structure.
PINNED = [
    ("{x", {}, "x", "", []),
    ("{ x", {}, " x", "", []),
    ('{"a": [x', {"a": []}, "x", "", []),
    ('{"a": [ x', {"a": []}, " x", "", []),
    ('{"a": {x', {"a": {}}, "x", "", []),
    ('{"a": {"b": 1} x', {"a": {"b": 1}}, " x", "", []),
    ('{"a": [1] x', {"a": [1]}, " x", "", []),
    ('{"a": [1]]', {"a": [1]}, "]", "", []),
    ('{"a": "\\q"}', {"a": ""}, '\\q"}', "", []),
    ('{"a": 1, "a": 2 x', {"a": 1}, " x", "", [', "a": 2']),
    ('{"a": 1, "a": [2, {"c": "d"}] x', {"a": 1}, " x", "", [', "a": [2, {"c": "d"}]']),
    ('{"a": 1, "a": "s" x', {"a": 1}, " x", "", [', "a": "s"']),
    ("{", {}, "", "", []),
    ('{"a": [', {"a": []}, "", "", []),
    ('{"a": {', {"a": {}}, "", "", []),
    ('{"a": {"ke', {"a": {}}, "", '"ke', []),
    ('{"a": [1]', {"a": [1]}, "", "", []),
    ('{"a": [1], "b', {"a": [1]}, "", ', "b', []),
    ('{"a": "', {"a": ""}, "", "", []),
    ('{"a": "x\\u12', {"a": "x"}, "", "\\u12", []),
    ('{"a": [1, tr', {"a": [1]}, "", ", tr", []),
    ('{"a": 1, "a": 2', {"a": 1}, "", "", [', "a": 2']),  # the end of output ends the duplicate
    ('{"a": 1, "a": [2', {"a": 1}, "", ', "a": [2', []),
    ('{"a": 1, "a": "s', {"a": 1}, "", ', "a": "s', []),
    ('{"a": 1, "a": "s"', {"a": 1}, "", "", [', "a": "s"']),
    ('{"a": 1, "a": "s",', {"a": 1}, "", ",", [', "a": "s"']),
    ('{"a": 1, "a": "s", "b": 2', {"a": 1, "b": 2}, "", "", [', "a": "s"']),
    # a key inside a skipped value is no member of the object: not a duplicate, not a key
    ('{"a": 1, "a": {"a": 2, "b": 3}, "b": 4', {"a": 1, "b": 4}, "", "", [', "a": {"a": 2, "b": 3}']),
]


@pytest.mark.parametrize(("text", "value", "rejected", "unconsumed", "dropped"), PINNED)
def test_json_stream_pins_what_it_rejects_leaves_and_drops(
    text: str, value: dict[str, Any], rejected: str, unconsumed: str, dropped: list[str]
) -> None:
    whole = Fed(text, len(text))
    assert whole.outcome() == (value, rejected, unconsumed, dropped, False)
    assert whole.json == json.dumps(value)
    assert whole.dropped_at == [text.index(part) for part in dropped]  # from the start of the text fed last
    for size in (1, 2, 3):
        assert Fed(text, size).outcome() == whole.outcome(), size


duplicated_objects = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.integers(0, 99) | words | st.lists(st.integers(0, 9), max_size=2) | st.dictionaries(st.just("a"), words),
    ),
    max_size=5,
).map(lambda members: "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in members) + "}")


@QUICK
@given(text=duplicated_objects, data=st.data())
def test_json_stream_returns_every_token_it_was_fed(text: str, data: st.DataObject) -> None:
    """Any prefix of an object with repeated keys, with junk or not: every token fed is in the
    JSON sent, the rejected text, the unconsumed text or a dropped duplicate; nothing twice."""
    cut = data.draw(st.integers(0, len(text)))
    fed = text[:cut] + data.draw(st.sampled_from(["", " x", "]"]))
    result = Fed(fed, data.draw(st.integers(1, 5)))
    out = [result.json, result.rejected, result.unconsumed, *result.dropped]
    assert tokens([fed]) <= tokens(out)
    leftover = result.rejected + result.unconsumed + "".join(result.dropped)
    assert len(leftover) <= len(fed), "no text handed back twice"
