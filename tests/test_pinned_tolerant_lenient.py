"""GLM's lenient value reading (``codec.arguments.lenient_value.read_value``) pinned (issue 12,
"tests that bite"): strict JSON first, then the tolerant reading, taken only when it is
complete, lossless and of a kind the schema admits — each case states the exact value and
repairs."""

from __future__ import annotations

from typing import Any

import pytest

from codec.arguments.lenient_value import lossless, read_value
from codec.arguments.tolerant import Repair

UNION = {"type": ["string", "null"]}


def test_strict_json_of_the_schema_type_is_taken_without_repairs() -> None:
    assert read_value("42", {"type": "integer"}, 64) == (42, ())


def test_a_plain_word_is_the_text() -> None:
    assert read_value("hello", None, 64) == ("hello", ())


def test_an_enum_member_is_what_was_meant() -> None:
    """``[1,]`` is one of the enum's strings: the tolerant reading (an array) is not asked."""
    schema = {"type": ["string", "array"], "enum": ["[1,]", "x"]}
    assert read_value("[1,]", schema, 64) == ("[1,]", ())
    assert read_value("[1,]", {"type": ["string", "array"]}, 64) == (
        [1],
        (Repair("trailing_comma", 2, "comma before ]"),),
    )


def test_a_python_literal_is_read_with_offsets_in_the_stripped_text() -> None:
    assert read_value(" {'a': True} ", None, 64) == (
        {"a": True},
        (
            Repair("single_quotes", 1, "string in single quotes"),
            Repair("python_literal", 6, "Python's True read as true"),
        ),
    )


@pytest.mark.parametrize("schema", [None, {"type": ["boolean", "string"]}])
def test_python_true_is_true_where_the_schema_allows_a_boolean(schema: Any) -> None:
    assert read_value("True", schema, 64) == (True, (Repair("python_literal", 0, "Python's True read as true"),))


def test_a_json_string_in_a_union_with_strings_is_the_string_it_quotes() -> None:
    assert read_value('"null"', UNION, 64) == ("null", ())
    assert read_value('"null"', {"type": "string"}, 64) == ('"null"', ())  # a string alone: the raw text
    assert read_value("'x'", UNION, 64) == ("'x'", ())  # a repaired string is not taken


def test_quotes_escaped_once_too_often_are_read_unescaped() -> None:
    assert read_value('\\"42\\"', {"type": "integer"}, 64) == (
        42,
        (Repair("quoted_scalar", 0, "'42' in quotes read as integer"),),
    )


@pytest.mark.parametrize("text", ["[1] x", "[1", "[1}"])
def test_a_reading_that_would_lose_or_invent_text_is_not_taken(text: str) -> None:
    assert read_value(text, {"type": "array"}, 64) == (text, ())


def test_max_depth_bounds_both_readings() -> None:
    assert read_value("[[1,]]", None, 1) == ("[[1,]]", ())
    assert read_value("[[1,]]", None, 2) == ([[1]], (Repair("trailing_comma", 3, "comma before ]"),))
    assert read_value('\\"[[1,]]\\"', {"type": "array"}, 1) == ('\\"[[1,]]\\"', ())
    assert read_value('\\"[[1,]]\\"', {"type": "array"}, 2) == (
        [[1]],
        (
            Repair("json_in_string", 0, "array written as JSON inside a string"),
            Repair("trailing_comma", 0, "comma before ]"),
        ),
    )


def test_lossless_repairs_are_only_those_that_keep_every_character() -> None:
    assert lossless(())
    assert lossless((Repair("trailing_comma", 0, ""), Repair("bare_key", 0, "")))
    assert not lossless((Repair("trailing_comma", 0, ""), Repair("trailing_text", 0, "")))


def test_a_number_in_quotes_is_read_by_the_schema() -> None:
    assert read_value('"42"', {"type": "integer"}, 64) == (
        42,
        (Repair("quoted_scalar", 0, "'42' in quotes read as integer"),),
    )


def test_a_union_string_escaped_once_too_often_is_the_string_it_quotes() -> None:
    """``"a\\\\" b\\"`` read as written is bare text; with its ``\\"`` unescaped it is the JSON
    string ``"a\\" b"``: the second reading is asked after the first gave only text."""
    assert read_value('"a\\\\" b\\"', UNION, 64) == ('a" b', ())
