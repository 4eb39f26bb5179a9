"""Edges of typing values from a schema (``codec/arguments/schema.py``) and of the depth limit
(issue 12, "Tests that bite").

- ``type`` together with ``anyOf`` / ``allOf`` at one level: the two constrain together;
- kinds implied without ``type``: ``properties`` / ``additionalProperties`` (object), ``items``
  (array), ``enum`` / ``const`` (the kinds of their members);
- a ``$ref`` nested inside a property, resolved with the root's ``$defs`` carried along;
- the Python word ``False`` (as Gemma-minded models write it) where the schema wants a boolean;
- ``Limits.max_depth`` at its boundary, for every format: nesting equal to the limit is a call,
  one more stops the call (``too_deep``).
"""

from __future__ import annotations

from typing import Any

import pytest

import codec
from codec.arguments.schema import is_plain_string, kinds, property_schema, type_text
from support.calls import call_completion, parse, tool


@pytest.mark.parametrize(
    ("schema", "admitted"),
    [
        ({"type": "string", "anyOf": [{"type": "string"}, {"type": "integer"}]}, {"string"}),
        ({"type": ["string", "integer"], "allOf": [{"type": "integer"}]}, {"integer"}),
        ({"type": ["string", "integer"], "anyOf": [{"type": "integer"}, {"type": "boolean"}]}, {"integer"}),
        ({"type": ["string", "null"], "oneOf": [{"type": "null"}, {"type": "string"}]}, {"string", "null"}),
        ({"type": "number", "anyOf": [{"type": "integer"}]}, {"integer"}),
        ({"type": "integer", "allOf": [{"type": "string"}]}, None),  # contradiction: anything
        ({"type": "string", "anyOf": [{}]}, {"string"}),  # an unconstrained branch narrows nothing
    ],
)
def test_type_and_a_combinator_at_one_level_constrain_together(schema: dict[str, Any], admitted: Any) -> None:
    assert kinds(schema) == (None if admitted is None else frozenset(admitted))


@pytest.mark.parametrize(
    ("schema", "admitted"),
    [
        ({"properties": {"a": {}}}, {"object"}),
        ({"additionalProperties": {"type": "string"}}, {"object"}),
        ({"items": {"type": "integer"}}, {"array"}),
        ({"enum": [1, "a", None]}, {"integer", "string", "null"}),
        ({"const": True}, {"boolean"}),
        ({"description": "no kind said"}, None),
        ({"type": "object", "items": {}}, {"object"}),  # ``type`` wins over an implied kind
    ],
)
def test_kinds_implied_without_type(schema: dict[str, Any], admitted: Any) -> None:
    assert kinds(schema) == (None if admitted is None else frozenset(admitted))


def test_an_implied_kind_types_the_text() -> None:
    assert type_text("[1, 2]", {"items": {}}) == [1, 2]
    assert type_text('{"a": 1}', {"properties": {}}) == {"a": 1}
    assert type_text("[1, 2]", {"properties": {}}) == [1, 2]  # no fit: the best honest reading
    assert type_text("x", {"items": {}}) == "x"
    assert type_text("12", {"type": ["string", "integer"], "allOf": [{"type": "integer"}]}) == 12
    assert type_text("12", {"type": ["string", "integer"], "anyOf": [{"type": "string"}]}) == "12"


PARAMETERS = {
    "type": "object",
    "$defs": {
        "Unit": {"enum": ["C", "F"]},
        "Count": {"type": "integer"},
        "Inner": {"type": "object", "properties": {"unit": {"$ref": "#/$defs/Unit"}}},
    },
    "properties": {
        "maybe": {"anyOf": [{"$ref": "#/$defs/Count"}, {"type": "null"}]},
        "inner": {"$ref": "#/$defs/Inner"},
        "label": {"$ref": "#/$defs/Unit", "type": "string"},
    },
}


def test_a_nested_ref_inside_a_property_resolves_with_the_roots_defs() -> None:
    maybe = property_schema(PARAMETERS, "maybe")
    assert maybe is not None and "$defs" in maybe  # carried, so the ref inside anyOf resolves alone
    assert kinds(maybe) == frozenset({"integer", "null"})
    assert (type_text("7", maybe), type_text("null", maybe), type_text("x", maybe)) == (7, None, "x")
    inner = property_schema(PARAMETERS, "inner")
    assert kinds(inner) == frozenset({"object"})
    unit = property_schema(inner, "unit")  # a second level: the carried $defs are its root's
    assert unit is not None and kinds(unit) == frozenset({"string"})
    assert is_plain_string(property_schema(PARAMETERS, "label"))


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("False", {"type": "boolean"}, False),
        ("True", {"type": "boolean"}, True),
        ("None", {"type": "null"}, None),
        ("False", {"type": ["boolean", "string"]}, "False"),  # a string is admitted: the text
        ("False", {"type": "string"}, "False"),
        ("False", None, "False"),  # no schema: JSON only, and False is not JSON
    ],
)
def test_python_words_are_read_only_where_the_schema_rules_out_a_string(text: str, schema: Any, value: Any) -> None:
    assert type_text(text, schema) is value or type_text(text, schema) == value
    assert type(type_text(text, schema)) is type(value)


@pytest.mark.parametrize("fmt", codec.formats())
def test_the_python_word_false_for_a_boolean_parameter_is_false(fmt: str) -> None:
    """The call written for ``flag=False``, with the model's ``False`` for JSON's ``false``."""
    flags = [tool("f", {"flag": {"type": "boolean"}, "n": {"type": "integer"}})]
    text = call_completion(fmt, flags, "f", {"flag": False, "n": 1})
    # The value is where the call for flag=True differs; the template may write the word
    # elsewhere too (DeepSeek-V3.2's `string="false"` attribute).
    truthy = call_completion(fmt, flags, "f", {"flag": True, "n": 1})
    words = text.count("false") + text.count("False")
    assert words == truthy.count("false") + truthy.count("False") + 1  # Qwen3-Coder's template writes False itself
    at = next(i for i, (a, b) in enumerate(zip(text, truthy, strict=False)) if a != b)
    python = text[:at] + text[at:].replace("false", "False", 1)
    for chunks in ([python], list(python)):
        message = parse(fmt, chunks, flags)
        assert [call.arguments for call in message.tool_calls] == [{"flag": False, "n": 1}]


def nested(depth: int) -> Any:
    """A value ``depth`` containers deep, arrays and objects in turn: ``[{"k": [1]}]`` is 3."""
    value: Any = 1
    for level in range(depth):
        value = [value] if level % 2 == 0 else {"k": value}
    return value


@pytest.mark.parametrize("fmt", codec.formats())
@pytest.mark.parametrize("limit", [1, 3])
def test_the_depth_limit_admits_its_own_depth_and_stops_one_more(fmt: str, limit: int) -> None:
    """The arguments object is depth 0: ``max_depth`` containers inside it are a call; one more
    stops the call (``too_deep``), which is then no call to run."""
    untyped = [tool("f", {"a": {}, "b": {"type": "integer"}})]
    limits = codec.Limits(max_depth=limit)
    at_limit = call_completion(fmt, untyped, "f", {"a": nested(limit), "b": 2})
    past_limit = call_completion(fmt, untyped, "f", {"a": nested(limit + 1), "b": 2})
    for chunks in ([at_limit], list(at_limit)):
        message = parse(fmt, chunks, untyped, limits=limits)
        assert [call.arguments for call in message.tool_calls] == [{"a": nested(limit), "b": 2}]
        assert not message.diagnostics
    for chunks in ([past_limit], list(past_limit)):
        message = parse(fmt, chunks, untyped, limits=limits)
        assert message.tool_calls == ()
        assert len(message.incomplete_calls) == 1
        assert [diagnostic.code for diagnostic in message.diagnostics][:1] == ["too_deep"]
