"""Pinned edges of schema reading (``codec/arguments/schema.py``) and of the strict reading
before the tolerant machine (``codec/arguments/tolerant_schema.py``), found by mutation testing
(issue 12, "Tests that bite")."""

from __future__ import annotations

from typing import Any

from codec.arguments.schema import (
    _MAX_DEPTH,
    _WORK_LIMIT,
    kinds,
    nests_deeper_than,
    property_schema,
    tool_schema,
    type_text,
)
from codec.arguments.tolerant import Decoded, decode_value


def where(decoded: Decoded) -> list[tuple[str, int]]:
    """The repairs of a decoded value: what was repaired, and where."""
    return [(repair.code, repair.offset) for repair in decoded.repairs]


def test_json_pointer_escapes_name_defs_with_slash_and_tilde() -> None:
    """RFC 6901: ``~1`` is ``/`` and ``~0`` is ``~``, ``~1`` decoded first (``~01`` is ``~1``)."""
    parameters = {
        "$defs": {"a/b": {"type": "integer"}, "a~b": {"type": "boolean"}, "~1": {"type": "null"}},
        "properties": {
            "slash": {"$ref": "#/$defs/a~1b"},
            "tilde": {"$ref": "#/$defs/a~0b"},
            "both": {"$ref": "#/$defs/~01"},
        },
    }
    assert kinds(property_schema(parameters, "slash")) == frozenset({"integer"})
    assert kinds(property_schema(parameters, "tilde")) == frozenset({"boolean"})
    assert kinds(property_schema(parameters, "both")) == frozenset({"null"})


def test_a_pointer_without_the_slash_after_the_hash_still_resolves() -> None:
    """``#$defs/N`` (a hand-written slip for ``#/$defs/N``) is read as the path it spells."""
    schema = {"$defs": {"N": {"type": "integer"}}, "$ref": "#$defs/N"}
    assert kinds(schema) == frozenset({"integer"})
    assert type_text("7", schema) == 7


def test_a_ref_to_something_not_a_schema_is_unconstrained() -> None:
    """A ``$ref`` naming a list or a string is no schema: the value reads as plain JSON, no crash."""
    for target in (["integer"], "integer", 3):
        schema: dict[str, Any] = {"$defs": {"N": target}, "$ref": "#/$defs/N"}
        assert kinds(schema) is None
        assert type_text("007", schema) == "007"
        assert type_text("[1]", schema) == [1]


def test_a_number_too_large_for_a_float_stays_text_with_a_repair() -> None:
    """``1e999`` is infinite as a float: no JSON can hold it, so it is kept as the text written."""
    decoded = decode_value('{"a": 1e999}')
    assert decoded.value == {"a": "1e999"}
    assert where(decoded) == [("unquoted_string", 6)]


def test_strict_json_is_read_before_any_verbatim_quote_token() -> None:
    """Strict JSON is ``json.loads``'s reading, whatever the verbatim quote: a token that is
    also JSON syntax (here ``{``) does not turn a well-formed object into repairs."""
    assert decode_value('{"a": "x{y"}', verbatim_quote="{") == Decoded({"a": "x{y"}, (), True)
    assert decode_value('[{"a": 1}, "{"]', verbatim_quote="{") == Decoded([{"a": 1}, "{"], (), True)


PARAMETERS = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "ns": {"type": "array", "items": {"type": "integer"}},
        "opt": {"anyOf": [{"type": "object", "properties": {"k": {"type": "integer"}}}, {"type": "null"}]},
    },
}


def test_json_words_for_non_finite_numbers_stay_text_with_a_repair() -> None:
    """``NaN`` and ``Infinity`` are Python's json, not JSON: kept as the text written."""
    decoded = decode_value('{"a": Infinity, "b": [NaN]}')
    assert decoded.value == {"a": "Infinity", "b": ["NaN"]}
    assert where(decoded) == [("unquoted_string", 6), ("unquoted_string", 22)]


def test_members_and_items_of_strict_json_are_typed_by_their_own_schemas() -> None:
    """Strict JSON whose nested value the schema types otherwise is not taken as it is."""
    for text, value, at in [
        ('{"n": "3"}', {"n": 3}, 6),
        ('{"ns": ["3"]}', {"ns": [3]}, 8),
        ('{"opt": {"k": "3"}}', {"opt": {"k": 3}}, 14),  # Optional[Model]: the anyOf branch with properties
    ]:
        decoded = decode_value(text, PARAMETERS)
        assert (decoded.value, where(decoded)) == (value, [("quoted_scalar", at)])


def test_a_float_with_no_fraction_is_an_int_only_where_numbers_are_ruled_out() -> None:
    decoded = decode_value('{"x": 3.0, "n": 3.0}', PARAMETERS)
    assert decoded == Decoded({"x": 3.0, "n": 3}, (), True)
    assert [type(decoded.value["x"]), type(decoded.value["n"])] == [float, int]


def test_strict_json_that_fits_the_schema_is_read_before_any_verbatim_quote_token() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "l": {"items": {"type": "integer"}}}}
    text = '{"a": "x{y", "l": [1, 2]}'
    assert decode_value(text, schema, verbatim_quote="{") == Decoded({"a": "x{y", "l": [1, 2]}, (), True)


def test_a_duplicate_key_in_strict_json_keeps_the_first_value() -> None:
    decoded = decode_value('{"a": 1, "a": 2}')
    assert (decoded.value, where(decoded)) == ({"a": 1}, [("duplicate_key", 9)])


def test_the_member_schema_is_found_in_whichever_union_branch_has_it() -> None:
    """``oneOf`` as ``anyOf``; branches without ``properties`` (``true``, ``null``) are passed over;
    ``additionalProperties`` beside the union does not hide the branch with ``items``."""
    model = {"type": "object", "properties": {"k": {"type": "integer"}}}
    schema = {"type": "object", "properties": {"one": {"oneOf": [True, {"type": "null"}, model]}}}
    decoded = decode_value('{"one": {"k": "3"}}', schema)
    assert (decoded.value, where(decoded)) == (
        {"one": {"k": 3}},
        [("quoted_scalar", 14)],
    )
    beside = {"additionalProperties": {}, "anyOf": [{"items": {"type": "integer"}}]}
    decoded = decode_value('["3"]', beside)
    assert (decoded.value, where(decoded)) == ([3], [("quoted_scalar", 1)])


def test_definitions_of_the_older_drafts_are_carried_into_a_property_like_defs() -> None:
    # `definitions` (draft 4-7) as well as `$defs`: a reference nested in the property resolves.
    for keyword in ("$defs", "definitions"):
        parameters = {
            keyword: {"Unit": {"type": "integer"}},
            "properties": {"p": {"type": "object", "properties": {"u": {"$ref": f"#/{keyword}/Unit"}}}},
        }
        member = property_schema(parameters, "p")
        assert member is not None
        assert kinds(property_schema(member, "u")) == frozenset({"integer"}), keyword


def test_an_enum_behind_a_reference_matches_its_quoted_member() -> None:
    schema = {"$ref": "#/$defs/Unit", "$defs": {"Unit": {"enum": ["c", "f"]}}}
    assert type_text('"c"', schema) == "c"  # the member the JSON spells, not the quoted text
    assert type_text("f", schema) == "f"


def test_white_space_before_a_json_value_does_not_keep_it_text() -> None:
    assert type_text(" 42", {"type": "integer"}) == 42
    assert type_text("\n[1, 2]", {"type": "array"}) == [1, 2]


def test_a_tool_entry_that_is_not_an_object_is_skipped_not_the_end_of_the_list() -> None:
    parameters = {"type": "object", "properties": {"a": {"type": "integer"}}}
    tools: list[Any] = ["junk", None, {"type": "function", "function": {"name": "f", "parameters": parameters}}]
    assert tool_schema(tools, "f") == parameters
    assert tool_schema(tools, "g") is None


def test_depth_counts_closers_and_never_goes_below_the_top() -> None:
    assert not nests_deeper_than("[[1], [2], [3]]", 2)  # siblings are not deeper
    assert nests_deeper_than("[[[1], [[2]]]]", 3)  # each closer takes exactly one level off
    assert not nests_deeper_than("[[[1], [[2]]]]", 4)
    assert not nests_deeper_than('["[[[[", {"k": "]]]]"}]', 2)  # brackets in strings do not count
    assert not nests_deeper_than("]] [[1]]", 2)  # stray closers first do not lower the floor
    assert not nests_deeper_than("[1] [[1]]", 2)  # a value closed is back at the top
    assert nests_deeper_than("[1] [[[1]]]", 2)


def test_a_schema_s_own_shape_wins_over_its_union_branches() -> None:
    # Only a schema without `properties`/`items` of its own (pydantic's `Optional[Model]`) is
    # read through the first branch that has them; `additionalProperties` is a shape of its own.
    union = [{"properties": {"a": {"type": "string"}}, "items": {"type": "string"}}]
    own_members = {"type": "object", "properties": {"a": {"type": "integer"}}, "anyOf": union}
    own_items = {"type": "array", "items": {"type": "integer"}, "anyOf": union}
    open_object = {"type": "object", "additionalProperties": {"type": "integer"}, "anyOf": union}
    assert decode_value('{"a": "5"}', own_members).value == {"a": 5}
    assert decode_value('["5"]', own_items).value == [5]
    assert decode_value('{"a": "5"}', open_object).value == {"a": 5}
    assert decode_value('{"a": "5"}', {"type": "object", "anyOf": union}).value == {"a": "5"}


def test_a_repair_names_every_admitted_type() -> None:
    decoded = decode_value('"abc"', {"type": ["integer", "boolean"]})
    assert [(r.code, r.message) for r in decoded.repairs] == [
        ("untyped", "string 'abc' where the schema wants boolean/integer")
    ]


def test_the_items_of_an_array_without_an_items_schema_are_any_value() -> None:
    # An object's `additionalProperties` says nothing about the items of an array the same
    # schema admits.
    either = {"type": ["array", "object"], "additionalProperties": {"type": "integer"}}
    assert decode_value('["5"]', either).value == ["5"]
    assert decode_value('{"a": "5"}', either).value == {"a": 5}


def _nested_any_of(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"anyOf": [schema]}
    return schema


def test_kinds_reads_unions_nested_to_the_depth_limit_and_no_further() -> None:
    assert kinds(_nested_any_of(_MAX_DEPTH)) == frozenset({"string"})
    assert kinds(_nested_any_of(_MAX_DEPTH + 1)) is None  # past the limit: anything


def test_kinds_visits_the_work_limit_of_subschemas_and_no_more() -> None:
    # The schema itself and its branches are visits: one branch fewer than the limit fits.
    assert kinds({"anyOf": [{"type": "string"}] * (_WORK_LIMIT - 1)}) == frozenset({"string"})
    assert kinds({"anyOf": [{"type": "string"}] * _WORK_LIMIT}) is None


def test_kinds_of_malformed_keywords_ignores_them() -> None:
    assert kinds({"type": "integer", "anyOf": {"type": "string"}}) == frozenset({"integer"})  # not a list
    assert kinds({"type": 5, "enum": [1]}) == frozenset({"integer"})  # a `type` that names nothing


def test_an_empty_enum_in_a_union_admits_nothing_not_anything() -> None:
    assert kinds({"anyOf": [{"enum": []}]}) == frozenset()


def test_nullable_adds_null_to_the_types() -> None:
    assert kinds({"type": "string", "nullable": True}) == frozenset({"string", "null"})
    assert kinds({"type": "string", "nullable": False}) == frozenset({"string"})


def test_parameters_given_as_a_reference_are_resolved() -> None:
    parameters = {
        "$ref": "#/$defs/Args",
        "$defs": {"Args": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    }
    assert kinds(property_schema(parameters, "a")) == frozenset({"integer"})


def test_parameters_that_are_not_an_object_schema_are_none() -> None:
    assert tool_schema([{"name": "f", "parameters": "oops"}], "f") is None
    assert tool_schema([{"name": "f", "parameters": ["a"]}], "f") is None
