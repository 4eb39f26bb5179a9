"""Argument typing from the tool schema.

docs/formats.md "Argument typing traps": every trap listed there is a case.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codec.arguments import schema as schema_module
from codec.arguments.schema import is_plain_string, kinds, property_schema, tool_schema, type_text

STRING = {"type": "string"}
NUMBER = {"type": "number"}
INTEGER = {"type": "integer"}
STRING_OR_NULL = {"type": ["string", "null"]}


@pytest.mark.parametrize("text", ["007", "true", "null", "[1]", '{"a": 1}', "3.0", " x ", ""])
def test_string_parameter_keeps_text_verbatim(text: str) -> None:
    assert type_text(text, STRING) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [("null", None), ("007", "007"), ("true", "true"), ("3", "3"), ('"q"', '"q"'), ("x", "x")],
)
def test_string_or_null_reads_only_a_bare_null_as_none(text: str, expected: Any) -> None:
    assert type_text(text, STRING_OR_NULL) == expected


@pytest.mark.parametrize(
    ("text", "expected", "kind"),
    [
        ("3", 3, int),
        ("3.0", 3.0, float),
        ("-2.5", -2.5, float),
        ("1e-05", 1e-05, float),
        ("1e+20", 1e20, float),
        ("0", 0, int),
    ],
)
def test_number_keeps_ints_and_floats_apart(text: str, expected: Any, kind: type) -> None:
    value = type_text(text, NUMBER)
    assert value == expected
    assert type(value) is kind


def test_integer_reads_integral_floats_as_int() -> None:
    assert type_text("3", INTEGER) == 3
    assert type(type_text("3.0", INTEGER)) is int
    assert type_text("3.5", INTEGER) == 3.5  # does not fit: the honest reading, not a rounding


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5", 5),
        ("2.5", 2.5),
        ("true", True),
        ("null", None),
        ("[1, 2]", [1, 2]),
        ('{"a": [1]}', {"a": [1]}),
        ('"q"', "q"),
        ("hello world", "hello world"),
        ("007", "007"),
        ("", ""),
        ("[1,", "[1,"),
    ],
)
def test_without_schema_json_if_it_parses_else_the_raw_string(text: str, expected: Any) -> None:
    assert type_text(text, None) == expected
    assert type_text(text, {}) == expected
    assert type_text(text, {"description": "no type"}) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("true", True), ("false", False), ("True", True), ("yes", "yes"), ("1", 1)],
)
def test_boolean(text: str, expected: Any) -> None:
    assert type_text(text, {"type": "boolean"}) == expected


def test_object_and_array_values_are_json() -> None:
    schema = {"type": "object", "properties": {"x": STRING}}
    assert type_text('{"x": "007", "y": [1, {"z": null}]}', schema) == {"x": "007", "y": [1, {"z": None}]}
    assert type_text('[[1, 2], ["a"]]', {"type": "array"}) == [[1, 2], ["a"]]
    assert type_text("[1, 2", {"type": "array"}) == "[1, 2"  # truncated: kept as text
    assert type_text('{"a": 1}', {"properties": {}}) == {"a": 1}  # "object" implied


@pytest.mark.parametrize(
    ("schema", "text", "expected"),
    [
        ({"type": ["integer", "null"]}, "null", None),
        ({"type": ["integer", "null"]}, "4", 4),
        ({"type": ["string", "integer"]}, "4", 4),
        ({"type": ["string", "integer"]}, "4.5", "4.5"),
        ({"type": ["string", "number"]}, "4", 4),
        ({"type": ["string", "boolean"]}, "false", False),
        ({"type": ["string", "boolean"]}, "null", "null"),
        ({"type": ["array", "string"]}, "[1]", [1]),
        ({"type": ["object", "string"]}, "[1]", "[1]"),
    ],
)
def test_type_lists(schema: dict[str, Any], text: str, expected: Any) -> None:
    assert type_text(text, schema) == expected


@pytest.mark.parametrize(
    ("schema", "text", "expected"),
    [
        ({"anyOf": [STRING, {"type": "null"}]}, "null", None),
        ({"anyOf": [STRING, {"type": "null"}]}, "007", "007"),
        ({"oneOf": [INTEGER, {"type": "boolean"}]}, "true", True),
        ({"oneOf": [INTEGER, {"type": "boolean"}]}, "12", 12),
        ({"anyOf": [STRING, {"enum": ["a", "b"]}]}, "12", "12"),
        ({"anyOf": [STRING, {}]}, "12", 12),  # one branch admits anything
        ({"allOf": [STRING, {"minLength": 1}]}, "12", "12"),
        ({"allOf": [NUMBER, INTEGER]}, "3.0", 3),
        ({"allOf": [{"type": ["string", "null"]}, {"type": ["null", "integer"]}]}, "null", None),
        ({"type": "object", "anyOf": [{"required": ["a"]}]}, '{"a": 1}', {"a": 1}),
    ],
)
def test_combinators(schema: dict[str, Any], text: str, expected: Any) -> None:
    assert type_text(text, schema) == expected


def test_ref_resolves_against_the_root_and_its_definitions() -> None:
    parameters = {
        "type": "object",
        "properties": {
            "code": {"$ref": "#/$defs/Code"},
            "when": {"anyOf": [{"$ref": "#/definitions/Stamp"}, {"type": "null"}]},
            "self": {"$ref": "#/$defs/Loop"},
        },
        "$defs": {"Code": STRING, "Loop": {"$ref": "#/$defs/Loop"}},
        "definitions": {"Stamp": INTEGER},
    }
    code = property_schema(parameters, "code")
    assert is_plain_string(code)
    assert type_text("007", code) == "007"
    when = property_schema(parameters, "when")
    assert type_text("12", when) == 12
    assert type_text("null", when) is None
    assert type_text("[1]", property_schema(parameters, "self")) == [1]  # a cycle: anything


def test_ref_siblings_and_unresolvable_refs() -> None:
    assert type_text("null", {"$ref": "#/$defs/Missing"}) is None
    assert type_text("5", {"$ref": "https://example.com/schema.json"}) == 5  # never fetched
    schema = {"$defs": {"A": {"type": "string"}}, "$ref": "#/$defs/A", "nullable": True}
    assert type_text("null", schema) is None
    assert type_text("a/b", {"$defs": {"a/b": STRING}, "$ref": "#/$defs/a~1b"}) == "a/b"


@pytest.mark.parametrize(
    ("schema", "text", "expected"),
    [
        ({"enum": ["1", "2"]}, "1", "1"),
        ({"enum": [1, 2]}, "1", 1),
        ({"enum": [1, "1"]}, "1", 1),
        ({"enum": ["on", 1, None]}, "on", "on"),
        ({"enum": ["on", 1, None]}, "null", None),
        ({"enum": [1, 2]}, "true", True),  # not a member (True is not 1): the honest reading
        ({"const": "fixed"}, "fixed", "fixed"),
        ({"const": 3}, "3", 3),
        ({"type": "string", "enum": ["a"]}, "zz", "zz"),
    ],
)
def test_enum_and_const(schema: dict[str, Any], text: str, expected: Any) -> None:
    value = type_text(text, schema)
    assert value == expected
    assert type(value) is type(expected)


def test_nullable() -> None:
    assert type_text("null", {"type": "string", "nullable": True}) is None
    assert type_text("007", {"type": "string", "nullable": True}) == "007"
    assert type_text("null", {"type": "string", "nullable": False}) == "null"
    assert type_text("null", {"type": "integer", "nullable": True}) is None


@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ("3", NUMBER, 3),
        ("2.5", NUMBER, 2.5),
        ("1e-05", NUMBER, 1e-05),
        ("-2.5", NUMBER, -2.5),
        ("true", None, True),
        ("null", None, None),
        ("1e-05", None, 1e-05),
        ("inf", STRING, "inf"),
    ],
)
def test_gemma_bare_scalars(text: str, schema: dict[str, Any] | None, expected: Any) -> None:
    assert type_text(text, schema) == expected


@pytest.mark.parametrize(
    "text", ["inf", "-inf", "+inf", "nan", "Infinity", "-Infinity", "NaN", "[1, Infinity]", '{"a": NaN}']
)
@pytest.mark.parametrize("schema", [NUMBER, None, {"type": "array"}, {"type": "object"}])
def test_numbers_json_cannot_write_stay_text(text: str, schema: dict[str, Any] | None) -> None:
    """Gemma prints floats with ``str()`` (``inf``, ``nan``) and Python's json writes
    ``Infinity``; no JSON text holds them, so the arguments keep what was written."""
    assert type_text(text, schema) == text


def test_type_names_are_read_loosely() -> None:
    assert type_text("007", {"type": "STRING"}) == "007"  # Gemma upper-cases its types
    assert type_text("7", {"type": "int"}) == 7
    assert is_plain_string({"type": "str"})
    assert type_text("7", {"type": "whatever"}) == 7  # unknown: anything


@pytest.mark.parametrize(
    ("schema", "plain"),
    [
        (STRING, True),
        ({"type": ["string"]}, True),
        ({"enum": ["a", "b"]}, True),
        ({"const": "x"}, True),
        ({"anyOf": [STRING, {"enum": ["a"]}]}, True),
        ({"oneOf": [STRING, STRING]}, True),
        ({"allOf": [STRING, {"maxLength": 3}]}, True),
        (STRING_OR_NULL, False),
        ({"type": "string", "nullable": True}, False),
        ({"anyOf": [STRING, {"type": "null"}]}, False),
        ({"enum": ["a", 1]}, False),
        ({"anyOf": [STRING, {}]}, False),
        (NUMBER, False),
        ({}, False),
        (None, False),
        ({"$defs": {"S": STRING}, "$ref": "#/$defs/S"}, True),
    ],
)
def test_is_plain_string(schema: dict[str, Any] | None, plain: bool) -> None:
    assert is_plain_string(schema) is plain


def test_kinds() -> None:
    assert kinds(NUMBER) == frozenset({"number", "integer"})
    assert kinds({"anyOf": [STRING, {"type": "null"}]}) == frozenset({"string", "null"})
    assert kinds({"anyOf": [STRING, {}]}) is None
    assert kinds(None) is None


WEATHER = {
    "type": "object",
    "properties": {"city": STRING, "days": INTEGER},
    "additionalProperties": {"type": "boolean"},
}
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "get_weather", "description": "w", "parameters": WEATHER}},
    {"name": "bare", "parameters": {"type": "object", "properties": {"q": STRING}}},
    {"type": "function", "function": {"name": "no_params"}},
    "not a tool",
]


def test_tool_schema_finds_openai_and_bare_tools() -> None:
    assert tool_schema(TOOLS, "get_weather") is WEATHER
    assert tool_schema(TOOLS, "bare") == {"type": "object", "properties": {"q": STRING}}
    assert tool_schema(TOOLS, "no_params") is None
    assert tool_schema(TOOLS, "missing") is None
    assert tool_schema([], "x") is None


def test_property_schema() -> None:
    assert property_schema(WEATHER, "city") == STRING
    assert property_schema(WEATHER, "extra") == {"type": "boolean"}  # additionalProperties
    assert property_schema({"properties": {}}, "x") is None
    assert property_schema(None, "x") is None
    assert property_schema({"properties": {"x": "junk"}}, "x") is None


def test_glm_round_trip_of_template_output() -> None:
    """What ``glm.jinja`` writes (``tojson`` unless a string) reads back to the value."""
    schema = {"properties": {"s": STRING, "n": NUMBER, "o": STRING_OR_NULL, "a": {}}}
    values = {"s": "007", "n": 3.0, "o": None, "a": {"k": [1, "x"]}}
    for key, value in values.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        assert type_text(text, property_schema(schema, key)) == value


json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
leaf_schemas = (
    st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "number", "integer", "boolean", "null", "object", "array", "STR", 3])}
    )
    | st.fixed_dictionaries({"type": st.lists(st.sampled_from(["string", "null", "integer"]))})
    | st.fixed_dictionaries({"enum": st.lists(json_scalars) | json_scalars})
    | st.fixed_dictionaries({"const": json_scalars})
    | st.fixed_dictionaries({"$ref": st.sampled_from(["#", "#/$defs/x", "#/nope", "x", 5])})
)
schemas = st.recursive(
    st.none() | leaf_schemas,
    lambda inner: st.dictionaries(
        st.sampled_from(
            [
                "anyOf",
                "oneOf",
                "allOf",
                "properties",
                "items",
                "$defs",
                "$ref",
                "type",
                "nullable",
                "additionalProperties",
            ]
        ),
        inner | st.lists(inner) | st.booleans() | st.dictionaries(st.sampled_from("xy"), inner),
    ),
    max_leaves=10,
)


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise ``TimeoutError`` inside the block after ``seconds``: a hang becomes a failure."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@given(st.text(), schemas)
def test_type_text_never_raises(text: str, schema: dict[str, Any] | None) -> None:
    with deadline(5):  # a hang guard, not a timing check: a hang fails here, not in CI's limit
        type_text(text, schema)
        is_plain_string(schema)
        property_schema(schema, "x")


def test_refs_that_fan_out_resolve_with_bounded_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``$ref`` cycle is "anything", however many branches lead back into it; the work is
    counted (0.1.0 visited 2^32 subschemas here and never finished)."""
    visits = [0]
    original = schema_module._kinds

    def counted(*args: Any) -> Any:
        visits[0] += 1
        return original(*args)

    monkeypatch.setattr(schema_module, "_kinds", counted)
    assert type_text("1", {"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}) == 1
    assert type_text("1", {"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"$ref": "#"}]}) == 1
    # Past the budget, each open level still asks its remaining branches once (and gets "anything").
    assert visits[0] <= 2 * (schema_module._WORK_LIMIT + 3 * schema_module._MAX_DEPTH)


@given(st.text())
def test_string_schema_is_the_identity(text: str) -> None:
    assert type_text(text, STRING) == text


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    )
)
def test_no_schema_reads_json_back(value: Any) -> None:
    assert type_text(json.dumps(value), None) == value
