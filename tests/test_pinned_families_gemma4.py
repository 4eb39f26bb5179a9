"""Gemma 4's argument reader (``codec/formats/gemma4/arguments.py``), pinned where mutation
testing found it unchecked (issue 12, "tests that bite").

- A string in another syntax's quotes (``"…"`` JSON, ``'…'`` Python) stands for what that syntax
  reads it as, escapes included, as a value and as a key; with escapes JSON does not know, it is
  its inner text as written.
- A duplicated argument whose value is a string opened with ``'`` or with no opening ``<|"|>``,
  or a container, is kept as content, whole, and the members after it are still read.
- A call cut off keeps what arrived: a key with no value (bare or quoted) or a duplicate as
  content, complete values and a string begun (at any depth) as the truncated call's arguments.
- Commas in nested arrays and objects, the nesting limit (at it and past it), schema typing of
  top-level values only, quoted keys in pieces, strings streamed piece by piece, and strings
  missing their opener.
"""

from __future__ import annotations

from typing import Any

import codec
from codec.events import ToolCallDelta

CALL_OPEN, CALL_CLOSE = "<|tool_call>call:f", "<tool_call|>"


def arguments(body: str) -> dict[str, Any]:
    """The arguments of the one call ``f`` whose body is ``body``, read with no tools."""
    message = codec.load("gemma4").parse(CALL_OPEN + body + CALL_CLOSE)
    [call] = message.tool_calls
    return call.arguments


def test_a_json_quoted_value_is_read_with_json_escapes() -> None:
    r"""``\/`` is an escape in JSON only: Python would keep the backslash."""
    assert arguments(r'{a:"a\/b"}') == {"a": "a/b"}


def test_a_python_quoted_value_is_read_with_python_escapes() -> None:
    r"""``\'`` and ``\x41`` are escapes in Python only: JSON refuses them."""
    assert arguments(r"{a:'it\'s',b:'\x41'}") == {"a": "it's", "b": "A"}


def test_quoted_keys_are_read_with_their_own_syntax_escapes() -> None:
    assert arguments(r"""{"k\/1":1,'k\'2':2}""") == {"k/1": 1, "k'2": 2}


def test_a_json_quoted_value_with_an_unknown_escape_is_its_inner_text_as_written() -> None:
    r"""``\q`` is no JSON escape: the text between the quotes stays, backslash and all."""
    assert arguments(r'{a:"a\qb",b:"\qx"}') == {"a": r"a\qb", "b": r"\qx"}


def test_a_skipped_duplicate_string_opened_with_a_single_quote_is_content() -> None:
    """``'x<|"|>`` is a whole string value (BAD_SQUOTE ... QUOTE): the skip ends at its close."""
    message = codec.load("gemma4").parse(CALL_OPEN + """{a:1,a:'x<|"|>,b:2}""" + CALL_CLOSE)
    assert [call.arguments for call in message.tool_calls] == [{"a": 1, "b": 2}]
    assert message.content == """'x<|"|>"""


def test_a_skipped_duplicate_string_missing_its_opening_quote_is_content() -> None:
    """``"x<|"|>`` is a string whose opener is a bare ``"`` (BAD_UNOPENED ... QUOTE)."""
    message = codec.load("gemma4").parse(CALL_OPEN + """{a:1,a:"x<|"|>,b:2}""" + CALL_CLOSE)
    assert [call.arguments for call in message.tool_calls] == [{"a": 1, "b": 2}]
    assert message.content == '"x<|"|>'


def tool(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": properties}}}


F = tool({"a": {"type": "string"}, "days": {"type": "integer"}, "o": {"type": "object"}, "xs": {"type": "array"}})


def feed(chunks: list[str], **options: Any) -> tuple[list[str], codec.AssistantMessage]:
    """The argument fragments streamed and the message, for ``chunks`` (after ``call:f``) fed
    one by one with the tool ``f`` offered."""
    parser = codec.load("gemma4").stream(tools=[F], **options)
    events = [event for chunk in [CALL_OPEN, *chunks] for event in parser.feed(chunk)] + parser.close()
    return [event.arguments for event in events if isinstance(event, ToolCallDelta)], parser.message


def cut_off(*chunks: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The content and the truncated call's arguments, for a call the output cut off."""
    message = feed(list(chunks))[1]
    assert message.tool_calls == ()
    return message.content, [call.arguments for call in message.incomplete_calls]


def test_a_key_whose_value_never_began_is_content() -> None:
    assert cut_off("{days:") == ("days", [{}])
    assert cut_off("{days") == ("days", [{}])


def test_a_quoted_key_cut_off_is_content_with_its_quote() -> None:
    assert cut_off('{<|"|>da') == ('<|"|>da', [{}])


def test_a_duplicate_cut_off_is_content() -> None:
    assert cut_off("{days:1,days:[1,") == ("[1,", [{"days": 1}])


def test_a_call_cut_off_after_a_value_keeps_it_and_nothing_else() -> None:
    assert cut_off("{days:1,") == (None, [{"days": 1}])
    assert cut_off("{days:1,xs:[2],") == (None, [{"days": 1, "xs": [2]}])


def test_a_string_cut_off_ends_there_at_any_depth() -> None:
    """Its opening quote began the value: the key is an argument, not leftover text."""
    assert cut_off('{a:<|"|>') == (None, [{"a": ""}])
    assert cut_off('{a:<|"|>Par') == (None, [{"a": "Par"}])
    assert cut_off('{xs:[<|"|>Pa') == (None, [{"xs": ["Pa"]}])


def test_a_skipped_duplicate_container_is_content_with_its_inner_colons() -> None:
    """The colon after the duplicate key is syntax; the ones inside its value are its text."""
    message = feed(["{days:1,days:{k:0},xs:[1]}", CALL_CLOSE])[1]
    assert [call.arguments for call in message.tool_calls] == [{"days": 1, "xs": [1]}]
    assert message.content == "{k:0}"
    body = "{days:1,days:2,xs:[1]}"
    message = feed([body, CALL_CLOSE])[1]
    assert [call.arguments for call in message.tool_calls] == [{"days": 1, "xs": [1]}]
    assert message.content == "2"
    duplicate = (len(CALL_OPEN) + body.index("days:2"), "argument 'days' given twice; the first is kept")
    assert [(d.offset, d.message) for d in message.diagnostics if d.code == "duplicate_key"] == [duplicate]


def test_nested_objects_and_arrays_are_read_with_their_commas() -> None:
    """A comma in an array separates items, in an object it is followed by a key."""
    fragments, message = feed(["{xs:[1,2],o:{p:[3,{q:4}],r:5},days:3}", CALL_CLOSE])
    assert [call.arguments for call in message.tool_calls] == [
        {"xs": [1, 2], "o": {"p": [3, {"q": 4}], "r": 5}, "days": 3}
    ]
    assert "".join(fragments) == message.tool_calls[0].arguments_json


def test_arguments_nested_past_the_limit_stop_the_call_at_the_refused_bracket() -> None:
    body = "{xs:[[[1]]],days:2}"
    message = feed([body, CALL_CLOSE], limits=codec.Limits(max_depth=2))[1]
    refused = len(CALL_OPEN) + body.index("[1]]]")
    detail = "arguments nested deeper than 2; the call stops here, the rest is content"
    first = message.diagnostics[0]
    assert (first.code, first.offset, first.message) == ("too_deep", refused, detail)
    assert [call.arguments for call in message.incomplete_calls] == [{"xs": [[]]}]
    assert message.content is not None and message.content.startswith("[1]]],days:2}")


def test_arguments_nested_to_the_limit_are_read() -> None:
    message = feed(["{xs:[[1]],days:2}", CALL_CLOSE], limits=codec.Limits(max_depth=2))[1]
    assert [call.arguments for call in message.tool_calls] == [{"xs": [[1]], "days": 2}]


def test_only_top_level_values_are_typed_by_the_schema() -> None:
    """``a`` is a string and ``days`` an integer at the top level; the same keys nested in
    ``o`` have no schema: their values stay as written."""
    message = feed(['{o:{a:3,days:"4"},a:5,days:"6"}', CALL_CLOSE])[1]
    assert [call.arguments for call in message.tool_calls] == [{"o": {"a": 3, "days": "4"}, "a": "5", "days": 6}]
    message = feed(['{a:"7"}', CALL_CLOSE])[1]
    assert [call.arguments for call in message.tool_calls] == [{"a": "7"}]


def test_a_quoted_key_in_pieces_is_joined_and_checked_for_duplicates() -> None:
    message = feed(['{<|"|>a', 'b<|"|>:1,<|"|>ab<|"|>:2}', CALL_CLOSE])[1]
    assert [call.arguments for call in message.tool_calls] == [{"ab": 1}]
    assert message.content == "2"
    assert [d.code for d in message.diagnostics].count("duplicate_key") == 1


def test_a_string_value_streams_piece_by_piece() -> None:
    fragments = feed(['{a:<|"|>Pa', 'ris<|"|>}', CALL_CLOSE])[0]
    assert fragments == ['{"a": "', "Pa", "ris", '"', "}"]


def test_a_string_missing_its_opener_is_its_text_but_a_json_quote_is_syntax() -> None:
    """``{a:}``: the ``}`` opens a string (BAD_UNOPENED) and is its text; ``"`` or ``'`` opens
    one and is not. A string left open before the call's close ends at the ``}`` the model wrote
    (issue 22: ``{command:<|"|>ls}`` is ``ls``)."""
    for body, value in [("{a:}", "}"), ('{a:"x}', "x"), ("{a:'x}", "x")]:
        message = feed([body, CALL_CLOSE])[1]
        assert [call.arguments for call in message.tool_calls] == [{"a": value}], body


def test_quoted_keys_after_a_comma_in_a_nested_object_are_keys() -> None:
    """After a comma in an object at any depth, a quoted string is the next key, not a value."""
    message = feed(['{o:{p:1,"q":2,<|"|>r<|"|>:3}}', CALL_CLOSE])[1]
    assert [call.arguments for call in message.tool_calls] == [{"o": {"p": 1, "q": 2, "r": 3}}]


def test_a_bare_string_is_its_text_without_trailing_space() -> None:
    """``Paris, France`` (a bare value) and ``Paris `` (a bare array item) are strings as written,
    the item's trailing space dropped."""
    message = feed(["{a:Paris, France,xs:[Paris , 3]}", CALL_CLOSE])[1]
    assert [call.arguments for call in message.tool_calls] == [{"a": "Paris, France", "xs": ["Paris", 3]}]


def test_a_top_level_string_cut_off_is_never_closed_in_the_fragments() -> None:
    """The fragments of a cut-off call stop where the output stopped: what a client joined is
    not JSON (no client can run it), and begins the kept call's arguments JSON."""
    fragments, message = feed(['{a:<|"|>Par'])
    assert fragments == ['{"a": "', "Par"]
    assert message.incomplete_calls[0].arguments_json == '{"a": "Par"}'
