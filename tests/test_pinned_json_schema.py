"""Pinned edges of schema reading (``codec/arguments/schema.py``) and of the strict reading
before the tolerant machine (``codec/arguments/tolerant_schema.py``), found by mutation testing
(issue 12, "Tests that bite")."""

from __future__ import annotations

from typing import Any

from codec.arguments.schema import kinds, property_schema, type_text
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
