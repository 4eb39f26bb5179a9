"""``codec.arguments.tolerant``: argument values as models write them, in JSON, Python's
literals and Gemma 4's syntax, typed by the schema, cut off, nested too deep, or garbage."""

from __future__ import annotations

import cProfile
import json
import math
import pstats
import time
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from codec._nesting import deeper_than
from codec.arguments.tolerant import CODES, Decoded, Repair, decode_arguments, decode_value
from codec.arguments.tolerant_parse import machine
from codec.engine.grammar import compiled
from codec.registry import FORMATS

Q = compiled(FORMATS["gemma4"].grammar).display("QUOTE")  # Gemma 4's string quote, from its grammar

FLOATS = st.floats(allow_nan=False, allow_infinity=False)
SCALARS = st.none() | st.booleans() | st.integers() | FLOATS | st.text()
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20)
GEMMA_TEXT = st.text().filter(lambda text: Q not in text)  # the template refuses the quote token in a string
GEMMA_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | FLOATS | GEMMA_TEXT,
    lambda inner: st.lists(inner) | st.dictionaries(GEMMA_TEXT, inner),
    max_leaves=20,
)
STRUCTURE_TOKENS = ["{", "}", "[", "]", ",", ":", '"', "'", "\\", " ", Q, "<|", "1", "a", "True"]
STRUCTURAL = st.lists(st.sampled_from(STRUCTURE_TOKENS))
SCHEMAS = st.sampled_from(
    [
        None,
        {"type": "integer"},
        {"type": "string"},
        {"type": ["string", "null"]},
        {"type": "array", "items": {"type": "integer"}},
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "boolean"}}}},
        {"type": "object", "additionalProperties": {"type": "number"}},
    ]
)


def codes(decoded: Decoded) -> list[str]:
    return [repair.code for repair in decoded.repairs]


def gemma(value: Any) -> str:
    """``value`` as Gemma 4's ``format_argument`` writes it (keys bare when they are words)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return Q + value + Q
    if isinstance(value, list):
        return "[" + ",".join(map(gemma, value)) + "]"
    if isinstance(value, dict):
        keys = {key: key if key.isidentifier() else Q + key + Q for key in value}
        return "{" + ",".join(f"{keys[key]}:{gemma(item)}" for key, item in value.items()) + "}"
    return str(value)


def with_trailing_commas(value: Any, comma: Any) -> tuple[str, int]:
    """JSON with a comma after the last element of the non-empty containers where ``comma()``
    says so, and how many it wrote."""
    if not isinstance(value, list | dict) or not value:
        return json.dumps(value), 0
    items = value.items() if isinstance(value, dict) else ((None, item) for item in value)
    parts, count = [], 0
    for key, item in items:
        text, inner = with_trailing_commas(item, comma)
        parts.append(text if key is None else f"{json.dumps(key)}: {text}")
        count += inner
    trailing = comma()
    brackets = "{}" if isinstance(value, dict) else "[]"
    return brackets[0] + ", ".join(parts) + ("," if trailing else "") + brackets[1], count + trailing


def cut_inside(prefix: str) -> tuple[bool, bool]:
    """Whether a prefix of a JSON document ends inside a string, and inside a container."""
    depth, in_string, escaped = 0, False, False
    for char in prefix:
        if in_string:
            escaped, in_string = (not escaped and char == "\\"), in_string and (escaped or char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
    return in_string, depth > 0


def strict_json(text: str) -> Any:
    """``json.loads`` without NaN, Infinity, ``1e400`` and duplicate keys; ``KeyError`` when not strict."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        if len(dict(pairs)) < len(pairs):
            raise ValueError("duplicate")
        return dict(pairs)

    def refuse(word: str) -> Any:
        raise ValueError(word)

    def finite(word: str) -> float:
        return float(word) if math.isfinite(float(word)) else refuse(word)

    try:
        return json.loads(text, parse_constant=refuse, parse_float=finite, object_pairs_hook=unique)
    except (ValueError, RecursionError):
        raise KeyError(text) from None


def check_invariants(text: str, decoded: Decoded, max_depth: int) -> None:
    assert isinstance(decoded, Decoded)
    for repair in decoded.repairs:
        assert repair.code in CODES, repair
        assert 0 <= repair.offset <= len(text), repair
    assert not deeper_than(decoded.value, max_depth)
    json.dumps(decoded.value, allow_nan=False)  # always a JSON value: finite numbers, str keys


@given(JSON_VALUES, st.sampled_from([None, 2]), st.booleans())
def test_json_decodes_to_itself_without_repairs(value: Any, indent: int | None, ascii_only: bool) -> None:
    assert decode_value(json.dumps(value, indent=indent, ensure_ascii=ascii_only)) == Decoded(value, (), True)


@given(JSON_VALUES, st.sampled_from([None, 2]), st.booleans())
def test_the_machine_alone_reads_json_as_json_loads_does(value: Any, indent: int | None, ascii_only: bool) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    assert machine(text) == (value, (), True)


@given(JSON_VALUES)
def test_python_repr_decodes_to_the_value(value: Any) -> None:
    decoded = decode_value(repr(value))
    assert (decoded.value, decoded.complete) == (value, True)


@given(GEMMA_VALUES)
def test_gemma_syntax_decodes_to_the_value(value: Any) -> None:
    decoded = decode_value(gemma(value), verbatim_quote=Q)
    assert (decoded.value, decoded.complete) == (value, True)


@given(JSON_VALUES, st.data())
def test_trailing_commas_are_forgiven_one_repair_each(value: Any, data: st.DataObject) -> None:
    text, commas = with_trailing_commas(value, lambda: data.draw(st.booleans(), label="comma"))
    decoded = decode_value(text)
    assert (decoded.value, decoded.complete) == (value, True)
    assert codes(decoded) == ["trailing_comma"] * commas


@given(st.text() | JSON_VALUES, st.sampled_from([None, 1]), st.data())
def test_a_cut_off_document_is_incomplete(value: Any, indent: int | None, data: st.DataObject) -> None:
    text = json.dumps(value, indent=indent)
    prefix = text[: data.draw(st.integers(0, len(text)), label="cut")]
    decoded = decode_value(prefix)
    check_invariants(prefix, decoded, 64)
    in_string, in_container = cut_inside(prefix)
    assert decoded.complete is not (in_string or in_container)
    assert ("unclosed_string" in codes(decoded)) is in_string
    assert ("unclosed_container" in codes(decoded)) is in_container


@given(st.text() | STRUCTURAL.map("".join), SCHEMAS, st.integers(1, 4), st.sampled_from([None, Q]))
def test_any_text_decodes_without_raising(text: str, schema: Any, max_depth: int, quote: str | None) -> None:
    check_invariants(text, decode_value(text, schema, max_depth=max_depth, verbatim_quote=quote), max_depth)
    arguments = decode_arguments(text, schema, max_depth=max_depth, verbatim_quote=quote)
    assert arguments is None or isinstance(arguments.value, dict)


@st.composite
def near_json(draw: st.DrawFn) -> str:
    """A JSON document with one character deleted or one structural token inserted."""
    text = json.dumps(draw(JSON_VALUES))
    at = draw(st.integers(0, len(text)))
    if draw(st.booleans()) and at < len(text):
        return text[:at] + text[at + 1 :]
    return text[:at] + draw(st.sampled_from(STRUCTURE_TOKENS)) + text[at:]


@given(st.text() | STRUCTURAL.map("".join) | near_json(), st.sampled_from([None, Q]))
def test_repairs_are_empty_exactly_for_strict_json(text: str, quote: str | None) -> None:
    """Gemma's quote token is one of the syntaxes read, not a mistake: only it goes unreported
    (where it is the verbatim quote; without one it is text like any other)."""
    assume(quote is None or quote not in text)
    decoded = decode_value(text, verbatim_quote=quote)
    try:
        expected = strict_json(text)
    except KeyError:
        assert decoded.repairs
    else:
        assert decoded == Decoded(expected, (), True)


def test_strict_json_with_escapes_is_the_fast_path_and_nan_stays_text() -> None:
    text = r'{"a": "x\"y\\z\n\u00e9\ud83d\ude00\/", "b": [1.5e3, -0, true, null]}'
    assert decode_value(text) == Decoded({"a": 'x"y\\z\né😀/', "b": [1500.0, 0, True, None]}, (), True)
    decoded = decode_value("[NaN, Infinity, -Infinity, 1e400]")
    assert decoded.value == ["NaN", "Infinity", "-Infinity", "1e400"]
    assert [(r.code, r.offset) for r in decoded.repairs] == [("unquoted_string", at) for at in (1, 6, 16, 27)]


def test_json_written_inside_a_string_is_unwrapped_for_an_array() -> None:
    schema = {"type": "array", "items": {"type": "object"}}
    for text in (r'"[{\"id\": \"1\"}]"', r"[{\"id\": \"1\"}]"):
        decoded = decode_value(text, schema)
        assert decoded.value == [{"id": "1"}]
        assert codes(decoded) == ["json_in_string"]
    params = {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "integer"}}}}
    decoded = decode_value('{"ids": "[1, \\"2\\"]"}', params)
    assert decoded.value == {"ids": [1, 2]}
    assert [(r.code, r.offset) for r in decoded.repairs] == [("json_in_string", 8), ("quoted_scalar", 8)]
    assert decode_value(r'"[1]"').value == "[1]"  # no schema: a string is a string


def test_python_literals() -> None:
    decoded = decode_value("{'a': True, 'b': [False, None], 'c': 'it\\'s', \"d\": \"\\x41\"}")
    assert decoded.value == {"a": True, "b": [False, None], "c": "it's", "d": "A"}
    assert [(r.code, r.offset) for r in decoded.repairs if r.code == "python_literal"] == [
        ("python_literal", 6),
        ("python_literal", 18),
        ("python_literal", 25),
        ("python_literal", 52),
    ]


def test_trailing_commas() -> None:
    decoded = decode_value('{"a": [1, 2,], "b": {"c": 3,},}')
    assert decoded.value == {"a": [1, 2], "b": {"c": 3}}
    assert [(r.code, r.offset) for r in decoded.repairs] == [("trailing_comma", at) for at in (11, 27, 29)]


def test_bare_keys_and_mixed_quotes() -> None:
    decoded = decode_value(f"{{a: 1, 'b': \"x\", \"c\": 'y', d: {Q}z{Q}}}", verbatim_quote=Q)
    assert decoded.value == {"a": 1, "b": "x", "c": "y", "d": "z"}
    assert [(r.code, r.offset) for r in decoded.repairs] == [
        ("bare_key", 1),
        ("single_quotes", 7),
        ("single_quotes", 22),
        ("bare_key", 27),
    ]


def test_unquoted_strings_run_to_the_end_of_their_structure() -> None:
    decoded = decode_value("{city: Paris , note: late dinner at 22:00, tags: [a b, c[1]]}")
    assert decoded.value == {"city": "Paris", "note": "late dinner at 22:00", "tags": ["a b", "c[1]"]}
    assert [(r.code, r.offset) for r in decoded.repairs if r.code == "unquoted_string"] == [
        ("unquoted_string", 7),
        ("unquoted_string", 21),
        ("unquoted_string", 50),
        ("unquoted_string", 55),
    ]
    assert decode_value("Hello, world ").value == "Hello, world"  # GLM's raw string
    assert decode_value('"Hi" she said').value == '"Hi" she said'  # quoted only at the start: all text


def test_gemma_strings_close_where_the_structure_follows() -> None:
    text = f"{{city:{Q}Paris{Q},days:3,tags:[{Q}a{Q}]}}"
    assert decode_value(text, verbatim_quote=Q).value == {"city": "Paris", "days": 3, "tags": ["a"]}
    decoded = decode_value(f"{{q:{Q}say {Q}hi{Q} now{Q} , n:1}}", verbatim_quote=Q)
    assert decoded.value == {"q": f"say {Q}hi{Q} now", "n": 1}
    assert [(r.code, r.offset) for r in decoded.repairs if r.code == "inner_quote_token"] == [
        ("inner_quote_token", 12),
        ("inner_quote_token", 19),
    ]
    assert decode_value(f"{{{Q}key{Q}:{Q}v{Q}}}", verbatim_quote=Q).value == {"key": "v"}  # keys quoted with it
    decoded = decode_value(f"{{a:{Q}x\\n{Q}}}", verbatim_quote=Q)  # nothing is escaped inside the token
    assert decoded == Decoded({"a": "x\\n"}, (Repair("bare_key", 1, "key 'a' without quotes"),), True)


def test_without_a_verbatim_quote_the_token_is_text() -> None:
    decoded = decode_value(f"{{city:{Q}Paris{Q}}}")
    assert decoded.value == {"city": f"{Q}Paris{Q}"}
    assert codes(decoded) == ["bare_key", "unquoted_string"]
    assert decode_value(f"{Q}Paris{Q}").value == f"{Q}Paris{Q}"
    assert decode_arguments(f"{{{Q}key{Q}:1}}") == decode_arguments(f"{{{Q}key{Q}:1}}", verbatim_quote=None)
    assert decode_arguments(f"{{{Q}key{Q}:1}}", verbatim_quote=Q) == Decoded({"key": 1}, (), True)
    with pytest.raises(ValueError, match="empty"):
        decode_value("{}", verbatim_quote="")


def test_json_and_python_quotes_inside_gemma_syntax() -> None:
    assert decode_value('{a:"x",b:3}').value == {"a": "x", "b": 3}
    assert decode_value("{a:'x'}").value == {"a": "x"}
    decoded = decode_value('{a:"x')
    assert (decoded.value, decoded.complete) == ({"a": "x"}, False)
    assert [(r.code, r.offset) for r in decoded.repairs] == [
        ("bare_key", 1),
        ("unclosed_string", 3),
        ("unclosed_container", 0),
    ]


def test_quoted_scalars_are_typed_by_the_schema() -> None:
    assert decode_value('"42"', {"type": "integer"}).value == 42
    assert decode_value('"true"', {"type": "boolean"}).value is True
    assert decode_value('"3.0"', {"type": "integer"}).value == 3
    schema = {"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "string"}}}
    decoded = decode_value('{"n": "2.5", "s": "2.5"}', schema)
    assert decoded.value == {"n": 2.5, "s": "2.5"}
    assert [(r.code, r.offset) for r in decoded.repairs] == [("quoted_scalar", 6)]


def test_a_bare_number_for_a_string_is_its_exact_text() -> None:
    schema = {"type": "object", "properties": {"zip": {"type": "string"}, "code": {"type": "string"}}}
    decoded = decode_value('{"zip": 007, "code": 1.50}', schema)
    assert decoded.value == {"zip": "007", "code": "1.50"}
    assert [(r.code, r.offset) for r in decoded.repairs] == [("unquoted_string", 8), ("unquoted_string", 21)]
    assert decode_value("123", {"type": "string"}).value == "123"
    assert decode_value('{"a": [1]}', {"type": "string"}).value == '{"a": [1]}'


def test_what_the_schema_cannot_hold_stays_as_written() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "b": {"type": "boolean"}}}
    decoded = decode_value('{"n": "many", "b": [1], "x": 007}', schema)
    assert decoded.value == {"n": "many", "b": [1], "x": "007"}
    assert [(r.code, r.offset) for r in decoded.repairs] == [("untyped", 6), ("untyped", 19), ("unquoted_string", 29)]


def test_a_union_schema_types_its_members() -> None:
    schema = {
        "type": "object",
        "properties": {"ids": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Id"}}, {"type": "null"}]}},
        "$defs": {"Id": {"type": "integer"}},
    }
    assert decode_value('{"ids": ["1", 2]}', schema).value == {"ids": [1, 2]}


def test_cut_off_values_hold_what_arrived() -> None:
    for text, value in [
        ('{"a": [1, 2', {"a": [1, 2]}),
        ('{"a": "hel', {"a": "hel"}),
        ('{"a": "x", "b', {"a": "x"}),
        ('"abc\\', "abc\\"),
        (f"{{a:{Q}Par", {"a": "Par"}),
    ]:
        decoded = decode_value(text, verbatim_quote=Q)
        assert (decoded.value, decoded.complete) == (value, False), text


def test_nesting_past_max_depth_stays_text() -> None:
    decoded = decode_value("[" * 100_000)
    assert not deeper_than(decoded.value, 64) and deeper_than(decoded.value, 63)
    assert decoded.complete is False and "too_deep" in codes(decoded)
    decoded = decode_value("[[[1], 2]]", max_depth=2)
    assert decoded.value == [["[1]", 2]]
    assert [(r.code, r.offset) for r in decoded.repairs] == [("too_deep", 2)]


def test_decode_arguments_wants_an_object() -> None:
    assert decode_arguments('{"a": 1}') == Decoded({"a": 1}, (), True)
    assert decode_arguments('"{\\"a\\": 1}"') == Decoded(
        {"a": 1}, (Repair("json_in_string", 0, "object written as JSON inside a string"),), True
    )
    assert decode_arguments('{"a": 1}}') == Decoded(
        {"a": 1}, (Repair("trailing_text", 8, "text after the value: '}'"),), True
    )
    for text in ("[1]", "hello", "", "42"):
        assert decode_arguments(text) is None, text


def test_duplicate_keys_keep_the_first_value() -> None:
    decoded = decode_value('{"a": 1, "a": 2}')
    assert decoded.value == {"a": 1}
    assert [(r.code, r.offset) for r in decoded.repairs] == [("duplicate_key", 9)]


def _mixed(size: int) -> str:
    unit = f"{{a:{Q}x {Q}y{Q},b:'it's',c:True,d:[1,2,],e:\"[1, 2]\",f: bare words ,g:[[1]] junk,}},"
    return "[" + unit * (size // len(unit)) + "]"


_SCHEMA = {"type": "array", "items": {"type": "object", "properties": {"e": {"type": "array"}}}}


def _calls(text: str) -> int:
    profile = cProfile.Profile()
    profile.runcall(decode_value, text, _SCHEMA, verbatim_quote=Q)
    return sum(stat[1] for stat in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]


@pytest.mark.scale
def test_work_grows_linearly_with_the_text() -> None:
    small, large = _calls(_mixed(5_000)), _calls(_mixed(50_000))
    assert large <= 10 * small * 1.1, (small, large)


def _seconds(text: str) -> float:
    # CPU time of this process: wall time favours the short run, which fits in one time slice,
    # while the long one is preempted on a busy machine (two test workers on two cores).
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        decode_value(text, _SCHEMA, verbatim_quote=Q)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.scale
@pytest.mark.parametrize(
    "make",
    [
        lambda n: "[" * n,
        lambda n: "{a:" + Q + f"x{Q}y" * (n // 6) + Q + "}",
        lambda n: "[" + '"a" b,' * (n // 6),
        lambda n: "{a: " + "word " * (n // 5),
        lambda n: '"' + 'x" ' * (n // 3),
        lambda n: "[" + "\\" * n,
        lambda n: '[\\"' + 'a\\"' * (n // 3),
        _mixed,
    ],
    ids=["nesting", "inner-quotes", "junk", "unquoted", "top-quotes", "backslashes", "escaped-json", "mixed"],
)
def test_time_grows_linearly_with_the_text(make: Any) -> None:
    small, large = _seconds(make(20_000)), _seconds(make(200_000))
    assert large <= 30 * small + 0.05, (small, large)


@given(st.text(), st.sampled_from([None, Q]))
def test_a_bare_run_never_loses_text(text: str, quote: str | None) -> None:
    assume(text.strip(" \t\n\r") == text and text[:1] not in ("", "[", "{", "'", '"'))
    assume(quote is None or quote not in text)
    decoded = decode_value(text, {"type": "string"}, verbatim_quote=quote)
    assert decoded.value == text
