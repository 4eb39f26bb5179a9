"""``ArgumentsEmitter``'s invariant, driven directly: the fragments it returns, joined, are
``json.dumps`` of the value it builds — whole, and cut off after any step and finished."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codec.arguments.emitter import ArgumentsEmitter, dumps, escape

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(max_size=3), values, max_size=4)


def steps(emitter: ArgumentsEmitter, value: Any, draw: st.DataObject) -> Iterator[str]:
    """The fragments of ``value`` as the next value, each container and string opened and fed
    piece by piece (or, as drawn, given whole)."""
    if isinstance(value, dict | list) and draw.draw(st.booleans()):
        yield emitter.begin_container({} if isinstance(value, dict) else [])
        items = value.items() if isinstance(value, dict) else ((None, item) for item in value)
        for key, item in items:
            if key is not None:
                emitter.key(key)
            yield from steps(emitter, item, draw)
        yield emitter.end_container()
    elif isinstance(value, str) and draw.draw(st.booleans()):
        yield emitter.begin_string()
        cut = draw.draw(st.integers(0, len(value)))
        yield emitter.string_chunk(value[:cut])
        yield emitter.string_chunk(value[cut:])
        yield emitter.end_string()
    else:
        yield emitter.value_complete(value)


def members(emitter: ArgumentsEmitter, value: dict[str, Any], draw: st.DataObject) -> Iterator[str]:
    for key, item in value.items():
        emitter.key(key)
        yield from steps(emitter, item, draw)


@given(arguments, st.data())
def test_the_fragments_joined_are_the_json_of_the_value(value: dict[str, Any], data: st.DataObject) -> None:
    emitter = ArgumentsEmitter()
    text = "".join(members(emitter, value, data)) + emitter.finish()
    assert text == json.dumps(value, ensure_ascii=False)
    assert emitter.value == value


@given(arguments, st.data(), st.integers(0, 40))
def test_cut_off_after_any_step_finish_gives_the_json_of_what_arrived(
    value: dict[str, Any], data: st.DataObject, stop: int
) -> None:
    emitter = ArgumentsEmitter()
    fragments = members(emitter, value, data)
    text = "".join(fragment for _, fragment in zip(range(stop), fragments, strict=False)) + emitter.finish()
    assert text == json.dumps(emitter.value, ensure_ascii=False)


def test_depth_string_state_and_keys_follow_what_is_open() -> None:
    emitter = ArgumentsEmitter()
    assert (emitter.depth, emitter.in_string, emitter.has_key("a")) == (1, False, False)
    emitter.key("a")
    emitter.begin_container([])
    assert (emitter.depth, emitter.has_key("a")) == (2, False)  # the innermost is an array
    emitter.begin_string()
    assert emitter.in_string
    emitter.end_string()
    assert emitter.end_container() == "]" and (emitter.depth, emitter.has_key("a")) == (1, True)
    assert emitter.end_container() == ""  # the top level is closed by finish only
    assert emitter.finish() == "}" and emitter.value == {"a": [""]}


def test_a_value_with_no_key_is_stored_under_the_empty_key() -> None:
    emitter = ArgumentsEmitter()
    assert emitter.value_complete(1) + emitter.finish() == '{"": 1}' and emitter.value == {"": 1}


@pytest.mark.parametrize("misuse", ["string_chunk", "end_string"])
def test_string_text_outside_a_string_is_an_engine_error(misuse: str) -> None:
    """Not the model's fault (no ``CodecError``): the engine called the emitter out of order."""
    emitter = ArgumentsEmitter()
    call = emitter.string_chunk if misuse == "string_chunk" else (lambda _: emitter.end_string())
    with pytest.raises(RuntimeError) as raised:
        call("x")
    assert str(raised.value) == f"{misuse} outside a string"


@pytest.mark.parametrize("text", ['a"b\\c', "\n\t\x00", "é ☃ 😀", "\u2028"])
def test_escape_is_the_inside_of_json_dumps(text: str) -> None:
    assert escape(text) == json.dumps(text, ensure_ascii=False)[1:-1]


def test_replace_takes_the_value_when_the_json_sent_begins_it() -> None:
    emitter = ArgumentsEmitter()
    emitter.key("a")
    sent = emitter.value_complete(1)
    assert sent == '{"a": 1'
    assert emitter.replace({"a": 1, "b": "é"}, sent) == ', "b": "é"}'
    assert emitter.value == {"a": 1, "b": "é"}


def test_replace_refuses_a_value_whose_json_does_not_begin_with_what_was_sent() -> None:
    emitter = ArgumentsEmitter()
    emitter.key("a")
    sent = emitter.value_complete(1)
    assert emitter.replace({"b": 1}, sent) is None
    assert emitter.value == {"a": 1} and emitter.finish() == "}"


def test_finish_closes_a_string_inside_nested_containers_in_order() -> None:
    """Cut off inside ``{"a": [{"b": "te``: the string, then each container, innermost first."""
    emitter = ArgumentsEmitter()
    emitter.key("a")
    sent = emitter.begin_container([]) + emitter.begin_container({})
    emitter.key("b")
    sent += emitter.begin_string() + emitter.string_chunk("te")
    assert sent + emitter.finish() == '{"a": [{"b": "te"}]}'
    assert emitter.value == {"a": [{"b": "te"}]}


def test_finish_closes_a_top_level_string() -> None:
    emitter = ArgumentsEmitter()
    emitter.key("a")
    sent = emitter.begin_string()
    assert (sent, emitter.finish()) == ('{"a": "', '"}')


class _Count(int):
    """An ``int`` subclass: written as its number, as ``json.dumps`` writes one."""


@given(value=values | st.floats() | st.integers().map(_Count))
def test_dumps_writes_what_json_dumps_writes(value: Any) -> None:
    """``dumps`` writes scalars without the encoder's set-up; every value, scalar or not (and
    ``NaN``, infinities, ``int`` subclasses), comes out as ``json.dumps`` writes it."""
    assert dumps(value) == json.dumps(value, ensure_ascii=False)
