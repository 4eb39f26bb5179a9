"""The tolerant argument decoder (``codec.arguments.tolerant``) pinned where no test looked
(issue 12, "tests that bite"): each test states one repair or reading exactly — value, repair
codes, offsets and messages — so a changed handler, offset or message fails it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codec._nesting import deeper_than
from codec.arguments.tolerant import Decoded, Repair, decode_arguments, decode_value
from codec.arguments.tolerant_parse import machine
from codec.engine.grammar import compiled
from codec.registry import FORMATS

Q = compiled(FORMATS["gemma4"].grammar).display("QUOTE")  # Gemma 4's string quote, from its grammar


def test_the_machine_alone_nests_as_deep_as_decode_value() -> None:
    """``machine``'s default ``max_depth`` is ``decode_value``'s: 64 levels, the rest text."""
    value, repairs, complete = machine("[" * 70)
    assert not deeper_than(value, 64) and deeper_than(value, 63)
    assert ("too_deep", 64) in [(repair.code, repair.offset) for repair in repairs]
    assert complete is False


def test_the_machine_alone_types_by_the_schema_it_is_given() -> None:
    assert machine("123", {"type": "string"}) == (
        "123",
        (Repair("unquoted_string", 0, "'123' read as a string"),),
        True,
    )


def test_the_machine_alone_unwraps_json_inside_a_string() -> None:
    assert machine('"[1]"', {"type": "array"}) == (
        [1],
        (Repair("json_in_string", 0, "array written as JSON inside a string"),),
        True,
    )


def test_the_machine_alone_reads_the_verbatim_quote_it_is_given() -> None:
    assert machine(f"{Q}x{Q}", verbatim=Q) == ("x", (), True)


def test_a_member_that_begins_with_a_colon_is_left_out() -> None:
    assert decode_value('{:1, "b": 2}') == Decoded(
        {"b": 2}, (Repair("missing_key", 1, "member without a key left out: ':1'"),), True
    )


def test_a_keyless_member_runs_to_the_comma_outside_its_own_brackets() -> None:
    """The left-out member is ``:[1, 2] x``: its own brackets do not end it."""
    decoded = decode_value('[{:[1, 2] x, "a": 2}]')
    assert decoded.value == [{"a": 2}]
    assert decoded.repairs == (Repair("missing_key", 2, "member without a key left out: ':[1, 2] x'"),)
    assert decoded.complete is True


def test_a_keyless_member_cut_off_leaves_the_object_open() -> None:
    assert decode_value("{: x") == Decoded(
        {},
        (
            Repair("missing_key", 1, "member without a key left out: ': x'"),
            Repair("unclosed_container", 0, "the text ended inside this object"),
        ),
        False,
    )


def test_a_verbatim_quote_right_after_a_key_is_a_missing_colon() -> None:
    """With ``:`` as the verbatim quote, ``{a:x:}`` is the key ``a`` and then the string ``x``
    quoted by it: no colon stands between them."""
    assert decode_value("{a:x:}", verbatim_quote=":") == Decoded(
        {"a": "x"},
        (Repair("bare_key", 1, "key 'a' without quotes"), Repair("missing_colon", 2, "no colon after key 'a'")),
        True,
    )
    decoded = decode_value("[{a:x:}]", verbatim_quote=":")  # the message names the innermost key
    assert decoded.value == [{"a": "x"}]
    assert Repair("missing_colon", 3, "no colon after key 'a'") in decoded.repairs


@pytest.mark.parametrize("quote", [",", "]", "}", ",,", "}x"])
def test_a_verbatim_quote_where_a_comma_or_closer_stands_is_refused(quote: str) -> None:
    """After a value such a token stands where the structure does: decoding ``{a: 1, b: 2}``
    with ``,`` as the quote never moved past the comma (bug fixed with this test)."""
    with pytest.raises(ValueError, match=f"cannot begin with {quote[0]!r}"):
        decode_value("{a: 1, b: 2}", verbatim_quote=quote)


@pytest.mark.parametrize("quote", ["X", "XY", '<|"|>', "x"])
def test_a_verbatim_quote_beginning_with_anything_else_quotes(quote: str) -> None:
    assert decode_value(f"{{a: {quote}v, w{quote}}}", verbatim_quote=quote).value == {"a": "v, w"}


QUOTE_TOKENS = st.text("[]{},:'\" x<|", min_size=1, max_size=3)
PIECES = st.lists(st.sampled_from(["{", "}", "[", "]", ",", ":", '"', "'", " ", "1", "a"]))


@given(QUOTE_TOKENS, PIECES, st.data())
def test_any_verbatim_quote_is_read_or_refused(quote: str, pieces: list[str], data: st.DataObject) -> None:
    """Whatever the verbatim quote, decoding ends: a value, or the refusal of a quote that
    begins where a comma or closing bracket stands."""
    at = data.draw(st.integers(0, len(pieces)), label="quote at")
    text = "".join([*pieces[:at], quote, *pieces[at:]])
    if quote[0] in ",]}":
        with pytest.raises(ValueError):
            decode_value(text, verbatim_quote=quote)
    else:
        assert isinstance(decode_value(text, verbatim_quote=quote), Decoded)


def test_text_after_a_top_level_array_where_a_string_is_wanted_is_all_one_string() -> None:
    """``[1] x`` for a string schema: the array is read as its text, and the trailing text joins
    it (from the first non-space character, without the trailing white space)."""
    assert decode_value(" [1] x\x0b \n", {"type": "string"}) == Decoded(
        "[1] x\x0b",
        (
            Repair("unquoted_string", 1, "'[1]' read as a string"),
            Repair("unquoted_string", 1, "'[1] x\\x0b' read as a string"),
        ),
        True,
    )


def test_text_after_a_top_level_array_where_a_scalar_is_wanted_is_kept_as_written() -> None:
    assert decode_value("[1] x", {"type": "integer"}) == Decoded(
        "[1] x",
        (
            Repair("untyped", 0, "array where the schema wants integer"),
            Repair("untyped", 0, "'[1] x' is not integer: kept as written"),
        ),
        True,
    )


def test_text_after_a_top_level_object_the_schema_admits_is_trailing_text() -> None:
    assert decode_value('{"a": 1} x', {"type": "object"}) == Decoded(
        {"a": 1}, (Repair("trailing_text", 9, "text after the value: 'x'"),), True
    )


def test_text_after_a_nested_array_joins_it_as_one_string() -> None:
    """``[2] y`` in an array is one unquoted string, in the element's place: up to the comma,
    without JSON's white space at its end (other spaces are text)."""
    assert decode_value("[0, 1, [2] y\xa0 , 3]") == Decoded(
        [0, 1, "[2] y\xa0", 3], (Repair("unquoted_string", 7, "'[2] y\\xa0' read as a string"),), True
    )


def test_text_after_a_member_array_joins_it_as_one_string() -> None:
    assert decode_value('{"a": [1] x , "b": 2}') == Decoded(
        {"a": "[1] x", "b": 2}, (Repair("unquoted_string", 6, "'[1] x' read as a string"),), True
    )


def test_an_array_and_its_trailing_text_are_typed_by_the_member_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert decode_value('{"n": [1] 2}', schema) == Decoded(
        {"n": "[1] 2"},
        (
            Repair("untyped", 6, "array where the schema wants integer"),
            Repair("untyped", 6, "'[1] 2' is not integer: kept as written"),
        ),
        True,
    )


def test_text_after_a_duplicate_value_leaves_the_first_value_alone() -> None:
    assert decode_value('{"a": 1, "a": [2] x, "b": 3}') == Decoded(
        {"a": 1, "b": 3}, (Repair("duplicate_key", 9, "key 'a' given again: the first value kept"),), True
    )


def test_a_bare_key_ends_before_json_white_space_only() -> None:
    """A bare key keeps a trailing vertical tab (not JSON white space) and drops the spaces; a
    duplicate bare key is reported where it begins."""
    assert decode_value("{a\x0b : 1, a : 2}") == Decoded(
        {"a\x0b": 1, "a": 2},
        (Repair("bare_key", 1, "key 'a\\x0b' without quotes"), Repair("bare_key", 9, "key 'a' without quotes")),
        True,
    )
    assert decode_value("{a: 1, a: 2}") == Decoded(
        {"a": 1},
        (
            Repair("bare_key", 1, "key 'a' without quotes"),
            Repair("bare_key", 7, "key 'a' without quotes"),
            Repair("duplicate_key", 7, "key 'a' given again: the first value kept"),
        ),
        True,
    )


INTEGER_N = {"properties": {"n": {"type": "integer"}}}
ESCAPED_OBJECT = '"{\\"a\\": 1}"'  # "{\"a\": 1}": an object written as a JSON string


def test_decode_arguments_types_members_by_a_schema_without_a_type() -> None:
    """A parameters schema without ``type`` is still an object's: its properties type the members."""
    assert decode_arguments('{"n": "1"}', INTEGER_N) == Decoded(
        {"n": 1}, (Repair("quoted_scalar", 6, "'1' in quotes read as integer"),), True
    )


def test_decode_arguments_keeps_the_properties_of_a_schema_whose_type_it_cannot_read() -> None:
    """``type: "any"`` says nothing the decoder knows: the arguments are an object all the same,
    and the schema's properties still type its members."""
    assert decode_arguments('{"n": "1"}', {"type": "any", **INTEGER_N}) == Decoded(
        {"n": 1}, (Repair("quoted_scalar", 6, "'1' in quotes read as integer"),), True
    )


def test_decode_arguments_unwraps_an_object_string_for_an_untyped_schema() -> None:
    assert decode_arguments(ESCAPED_OBJECT, {}) == Decoded(
        {"a": 1}, (Repair("json_in_string", 0, "object written as JSON inside a string"),), True
    )


def test_decode_arguments_keeps_a_string_a_string_where_the_schema_admits_one() -> None:
    """A schema with types of its own is taken as written: one that admits strings reads a JSON
    string as the string, which is no arguments object."""
    assert decode_arguments(ESCAPED_OBJECT, {"type": ["object", "string"]}) is None


def test_decode_arguments_nests_as_deep_as_decode_value() -> None:
    decoded = decode_arguments('{"a":' + "[" * 70)
    assert decoded is not None
    assert not deeper_than(decoded.value, 64) and deeper_than(decoded.value, 63)


def test_decode_arguments_honours_max_depth() -> None:
    assert decode_arguments('{"a": [[1]]}', max_depth=2) == Decoded(
        {"a": ["[1]"]}, (Repair("too_deep", 7, "nested deeper than 2: kept as text"),), True
    )


def test_a_raw_control_character_in_a_json_string_is_kept_and_reported_once() -> None:
    """The first raw control character is reported where it stands (``\\x01`` at 8); the text
    keeps every one of them."""
    assert decode_value('{"k": "x\x01\ny"}') == Decoded(
        {"k": "x\x01\ny"}, (Repair("control_character", 8, "raw control character in a string"),), True
    )


def test_a_raw_control_character_in_single_quotes_is_python_text() -> None:
    assert decode_value("['a\tb']") == Decoded(["a\tb"], (Repair("single_quotes", 1, "string in single quotes"),), True)


def test_a_message_quotes_at_most_forty_characters_of_the_text() -> None:
    key = "k" * 40
    assert decode_value(f"{{{key}: 1}}").repairs == (Repair("bare_key", 1, f"key '{key}' without quotes"),)
    assert decode_value(f"{{{key}x: 1}}").repairs == (Repair("bare_key", 1, f"key '{key}…' without quotes"),)


def test_escapes_json_python_and_unknown() -> None:
    """JSON's escapes are silent; Python's (``\\x41``, ``\\U0010FFFF``, the last code point)
    are repairs; past the last code point or unknown, the escape stays as written."""
    text = r'["\U0010FFFF", "\U00110000", "\x41", "\q", "\ud83d\ude00", "\u00e9", 1,]'
    assert decode_value(text) == Decoded(
        ["\U0010ffff", "\\U00110000", "A", "\\q", "😀", "é", 1],
        (
            Repair("python_literal", 2, "Python escape \\U0010FFFF"),
            Repair("invalid_escape", 16, "unknown escape '\\\\U00110000' kept"),
            Repair("python_literal", 30, "Python escape \\x41"),
            Repair("invalid_escape", 38, "unknown escape '\\\\q' kept"),
            Repair("trailing_comma", 70, "comma before ]"),
        ),
        True,
    )


def test_python_escapes_in_single_quotes_are_no_repair() -> None:
    assert decode_value(r"['\x41\U0001F600\'', 1,]") == Decoded(
        ["A😀'", 1],
        (Repair("single_quotes", 1, "string in single quotes"), Repair("trailing_comma", 22, "comma before ]")),
        True,
    )


def test_a_lone_backslash_at_the_cut_is_kept() -> None:
    assert decode_value('["abc\\') == Decoded(
        ["abc\\"],
        (
            Repair("invalid_escape", 5, "unknown escape '\\\\' kept"),
            Repair("unclosed_string", 1, "the text ended inside this string"),
            Repair("unclosed_container", 0, "the text ended inside this array"),
        ),
        False,
    )


def test_numbers_json_cannot_hold_stay_text() -> None:
    digits = "9" * 5000  # more digits than Python's int() reads
    decoded = decode_value(f"[1e400, 1.5, -0, 1E+2, 12, 01, {digits}]")
    assert decoded.value == ["1e400", 1.5, 0, 100.0, 12, "01", digits]
    assert [(repair.code, repair.offset) for repair in decoded.repairs] == [
        ("unquoted_string", 1),
        ("unquoted_string", 27),
        ("unquoted_string", 31),
    ]


def test_quotes_inside_a_json_string_are_text_where_the_structure_does_not_follow() -> None:
    assert decode_value('["say "hi" now", 1,]') == Decoded(
        ['say "hi" now', 1],
        (
            Repair("unescaped_quote", 6, '" not followed by the structure: kept as text'),
            Repair("unescaped_quote", 9, '" not followed by the structure: kept as text'),
            Repair("trailing_comma", 18, "comma before ]"),
        ),
        True,
    )


def test_nothing_is_escaped_in_a_cut_off_verbatim_string() -> None:
    assert decode_value(f"{{a:{Q}x\\n", verbatim_quote=Q) == Decoded(
        {"a": "x\\n"},
        (
            Repair("bare_key", 1, "key 'a' without quotes"),
            Repair("unclosed_string", 3, "the text ended inside this string"),
            Repair("unclosed_container", 0, "the text ended inside this object"),
        ),
        False,
    )


def test_an_empty_verbatim_quote_is_refused_with_its_reason() -> None:
    with pytest.raises(ValueError, match=r"^a verbatim quote cannot be empty$"):
        decode_value("{}", verbatim_quote="")


def test_a_key_without_a_value_before_the_closing_brace_is_left_out() -> None:
    assert decode_value('{"a": }') == Decoded({}, (Repair("missing_value", 6, "key 'a' has no value: left out"),), True)


def test_closing_after_a_key_a_trailing_comma_and_a_mismatched_bracket() -> None:
    """``{"a"}`` closes after a key (no colon, no value); ``{"b": 1,]`` has a trailing comma
    and a ``]`` closing the object."""
    assert decode_value('[{"a"}, {"b": 1,]]') == Decoded(
        [{}, {"b": 1}],
        (
            Repair("missing_value", 5, "key 'a' has no value: left out"),
            Repair("trailing_comma", 15, "comma before ]"),
            Repair("mismatched_bracket", 16, "] closes the object opened at 8"),
        ),
        True,
    )


def test_an_empty_array_element_is_left_out() -> None:
    assert decode_value("[1, , 2]") == Decoded(
        [1, 2], (Repair("missing_value", 4, "nothing before this comma in the array"),), True
    )


def test_an_escaped_single_quote_in_a_json_string_is_python() -> None:
    """JSON has no ``\\'``: the escape is Python's, reported where the backslash stands."""
    assert decode_value(r'["it\'s", 1,]') == Decoded(
        ["it's", 1],
        (Repair("python_literal", 4, "Python escape \\'"), Repair("trailing_comma", 11, "comma before ]")),
        True,
    )


UNESCAPED = Repair("json_in_string", 0, "JSON escaped as a string's content: read unescaped")


def test_json_escaped_once_more_is_read_unescaped() -> None:
    """``[\\"a\\"]``, ``[ \\"a\\"]``, ``{\\"a\\": 1}``: the first quote is escaped and stands
    where a value or key begins (after ``[`` or ``{``, white space between)."""
    for text in ('[\\"a\\"]', '[ \\"a\\"]'):
        assert decode_value(text) == Decoded(["a"], (UNESCAPED,), True), text
    assert decode_value('{\\"a\\": 1}') == Decoded({"a": 1}, (UNESCAPED,), True)


def test_an_escaped_object_is_unwrapped_only_where_the_schema_admits_a_structure() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    assert decode_value('[\\"1\\"]', schema) == Decoded(
        [1], (UNESCAPED, Repair("quoted_scalar", 0, "'1' in quotes read as integer")), True
    )
    assert decode_value('{\\"a\\": 1}', {"type": "integer"}) == Decoded(
        {'\\"a\\"': 1},
        (
            Repair("bare_key", 1, "key '\\\\\"a\\\\\"' without quotes"),
            Repair("untyped", 0, "object where the schema wants integer"),
        ),
        True,
    )


def test_escaped_json_is_unwrapped_once_not_twice() -> None:
    """Inside the unescaped text a string holding JSON stays a string, even where the schema
    wants an array: JSON in a string is unwrapped once."""
    schema = {"type": "array", "items": {"type": "array"}}
    assert decode_value('[\\"[1]\\"]', schema) == Decoded(
        ["[1]"], (UNESCAPED, Repair("untyped", 0, "string '[1]' where the schema wants array")), True
    )


def test_escapes_of_escaped_json_are_reported_where_they_stand() -> None:
    """The outer unescaping reports ``\\q`` and ``\\x41`` at their offsets; the unescaped text
    is read again (its ``\\q`` reported at the string's offset, 0)."""
    assert decode_value('[\\"a\\q\\x41\\"]') == Decoded(
        ["a\\qA"],
        (
            UNESCAPED,
            Repair("invalid_escape", 4, "unknown escape '\\\\q' kept"),
            Repair("python_literal", 6, "Python escape \\x41"),
            Repair("invalid_escape", 0, "unknown escape '\\\\q' kept"),
        ),
        True,
    )


def test_escaped_json_keeps_the_verbatim_quote() -> None:
    assert decode_value(f'[\\"a\\", {Q}b{Q}]', verbatim_quote=Q) == Decoded(["a", "b"], (UNESCAPED,), True)


def test_cut_off_escaped_json_is_read_as_written() -> None:
    assert decode_value('[\\"a') == Decoded(
        ['\\"a'],
        (
            Repair("unquoted_string", 1, "'\\\\\"a' read as a string"),
            Repair("unclosed_container", 0, "the text ended inside this array"),
        ),
        False,
    )


def test_three_backslashes_before_a_quote_escape_it() -> None:
    """An odd run of backslashes escapes the quote (``\\\\\\"``): the text is escaped JSON."""
    assert decode_value('[\\\\\\"a\\\\\\"]') == Decoded(
        ['\\"a\\"'], (UNESCAPED, Repair("unquoted_string", 0, "'\\\\\"a\\\\\"' read as a string")), True
    )


def test_an_escaped_quote_inside_a_bare_word_is_no_escaped_json() -> None:
    """``X\\"a\\"``: the escaped quote follows a word (white space between or not), not ``[``,
    ``{``, ``,`` or ``:``."""
    assert decode_value('[X\\"a\\"]') == Decoded(
        ['X\\"a\\"'], (Repair("unquoted_string", 1, "'X\\\\\"a\\\\\"' read as a string"),), True
    )
    assert decode_value('[X \\"a\\"]') == Decoded(
        ['X \\"a\\"'], (Repair("unquoted_string", 1, "'X \\\\\"a\\\\\"' read as a string"),), True
    )


def test_a_scalar_of_the_wrong_type_keeps_its_json_value() -> None:
    """``true`` where the schema wants an integer is kept as JSON's ``true``, not as the text."""
    assert decode_value("[true, 1,]", {"type": "array", "items": {"type": "integer"}}) == Decoded(
        [True, 1],
        (
            Repair("untyped", 1, "'true' is not integer: kept as written"),
            Repair("trailing_comma", 8, "comma before ]"),
        ),
        True,
    )


def test_an_array_where_a_string_is_wanted_is_its_text_up_to_its_closing_bracket() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string"}}}
    assert decode_value('{"s": [1], "n": 2,}', schema) == Decoded(
        {"s": "[1]", "n": 2},
        (Repair("unquoted_string", 6, "'[1]' read as a string"), Repair("trailing_comma", 17, "comma before }")),
        True,
    )


def test_a_key_without_a_value_before_a_comma_is_left_out() -> None:
    """``"a": ,`` (after the colon) and ``"b",`` (no colon) each leave their key out."""
    assert decode_value('{"a": , "b", "c": 1}') == Decoded(
        {"c": 1},
        (
            Repair("missing_value", 6, "key 'a' has no value: left out"),
            Repair("missing_value", 11, "key 'b' has no value: left out"),
        ),
        True,
    )


INTEGERS = {"type": "array", "items": {"type": "integer"}}
ARRAYS = {"type": "array", "items": {"type": "array"}}


def untyped_string(at: int, text: str, wanted: str) -> Repair:
    return Repair("untyped", at, f"string {text!r} where the schema wants {wanted}")


@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ("", {"type": "integer"}, Decoded("", (Repair("untyped", 0, "'' is not integer: kept as written"),), True)),
        ("", None, Decoded("", (Repair("unquoted_string", 0, "'' read as a string"),), True)),
        ('["[1]"]', INTEGERS, Decoded(["[1]"], (untyped_string(1, "[1]", "integer"),), True)),
        ('["[1"]', ARRAYS, Decoded(["[1"], (untyped_string(1, "[1", "array"),), True)),
        (
            '["1\x0b"]',
            INTEGERS,
            Decoded(
                ["1\x0b"],
                (
                    Repair("control_character", 3, "raw control character in a string"),
                    untyped_string(1, "1\x0b", "integer"),
                ),
                True,
            ),
        ),
        (
            '["42"]',
            {"type": "array", "items": {"type": "boolean"}},
            Decoded(["42"], (untyped_string(1, "42", "boolean"),), True),
        ),
        (
            '[" [1]", "\x0b[1]"]',
            ARRAYS,
            Decoded(
                [[1], "\x0b[1]"],
                (
                    Repair("json_in_string", 1, "array written as JSON inside a string"),
                    Repair("control_character", 10, "raw control character in a string"),
                    untyped_string(9, "\x0b[1]", "array"),
                ),
                True,
            ),
        ),
        (
            '["[\\"[1]\\"]"]',
            {"type": "array", "items": ARRAYS},
            Decoded(
                [["[1]"]],
                (
                    Repair("json_in_string", 1, "array written as JSON inside a string"),
                    untyped_string(1, "[1]", "array"),
                ),
                True,
            ),
        ),
    ],
)
def test_a_value_is_typed_by_its_schema_or_kept_as_written(text: str, schema: Any, expected: Decoded) -> None:
    """A quoted value unwraps JSON only where the schema wants a structure, only JSON that is
    complete, only once, and only after JSON's white space; a number in quotes with a vertical
    tab or of another type stays the string; empty text is the empty string."""
    assert decode_value(text, schema) == expected


def test_json_in_a_string_keeps_the_verbatim_quote() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array"}}}
    decoded = decode_value(f'{{a: "[{Q}x{Q}]"}}', schema, verbatim_quote=Q)
    assert decoded.value == {"a": ["x"]}
    assert Repair("json_in_string", 4, "array written as JSON inside a string") in decoded.repairs


def test_a_cut_off_document_reports_the_key_left_without_a_value() -> None:
    assert decode_value('[{"a":') == Decoded(
        [{}],
        (
            Repair("missing_value", 6, "key 'a' has no value: left out"),
            Repair("unclosed_container", 1, "the text ended inside this object"),
            Repair("unclosed_container", 0, "the text ended inside this array"),
        ),
        False,
    )
    assert decode_value("[1,") == Decoded(
        [1], (Repair("unclosed_container", 0, "the text ended inside this array"),), False
    )


def test_too_deep_text_and_cut_off_bracket_text_keep_other_spaces() -> None:
    """Text kept for a container (too deep, or a cut-off array where a string is wanted) ends
    before JSON's white space only: a vertical tab stays."""
    assert decode_value("[[[1]\x0b , 2]]", max_depth=2) == Decoded(
        [["[1]\x0b", 2]], (Repair("too_deep", 2, "nested deeper than 2: kept as text"),), True
    )
    decoded = decode_value('{"s": [1 \x0b ', {"type": "object", "properties": {"s": {"type": "string"}}})
    assert decoded.value == {"s": "[1 \x0b"}
    assert Repair("unquoted_string", 6, "'[1 \\x0b' read as a string") in decoded.repairs


def test_text_that_only_begins_with_a_quote_is_one_value_typed_by_the_schema() -> None:
    """``"Hi" she`` is all text, from its quote to the end less JSON's white space, and is
    typed (here: untyped) by the schema."""
    assert decode_value(' "Hi" she\x0b ', {"type": "integer"}) == Decoded(
        '"Hi" she\x0b', (Repair("untyped", 1, "'\"Hi\" she\\x0b' is not integer: kept as written"),), True
    )


def test_an_unquoted_element_keeps_a_trailing_vertical_tab() -> None:
    assert decode_value("[a \x0b , 2]") == Decoded(
        ["a \x0b", 2], (Repair("unquoted_string", 1, "'a \\x0b' read as a string"),), True
    )


def test_top_level_text_with_commas_is_one_unquoted_string() -> None:
    """GLM writes a string raw: ``Hello, world`` is one value and one repair, not ``Hello``
    and trailing text."""
    assert decode_value("Hello, world") == Decoded(
        "Hello, world", (Repair("unquoted_string", 0, "'Hello, world' read as a string"),), True
    )


def test_a_quote_followed_by_a_letter_does_not_close_a_key_or_a_value() -> None:
    """Only white space and then the structure close a string: ``"a"X`` runs on to the end."""
    decoded = decode_value('{"a"X: 1}')
    assert (decoded.value, decoded.complete) == ({}, False)
    assert Repair("missing_value", 9, "key 'a\"X: 1}' has no value: left out") in decoded.repairs
    assert decode_value('["a"X, 1]') == Decoded(
        ['a"X, 1]'],
        (
            Repair("unescaped_quote", 3, '" not followed by the structure: kept as text'),
            Repair("unclosed_string", 1, "the text ended inside this string"),
            Repair("unclosed_container", 0, "the text ended inside this array"),
        ),
        False,
    )


@pytest.mark.parametrize(
    ("text", "schema"),
    [
        ('{"n": "1"}', {"type": "string", "properties": {"n": {"type": "integer"}}}),
        ('["1"]', {"type": "string", "items": {"type": "integer"}}),
    ],
)
def test_brackets_read_as_a_string_do_not_type_what_they_hold(text: str, schema: Any) -> None:
    """The schema wants a string: the brackets are text, and the ``properties`` or ``items``
    the schema also names do not type (or report) the values inside."""
    assert decode_value(text, schema) == Decoded(
        text, (Repair("unquoted_string", 0, f"{text!r} read as a string"),), True
    )


@pytest.mark.parametrize("text", ["Xenon, XX ]} X", "a, b]", "}x{"])
def test_a_bare_word_at_the_top_level_runs_to_the_end(text: str) -> None:
    # Nothing stops an unquoted string that is the whole value: no comma or bracket of an
    # enclosing container can follow it.
    decoded = decode_value(text)
    assert decoded.value == text
    assert [(r.code, r.offset) for r in decoded.repairs] == [("unquoted_string", 0)]


def test_a_top_level_string_closes_only_at_the_quote_that_ends_the_text() -> None:
    # A quote inside, followed by anything but the end, is text (`inner_quote`), whatever follows it.
    decoded = decode_value('"a"X b"')
    assert decoded.value == 'a"X b'
