"""Schemas past llguidance's limits (docs/constraint.md, "Limits"): the constraint is looser
there, says so in a note (its code, tool and path), and still accepts the call the format's own
template writes; it never crashes and never makes a grammar llguidance refuses.

Each case was past a limit before the bounds: refused at run time (an Earley row over 2,000
items), refused by llguidance at compile time (over 65,525 symbols), or a ``RecursionError``.
The sizes are the smallest round ones past each limit, so every test stays within seconds.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("llguidance")

import codec
from codec.constrain import Constraint, build
from codec.constrain.check import matcher, tokens
from support.calls import call_completion, tool

FORMATS_UNDER_TEST = [fmt for fmt in codec.formats() if codec.registry.FORMATS[fmt].family.constraint is not None]


def accepted(
    fmt: str,
    tools: list[dict[str, Any]],
    name: str,
    arguments: dict[str, Any],
    *,
    rendered_with: list[dict[str, Any]] | None = None,
    built: Constraint | None = None,
) -> Constraint:
    """Build the constraint for ``tools`` (or take ``built``), and check it accepts the
    template's call of ``name`` with ``arguments`` token by token (rendered with the tools
    ``rendered_with`` where the template refuses ``tools``)."""
    built = built or build(codec.load(fmt), tools=tools)
    text = call_completion(fmt, rendered_with or tools, name, arguments)
    m = matcher(fmt, built.grammar)
    for index, token in enumerate(tokens(fmt, text)):
        assert m.consume_token(token), f"refused token {index} of {text[:200]!r}: {m.get_error()[:300]}"
    assert m.is_accepting()
    return built


def notes(built: Constraint, code: str) -> dict[tuple[str | None, str], str]:
    """The notes of ``code``: (tool, path) -> detail."""
    return {(note.tool, note.path): note.detail for note in built.notes if note.code == code}


def offered(name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": "A tool.", "parameters": parameters}}


def required(properties: dict[str, Any], *names: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(names)}


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_a_huge_enum_is_its_type(fmt: str) -> None:
    values = [f"value_{index}" for index in range(10_000)]
    tools = [offered("f", required({"e": {"enum": values}}, "e"))]
    built = accepted(fmt, tools, "f", {"e": "value_9999"})
    [detail] = notes(built, "too_large").values()
    assert "10000" in detail and "1000" in detail
    assert list(notes(built, "too_large")) == [("f", "/properties/e/enum")]


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_a_huge_any_of_is_any_value(fmt: str) -> None:
    branches = [required({f"k{index}": {"type": "integer"}}, f"k{index}") for index in range(2_500)]
    parameters = required({"a": {"anyOf": branches}}, "a")
    tools = [offered("f", parameters)]
    built = accepted(fmt, tools, "f", {"a": {"k2499": 5}})
    assert list(notes(built, "too_large")) == [("f", "/properties/a/anyOf")]


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_an_any_of_whose_branches_together_are_too_wide_is_any_value(fmt: str) -> None:
    """Three enums of 800 each fit alone; where the value starts, all 2,400 would be items."""
    branches = [{"enum": list(range(start, start + 800))} for start in (0, 800, 1600)]
    tools = [offered("f", required({"a": {"anyOf": branches}}, "a"))]
    built = accepted(fmt, tools, "f", {"a": 2399})
    [detail] = notes(built, "too_large").values()
    assert "2403" in detail
    assert list(notes(built, "too_large")) == [("f", "/properties/a/anyOf")]


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_a_long_run_of_optional_properties_is_any_object(fmt: str) -> None:
    properties = {f"p{index:04}": {"type": "string"} for index in range(1_100)}
    tools = [tool("f", properties)]
    built = accepted(fmt, tools, "f", {"p1099": "x", "p0000": "y"})
    [detail] = notes(built, "too_large").values()
    assert "1100 optional properties" in detail
    assert list(notes(built, "too_large")) == [("f", "/properties")]


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_hundreds_of_properties_with_required_ones_between_stay_exact(fmt: str) -> None:
    """Not past the limit: a required member every other one bounds each run of optional ones."""
    properties = {f"p{index:04}": {"type": "integer"} for index in range(1_000)}
    parameters = required(properties, *[key for index, key in enumerate(properties) if index % 2 == 0])
    tools = [offered("f", parameters)]
    arguments = {key: index for index, key in enumerate(properties) if index % 2 == 0 or index == 999}
    built = accepted(fmt, tools, "f", arguments)
    assert not notes(built, "too_large")


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_thousands_of_tools_past_the_first_are_checked_by_name(fmt: str) -> None:
    parameters = required({"q": {"type": "string"}, "k": {"type": "integer"}}, "q")
    tools = [offered(f"tool_{index}", parameters) for index in range(2_500)]
    built = accepted(fmt, tools, "tool_2499", {"q": "x", "k": 3})
    loose = notes(built, "too_large")
    assert ("tool_0", "") not in loose
    assert {(f"tool_{index}", "") for index in range(1_000, 2_500)} <= set(loose)
    assert "more than 1000 tools" in loose[("tool_2499", "")] or "SYMBOL_BUDGET" in loose[("tool_2499", "")]
    accepted(fmt, tools, "tool_0", {"q": "x"}, built=built)


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_tools_past_the_symbol_budget_are_checked_by_name(fmt: str) -> None:
    """Few tools, each large: llguidance numbers its symbols in 16 bits."""
    properties = {f"p{index}": {"type": "integer"} for index in range(100)}
    parameters = required(properties, *properties)
    tools = [offered(f"t{index}", parameters) for index in range(200)]
    built = accepted(fmt, tools, "t199", dict.fromkeys(properties, 1))
    loose = notes(built, "too_large")
    assert ("t0", "") not in loose
    assert "SYMBOL_BUDGET" in loose[("t199", "")]


def _nested(depth: int) -> tuple[dict[str, Any], Any]:
    """An object schema nested ``depth`` deep, and the one value it admits."""
    schema: dict[str, Any] = {"type": "string", "const": "leaf"}
    value: Any = "leaf"
    for _ in range(depth):
        schema, value = required({"x": schema}, "x"), {"x": value}
    return schema, value


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
@pytest.mark.parametrize("where", ["schema", "const"])
def test_parameters_nested_thousands_deep_are_any_arguments(fmt: str, where: str) -> None:
    """No template is given a value nested over 100 deep, so the call is rendered with a
    shallower schema; the constraint of the deep one takes any arguments and says why."""
    schema, value = _nested(2_000)
    deep = required({"a": schema if where == "schema" else {"const": value}}, "a")
    tools = [offered("f", deep)]
    built = accepted(fmt, tools, "f", {"a": {"x": "leaf"}}, rendered_with=[tool("f", {"a": {"type": "object"}})])
    assert list(notes(built, "too_deep")) == [("f", "")]


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_a_ref_cycle_is_any_value_with_a_note(fmt: str) -> None:
    parameters = {
        **required({"a": {"$ref": "#/$defs/A"}}, "a"),
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
    }
    tools = [offered("f", parameters)]
    built = accepted(fmt, tools, "f", {"a": [1, {"b": None}]})
    assert ("f", "/properties/a") in notes(built, "unresolved_ref")
