"""Solar Open's argument reader (``codec/formats/solar_open/arguments.py``), pinned where
mutation testing found it unchecked (issue 12, "tests that bite").

- A duplicated argument is reported once, with its message, at the offset where the duplicate
  member's text starts, also when only the end of the output ends its value (a number).
- Text the JSON reader refuses is reported once where it starts, however chunked; at the call's
  end the whole text is read again leniently (typed by the schema, every repair named) and
  completes the JSON already streamed; a call cut off is not read again, its refused text is
  content; a string cut off ends where the output ends.
"""

from __future__ import annotations

import codec
from codec.events import ToolCallDelta

CALL = "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>f<|tool_call:args|>"
DUPLICATE_MESSAGE = "an argument given twice; the first is kept"


def duplicates(text: str) -> list[tuple[int, str]]:
    message = codec.load("solar-open").parse(text)
    return [(d.offset, d.message) for d in message.diagnostics if d.code == "duplicate_key"]


def test_a_duplicate_is_reported_where_its_member_starts() -> None:
    text = CALL + '{"a": 1, "a": 23, "b": 2}<|tool_call:end|>'
    assert duplicates(text) == [(text.index(', "a": 23'), DUPLICATE_MESSAGE)]


def test_a_duplicate_number_the_output_cut_off_is_reported_where_its_member_starts() -> None:
    """``23`` ends only at the end of output: the reader reports it from there, back its length."""
    text = CALL + '{"a": 1, "a": 23'
    message = codec.load("solar-open").parse(text)
    assert message.content == ', "a": 23'
    assert duplicates(text) == [(text.index(', "a": 23'), DUPLICATE_MESSAGE)]


F = {
    "type": "function",
    "function": {
        "name": "f",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
    },
}
END = "<|tool_call:end|><|calls|>"
NOT_JSON = "arguments text that is not JSON"


def feed(chunks: list[str]) -> tuple[list[str], codec.AssistantMessage]:
    """The argument fragments streamed, and the message, for ``chunks`` fed one by one."""
    parser = codec.load("solar-open").stream(tools=[F])
    events = [event for chunk in chunks for event in parser.feed(chunk)] + parser.close()
    return [event.arguments for event in events if isinstance(event, ToolCallDelta)], parser.message


def diagnostics(message: codec.AssistantMessage) -> list[tuple[str, int, str]]:
    return [(d.code, d.offset, d.message) for d in message.diagnostics if d.code != "missing_marker"]


def test_python_quoted_arguments_are_read_again_leniently_in_any_chunking() -> None:
    """The JSON reader refuses ``'`` at once; at the call's end the whole text, however it
    arrived, is read again: its object is the arguments, sent as one fragment."""
    text = CALL + "{'city': 'Paris'}" + END
    for chunks in ([text], [CALL + "{'city': ", "'Paris'}" + END]):
        fragments, message = feed(chunks)
        assert [call.arguments for call in message.tool_calls] == [{"city": "Paris"}]
        assert fragments == ['{"city": "Paris"}']
        assert message.content is None
        assert diagnostics(message) == [
            ("invalid_arguments", text.index("'city'"), NOT_JSON),
            ("arguments_repaired", text.index(END), "arguments read leniently (single_quotes)"),
        ]


def test_a_lenient_reading_completes_the_json_already_streamed_in_pieces() -> None:
    """``{"city": "Pa`` + ``ris", "days": 3`` went out before the trailing comma was refused:
    the second reading sends only what completes them."""
    text = CALL + '{"city": "Paris", "days": 3,}' + END
    fragments, message = feed([CALL + '{"city": "Pa', 'ris", "days": 3,}' + END])
    assert [call.arguments for call in message.tool_calls] == [{"city": "Paris", "days": 3}]
    assert fragments == ['{"city": "Pa', 'ris", "days": 3', "}"]
    assert diagnostics(message) == [
        ("invalid_arguments", text.index(",}"), NOT_JSON),
        ("arguments_repaired", text.index(END), "arguments read leniently (trailing_comma)"),
    ]


def test_a_lenient_reading_is_typed_by_the_tool_schema_and_names_every_repair() -> None:
    text = CALL + "{'days': '3'}" + END
    message = feed([text])[1]
    assert [call.arguments for call in message.tool_calls] == [{"days": 3}]
    assert diagnostics(message)[-1] == (
        "arguments_repaired",
        text.index(END),
        "arguments read leniently (quoted_scalar, single_quotes)",
    )


def test_refused_text_in_several_chunks_is_content_with_one_diagnostic_where_it_starts() -> None:
    text = CALL + '{"city": "Paris", junk}' + END
    message = feed([CALL + '{"city": "Paris", ju', "nk}" + END])[1]
    assert [call.arguments for call in message.tool_calls] == [{"city": "Paris"}]
    assert message.content == ", junk}"
    assert diagnostics(message) == [
        ("invalid_arguments", text.index(", junk"), NOT_JSON),
        ("incomplete_arguments", text.index(END), "the arguments JSON was cut short"),
    ]


def test_refused_text_of_a_call_cut_off_is_content_and_not_read_again() -> None:
    text = CALL + '{"city": "Paris", ju'
    message = feed([text, "nk"])[1]
    assert message.tool_calls == ()
    assert [call.arguments for call in message.incomplete_calls] == [{"city": "Paris"}]
    assert message.content == ", junk"
    assert [code for code, _, _ in diagnostics(message)] == ["invalid_arguments", "truncated", "incomplete_arguments"]


def test_a_string_cut_off_ends_where_the_output_ends() -> None:
    text = CALL + '{"city": "Par'
    fragments, message = feed([text])
    assert [call.arguments for call in message.incomplete_calls] == [{"city": "Par"}]
    assert fragments == ['{"city": "Par']  # never closed: not JSON a client could run
    assert diagnostics(message) == [
        ("truncated", len(text), "the output ended early; kept what arrived"),
        ("incomplete_arguments", len(text), "the arguments JSON was cut short"),
    ]


def test_arguments_nested_past_the_limit_stop_the_call_where_the_refused_text_starts() -> None:
    """The limit is the caller's (``Limits.max_depth``), not the JSON reader's default."""
    text = CALL + '{"city": [[[1]]]}' + END
    message = codec.load("solar-open").parse(text, limits=codec.Limits(max_depth=2))
    assert message.tool_calls == ()
    assert [call.arguments for call in message.incomplete_calls] == [{"city": [[]]}]
    assert message.content == "[1]]]}"
    detail = "arguments nested deeper than 2; the call stops here, the rest is content"
    assert diagnostics(message)[0] == ("too_deep", text.index("[1]]]"), detail)


def test_a_key_cut_off_before_its_value_is_content() -> None:
    """The JSON reader holds ``, "da`` back (no fragment can say it yet); the end of output
    makes it content, never lost."""
    message = feed([CALL + '{"city": "Paris", "da'])[1]
    assert [call.arguments for call in message.incomplete_calls] == [{"city": "Paris"}]
    assert message.content == ', "da'


def test_a_lenient_reading_nested_past_the_limit_is_not_taken() -> None:
    """The second reading keeps the caller's depth limit: past it the text stays content."""
    text = CALL + "{'a': [[[1]]]}" + END
    message = codec.load("solar-open").parse(text, limits=codec.Limits(max_depth=2))
    assert [call.arguments for call in message.tool_calls] == [{}]
    assert message.content == "'a': [[[1]]]}"


def test_arguments_that_are_not_an_object_are_content() -> None:
    message = feed([CALL + "[1]" + END])[1]
    assert [call.arguments for call in message.tool_calls] == [{}]
    assert message.content == "[1]"


def test_a_lenient_reading_that_contradicts_what_was_streamed_leaves_the_rest_as_content() -> None:
    # `"3"` is streamed as the string it is; read again, the schema would make it the integer 3,
    # whose JSON does not begin with what was sent: the call keeps what was streamed and the
    # refused text is content, never dropped.
    tools = [
        {
            "type": "function",
            "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        }
    ]
    text = CALL + '{"n": "3", \'b\': 1}<|tool_call:end|><|calls|>'
    message = codec.load("solar-open").parse(text, tools=tools)
    assert message.tool_calls[0].arguments == {"n": "3"}
    assert message.content == ", 'b': 1}"
    assert "arguments_repaired" not in {d.code for d in message.diagnostics}
