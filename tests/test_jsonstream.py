"""Solar Open's streamed JSON arguments: any chunking gives the same value and the same text.

The property: for any JSON object, any layout and any split into chunks, the fragments
concatenate to ``json.dumps(value, ensure_ascii=False)``, the value comes back equal, nothing
is rejected and the JSON is complete.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codec.arguments.emitter import ArgumentsEmitter
from codec.arguments.json_stream import JsonArgumentsStream

Schemas = Callable[[str], Mapping[str, Any] | None]


class Run:
    """The outcome of feeding one arguments text in the given chunks."""

    def __init__(self, chunks: Sequence[str], schema_for_key: Schemas | None = None, max_depth: int = 64) -> None:
        self.emitter = ArgumentsEmitter()
        self.stream = JsonArgumentsStream(self.emitter, schema_for_key or (lambda key: None), max_depth)
        self.fragments: list[str] = []
        self.rejected: list[str] = []
        for chunk in chunks:
            fragment, rejected = self.stream.feed(chunk)
            self.fragments.append(fragment)
            self.rejected.append(rejected)
        fragment, self.complete = self.stream.close()
        self.fragments.append(fragment)

    @property
    def text(self) -> str:
        return "".join(self.fragments)

    @property
    def rejected_text(self) -> str:
        return "".join(self.rejected)

    @property
    def value(self) -> dict[str, Any]:
        return self.emitter.value


def one_by_one(text: str) -> list[str]:
    return list(text)


def run(text: str, chunk: int = 1, schema_for_key: Schemas | None = None) -> Run:
    return Run([text[i : i + chunk] for i in range(0, len(text), chunk)], schema_for_key)


def assert_consistent(result: Run) -> None:
    """The fragments are always valid JSON, and exactly the emitter's value."""
    assert result.text == json.dumps(result.value, ensure_ascii=False)
    assert json.loads(result.text) == result.value


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(), json_values, max_size=6)
layouts = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 0, 2, "\t"]),
        "separators": st.sampled_from([None, (",", ":"), (", ", ": "), (" ,\n", " :\r\n\t")]),
        "ensure_ascii": st.booleans(),
    }
)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@given(json_objects, layouts, st.lists(st.integers(min_value=0), max_size=30))
def test_any_object_any_layout_any_chunking(value: dict[str, Any], layout: dict[str, Any], cuts: list[int]) -> None:
    text = json.dumps(value, **layout)
    for chunks in (split(text, cuts), one_by_one(text), [text]):
        result = Run(chunks)
        assert result.value == value
        assert result.text == json.dumps(value, ensure_ascii=False)
        assert result.rejected_text == ""
        assert result.complete
        assert not result.stream.failed


def test_a_string_value_streams_as_it_arrives() -> None:
    stream = JsonArgumentsStream(ArgumentsEmitter())
    assert stream.feed('{"path": "a.py", "text": "hel') == ('{"path": "a.py", "text": "hel', "")
    assert stream.feed("lo wor") == ("lo wor", "")
    assert stream.feed("ld\\n") == ("ld\\n", "")
    assert stream.feed("\\") == ("", "")  # an escape cut off: held back, one character
    assert stream.feed('"') == ('\\"', "")
    assert stream.feed('"}') == ('"', "")  # the object's } is written when the call ends
    assert stream.close() == ("}", True)


@pytest.mark.parametrize("escaped", ["\\ud83d\\ude00", "\\u00e9", "\\u0000", "\\/", "\\b\\f\\r\\t"])
def test_escapes_split_at_every_point(escaped: str) -> None:
    text = '{"k\\n' + escaped + '": "a' + escaped + 'z"}'
    expected = json.loads(text)
    for cut in range(len(text) + 1):
        for second in range(cut, len(text) + 1):
            result = Run([text[:cut], text[cut:second], text[second:]])
            assert result.value == expected
            assert_consistent(result)
            assert result.complete


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "\\ud800"}',
        '{"a": "\\ud800x"}',
        '{"a": "\\ud800\\n"}',
        '{"a": "\\ud800\\ud800"}',
        '{"a": "\\ud800\\u0041"}',
        '{"a": "\\udc00\\ud83d\\ude00"}',
        '{"a": "\\ud800\\"x"}',
    ],
)
def test_lone_surrogates_decode_as_json_loads_does(text: str) -> None:
    for chunk in (1, 2, 3, 7, 100):
        result = run(text, chunk)
        assert result.value == json.loads(text)
        assert result.complete
        assert result.text == json.dumps(result.value, ensure_ascii=False)


def test_non_finite_numbers_that_json_dumps_writes_stay_text() -> None:
    """``json.dumps`` writes ``Infinity`` and ``NaN``, which no JSON text may hold: they are
    read (the arguments are not rejected) and kept as the text that was written."""
    for chunk in (1, 3, 100):
        result = run('{"a": Infinity, "b": -Infinity, "c": [NaN]}', chunk)
        assert result.value == {"a": "Infinity", "b": "-Infinity", "c": ["NaN"]}
        assert result.complete
        assert_consistent(result)
        json.loads(result.text, parse_constant=_refuse)


def _refuse(word: str) -> None:
    raise ValueError(f"{word} in the fragments")


def test_duplicate_keys_are_skipped_and_reported() -> None:
    text = '{"a": 1, "a": {"x": [1, "y", {"a": 2}]}, "b": {"k": "v", "k": [3]}, "a": "s"}'
    for chunk in (1, 3, 100):
        result = run(text, chunk)
        assert result.value == {"a": 1, "b": {"k": "v"}}
        assert result.stream.duplicates == ["a", "k", "a"]
        assert result.complete
        assert_consistent(result)


def test_a_plain_string_member_keeps_scalars_as_their_json_text() -> None:
    schemas: dict[str, Mapping[str, Any]] = {
        "code": {"type": "string"},
        "flag": {"enum": ["true", "false"]},
        "maybe": {"type": ["string", "null"]},
        "n": {"type": "integer"},
    }
    text = '{"code": 7, "flag": true, "maybe": null, "n": 7, "nested": {"code": 7}, "x": 1.50}'
    result = run(text, 1, schemas.get)
    assert result.value == {"code": "7", "flag": "true", "maybe": None, "n": 7, "nested": {"code": 7}, "x": 1.5}
    assert run('{"code": [1, null]}', 1, schemas.get).value == {"code": [1, None]}
    assert run('{"code": 1.50}', 1, schemas.get).value == {"code": "1.50"}
    assert_consistent(result)


@pytest.mark.parametrize(
    ("text", "value", "rejected"),
    [
        ('{"a": 1} x', {"a": 1}, " x"),
        ('{"a": 1}}', {"a": 1}, "}"),
        ("[1, 2]", {}, "[1, 2]"),
        ('  "a"', {}, '  "a"'),
        ('{"a": [1}', {"a": [1]}, "}"),
        ('{"a": 1,}', {"a": 1}, ",}"),
        ('{"a" 1}', {}, '"a" 1}'),
        ("{'a': 1}", {}, "'a': 1}"),
        ('{"a": tru}', {}, '"a": tru}'),
        ('{"a": 01}', {}, '"a": 01}'),
        ('{"a": 1.}', {}, '"a": 1.}'),
        ('{"a": "x\\qy"}', {"a": "x"}, '\\qy"}'),
        ('{"a": "x\\u12g4"}', {"a": "x"}, '\\u12g4"}'),
        ('{"a": "x", "b": [true, nul]}', {"a": "x", "b": [True]}, ", nul]}"),
        ('{"k\\x": 1}', {}, '"k\\x": 1}'),
    ],
)
def test_malformed_json_is_rejected_from_where_it_breaks(text: str, value: dict[str, Any], rejected: str) -> None:
    for chunk in (1, 2, 5, 100):
        result = run(text, chunk)
        assert result.stream.failed
        assert result.value == value
        assert result.rejected_text == rejected
        assert not result.complete
        assert_consistent(result)


def test_a_failed_stream_rejects_everything_after() -> None:
    stream = JsonArgumentsStream(ArgumentsEmitter())
    assert stream.feed('{"a": 1 x') == ('{"a": 1', " x")
    assert stream.feed('"b": 2}') == ("", '"b": 2}')
    assert stream.close() == ("}", False)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("", {}),
        ("  ", {}),
        ("{", {}),
        ('{"ke', {}),
        ('{"key"', {}),
        ('{"key":', {}),
        ('{"a": "par', {"a": "par"}),
        ('{"a": "x\\', {"a": "x"}),
        ('{"a": "x\\ud83d', {"a": "x"}),
        ('{"a": 12', {"a": 12}),
        ('{"a": -', {}),
        ('{"a": tr', {}),
        ('{"a": 1,', {"a": 1}),
        ('{"a": [1, {"b": [', {"a": [1, {"b": []}]}),
    ],
)
def test_truncated_json_is_incomplete_not_failed(text: str, value: dict[str, Any]) -> None:
    for chunk in (1, 3, 100):
        result = run(text, chunk)
        assert not result.stream.failed
        assert result.rejected_text == ""
        assert not result.complete
        assert result.value == value
        assert_consistent(result)


def test_close_is_complete_after_trailing_white_space() -> None:
    assert run('\n {"a": [] } \n').complete


@given(st.text(alphabet='{}[]":,\\ntrue0.5e-u9aF \n', max_size=40), st.integers(1, 5))
def test_malformed_input_never_raises_and_loses_nothing(text: str, chunk: int) -> None:
    result = run(text, chunk)
    assert_consistent(result)
    assert text.endswith(result.rejected_text)
    assert result.complete <= (result.rejected_text == "")


@given(json_objects, st.data())
def test_mutated_json_never_raises(value: dict[str, Any], data: st.DataObject) -> None:
    text = json.dumps(value)
    at = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(max_size=3))
    mutated = data.draw(st.sampled_from([text[:at], text[:at] + junk + text[at:], text[:at] + text[at + 1 :]]))
    result = run(mutated, data.draw(st.integers(1, 7)))
    assert_consistent(result)
    assert mutated.endswith(result.rejected_text)


def long_string_arguments(length: int) -> str:
    return json.dumps({"path": "a.py", "text": 'ab\ncd"éf😀' * (length // 10)}, ensure_ascii=True)


@pytest.mark.scale
@pytest.mark.parametrize("length", [50_000, 200_000])
def test_each_character_is_examined_a_bounded_number_of_times(length: int) -> None:
    text = long_string_arguments(length)
    result = run(text, 4)
    assert result.complete
    assert result.stream.examined <= 3 * len(text)


LONG_VALUES: dict[str, Callable[[int], str]] = {
    "string": long_string_arguments,
    "key": lambda length: json.dumps({"k" * length: 1}),
    "number": lambda length: '{"n": 0.' + "1" * length + "}",
}


def examined_per_feed(text: str, chunk: int = 4) -> list[int]:
    """What ``examined`` grows by in each feed of ``text``, which must arrive whole."""
    stream = JsonArgumentsStream(ArgumentsEmitter())
    work = []
    for start in range(0, len(text), chunk):
        before = stream.examined
        stream.feed(text[start : start + chunk])
        work.append(stream.examined - before)
    assert stream.close()[1]
    return work


@pytest.mark.scale
@pytest.mark.parametrize("shape", sorted(LONG_VALUES))
def test_cost_per_feed_does_not_grow_with_what_came_before(shape: str) -> None:
    """Four times the text in 4-character feeds is four times the work, counted in characters
    examined, and no feed examines more than the longest feed of the shorter text: rescanning
    what came before would grow both (a string value streams out; a key or a number is held
    until it ends). benchmarks/bench_parse.py times the same, in µs per feed."""
    short, long = (examined_per_feed(LONG_VALUES[shape](length)) for length in (12_500, 50_000))
    assert sum(long) <= 4 * sum(short) * 1.05, (sum(short), sum(long))
    assert max(long) <= max(short), (max(short), max(long))


def _outcome(result: Run) -> tuple[Any, ...]:
    stream = result.stream
    return (result.text, result.value, result.rejected_text, result.complete, stream.failed, stream.too_deep,
            stream.duplicates, stream.dropped, stream.unconsumed)  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1e400, "b": "x"}',  # a float past the largest: what json.loads gives is not JSON
        '{"a": NaN}',
        '{"a": 1, "a": 2}',
        '{"a": {"k": 1, "k": 2}}',
        '{"n": 5, "s": 5}',  # a number for a string parameter keeps its text
        '{"a": ' + "[" * 4 + "1" + "]" * 4 + "}",  # at the depth limit of 4
        '{"a": ' + "[" * 5 + "1" + "]" * 5 + "}",  # one past it
        '{"a": "\\ud83d\\ude00 \\ud83d"}',
        '{"a": 1} ',
        "[1]",
        '{"a": 1}}',
        '{"a": ' + "9" * 5000 + "}",  # more digits than Python turns into an int
    ],
)
def test_an_object_given_whole_reads_as_given_character_by_character(text: str) -> None:
    """A whole object in one piece is read at once (``json.loads``) where that reads the same,
    and character by character where it might not: either way the outcome is the same."""

    def schemas(key: str) -> Mapping[str, Any] | None:
        return {"type": "string"} if key == "s" else None

    def outcome(chunks: list[str]) -> tuple[Any, ...]:
        return _outcome(Run(chunks, schemas, max_depth=4))

    assert outcome([text]) == outcome(one_by_one(text))


def test_a_named_key_counts_as_held_until_its_value_starts() -> None:
    """The emitter writes a member's key with its value (``, "options": {``): until the value
    starts, the key's characters are held, so a size limit that meters the text counts them
    (else a one-character piece could write the whole key past the limit, and where the call
    stops would depend on the chunking)."""
    stream = JsonArgumentsStream(ArgumentsEmitter())
    stream.feed('{"a": 1, "options":')
    assert stream.held == len("options")
    stream.feed(" ")
    assert stream.held == len("options")
    stream.feed("12")
    assert stream.held == len("options") + 2  # a number is written whole, with its key
    stream.feed(', "b": {')
    assert stream.held == 0  # the value began: its key is written
