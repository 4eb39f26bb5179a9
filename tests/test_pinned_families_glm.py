"""GLM's argument reader (``codec/formats/glm/arguments.py``), pinned by exact results where
mutation testing found it unchecked (issue 12, "tests that bite").

- A key glued to the name (its ``<arg_key>`` lost) is split off after the longest tool name that
  begins the text and leaves a key; a call written whole is never split.
- A call cut off keeps what arrived: a key in pieces or with no value as content, a value
  already complete or a string begun as the truncated call's arguments.
- Keys and values arriving in pieces: a string value streams as it comes, a duplicate is kept
  as content whole, with its diagnostic.
- A value nested too deep stops the call; a value read leniently is reported at its first
  repair, with every repair named.
"""

from __future__ import annotations

from typing import Any

import codec
from codec.events import Event, ToolCallDelta
from support.calls import tool
from support.parsing import ids

BEGIN = "</think><tool_call>"
F = tool("f", {"city": {"type": "string"}, "days": {"type": "integer"}, "xs": {"type": "array"}, "o": {}})
STOPPED = "the call stops here, the rest is content"


def feed(
    chunks: list[str], tools: list[dict[str, Any]] | None = None, **options: Any
) -> tuple[list[Event], codec.AssistantMessage]:
    parser = codec.load("glm").stream(tools=[F] if tools is None else tools, id_factory=ids, **options)
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.close(), parser.message


def called(message: codec.AssistantMessage) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in message.tool_calls]


def diagnostics(message: codec.AssistantMessage) -> list[tuple[str, int, str]]:
    return [(d.code, d.offset, d.message) for d in message.diagnostics]


def glued(name_and_key: str, tools: list[dict[str, Any]]) -> codec.AssistantMessage:
    """A call whose first ``<arg_key>`` is missing: ``name_and_key`` runs into ``</arg_key>``."""
    text = BEGIN + name_and_key + "</arg_key><arg_value>Paris</arg_value></tool_call>"
    return feed([text], tools)[1]


def test_a_glued_key_is_split_after_the_longest_tool_name_that_begins_it() -> None:
    tools = [tool("get", {}), tool("get_weather", {})]
    assert called(glued("get_weathercity", tools)) == [("get_weather", {"city": "Paris"})]


def test_a_glued_key_is_never_empty_a_shorter_tool_name_leaves_one() -> None:
    """``get_weather`` is a whole tool name, but the lost ``<arg_key>`` had a key after it."""
    tools = [tool("get", {}), tool("get_weather", {})]
    assert called(glued("get_weather", tools)) == [("get", {"_weather": "Paris"})]


def test_only_a_tool_name_that_begins_the_text_splits_it() -> None:
    tools = [tool("f", {}), tool("other_tool", {})]
    assert called(glued("fcity_longer_key", tools)) == [("f", {"city_longer_key": "Paris"})]


def test_with_no_tool_name_beginning_it_the_glued_text_is_all_name() -> None:
    assert called(glued("fcity", [])) == [("fcity", {"": "Paris"})]


def test_a_call_written_whole_is_not_split_by_a_tool_name_that_begins_it() -> None:
    tools = [tool("get", {}), tool("get_weather", {})]
    text = BEGIN + "get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
    assert called(feed([text], tools)[1]) == [("get_weather", {"city": "Paris"})]


def cut_off(chunks: list[str]) -> tuple[str | None, list[dict[str, Any]]]:
    """The content and the truncated call's arguments, for a call the output cut off."""
    message = feed([BEGIN + "f", *chunks])[1]
    assert message.tool_calls == ()
    return message.content, [call.arguments for call in message.incomplete_calls]


def test_a_key_cut_off_midway_is_content_every_piece_of_it() -> None:
    assert cut_off(["<arg_key>c", "i"]) == ("ci", [{}])


def test_a_key_whose_value_never_began_is_content() -> None:
    assert cut_off(["<arg_key>city</arg_key>"]) == ("city", [{}])


def test_a_call_cut_off_after_a_complete_value_keeps_it_and_nothing_else() -> None:
    assert cut_off(["<arg_key>days</arg_key><arg_value>1</arg_value>"]) == (None, [{"days": 1}])


def test_a_string_value_cut_off_ends_there() -> None:
    assert cut_off(["<arg_key>city</arg_key><arg_value>Par"]) == (None, [{"city": "Par"}])


def test_a_string_value_streams_as_it_arrives_and_a_key_is_joined_from_its_pieces() -> None:
    chunks = [BEGIN + "f<arg_key>ci", "ty</arg_key><arg_value>Pa", "ris</arg_value></tool_call>"]
    events, message = feed(chunks)
    assert called(message) == [("f", {"city": "Paris"})]
    assert [e.arguments for e in events if isinstance(e, ToolCallDelta)] == ['{"city": "', "Pa", "ris", '"', "}"]


def test_a_typed_value_in_pieces_is_read_whole() -> None:
    chunks = [BEGIN + "f<arg_key>days</arg_key><arg_value>1", "2</arg_value></tool_call>"]
    assert called(feed(chunks)[1]) == [("f", {"days": 12})]


def test_a_duplicate_in_pieces_is_content_whole_and_reported_where_its_value_opens() -> None:
    first = BEGIN + "f<arg_key>city</arg_key><arg_value>P</arg_value><arg_key>city</arg_key>"
    chunks = [first + "<arg_value>Q", "R</arg_value></tool_call>"]
    message = feed(chunks)[1]
    assert called(message) == [("f", {"city": "P"})]
    assert message.content == "QR"
    assert diagnostics(message) == [("duplicate_key", len(first), "argument 'city' given twice; the first is kept")]


def test_a_value_nested_too_deep_stops_the_call_and_keeps_key_and_value_as_content() -> None:
    text = BEGIN + "f<arg_key>xs</arg_key><arg_value>[[[1]]]</arg_value></tool_call>"
    message = feed([text], limits=codec.Limits(max_depth=2))[1]
    assert message.content == "xs[[[1]]]"
    assert [call.arguments for call in message.incomplete_calls] == [{}]
    close = text.index("</arg_value>")
    assert diagnostics(message)[0] == ("too_deep", close, f"a value nested deeper than 2; {STOPPED}")


def test_a_value_read_leniently_is_reported_at_its_repair() -> None:
    text = BEGIN + "f<arg_key>xs</arg_key><arg_value>[1, 2,]</arg_value></tool_call>"
    message = feed([text])[1]
    assert called(message) == [("f", {"xs": [1, 2]})]
    at = text.index("[1, 2,]") + len("[1, 2")
    assert diagnostics(message) == [("value_repaired", at, "value read leniently (trailing_comma)")]


def test_a_value_with_several_repairs_names_each_once_at_the_first() -> None:
    text = BEGIN + "f<arg_key>o</arg_key><arg_value>{'a': 1, b: 2,}</arg_value></tool_call>"
    message = feed([text])[1]
    assert called(message) == [("f", {"o": {"a": 1, "b": 2}})]
    at = text.index("{'a'") + 1
    shown = "bare_key, single_quotes, trailing_comma"
    assert diagnostics(message) == [("value_repaired", at, f"value read leniently ({shown})")]


def test_a_quoted_number_is_typed_by_its_schema() -> None:
    text = BEGIN + 'f<arg_key>days</arg_key><arg_value>"3"</arg_value></tool_call>'
    assert called(feed([text])[1]) == [("f", {"days": 3})]
