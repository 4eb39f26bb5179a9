"""The message builder (``codec.engine.builder``) pinned where the mutation run found it loose:
a call stopped at a limit, and white space the grammar skips outside a call; and the fast
constructor it builds its messages with."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from pydantic import ValidationError

import codec
from codec.events import Event, ToolCallDelta, ToolCallEnd, ToolCallStart
from codec.models import AssistantMessage, Diagnostic, ToolCall, built

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}},
        },
    }
]
STRING_CALLS = {
    "glm": "<tool_call>f<arg_key>a</arg_key><arg_value>hello world</arg_value></tool_call>",
    "solar-open": (
        "<|tool_calls|><|tool_call:begin|>c1<|tool_call:name|>f<|tool_call:args|>"
        '{"a": "hello world"}<|tool_call:end|><|calls|>'
    ),
    "gemma4": '<|tool_call>call:f{a:<|"|>hello world<|"|>}<tool_call|>',
}


def streamed(fmt: str, text: str, limits: codec.Limits) -> tuple[list[Event], codec.AssistantMessage]:
    """Events and message of ``text`` fed one character at a time."""
    parser = codec.load(fmt).stream(tools=TOOLS, limits=limits, id_factory=lambda index: f"call{index}")
    events = [event for char in text for event in parser.feed(char)]
    events += parser.close()
    return events, parser.message


def call_events(events: list[Event]) -> list[Any]:
    return [event for event in events if isinstance(event, ToolCallDelta | ToolCallEnd)]


@pytest.mark.parametrize("fmt", sorted(STRING_CALLS))
@pytest.mark.parametrize("limit", [8, 12, 15])
def test_a_call_stopped_at_the_size_limit_ends_as_if_the_output_stopped_there(fmt: str, limit: int) -> None:
    """The stopped call is finished as a cut-off one: its reader closes the open string, then the
    object, in the same deltas as when the output ends at that character."""
    text = STRING_CALLS[fmt]
    events, message = streamed(fmt, text, codec.Limits(max_argument_chars=limit))
    [stop] = [d for d in message.diagnostics if d.code == "too_large"]
    cut_events, cut_message = streamed(fmt, text[: stop.offset + 1], codec.Limits())
    assert call_events(events) == call_events(cut_events)
    assert message.incomplete_calls == cut_message.incomplete_calls and message.tool_calls == ()
    assert message.truncated_call is None  # stopped by a limit, not by the end of the output


@pytest.mark.parametrize("fmt", sorted(STRING_CALLS))
def test_the_size_limit_is_reported_at_the_character_that_passes_it(fmt: str) -> None:
    """``{"a": "`` is 7 characters: with a limit of 12 the sixth character of the value passes it."""
    text = STRING_CALLS[fmt]
    _, message = streamed(fmt, text, codec.Limits(max_argument_chars=12))
    stops = [(d.code, d.offset, d.message) for d in message.diagnostics if d.offset >= text.index("hello")]
    assert stops[0] == (
        "too_large",
        text.index("hello world") + 5,
        "arguments longer than 12 characters; the call stops here, the rest is content",
    )
    assert message.incomplete_calls[0].arguments == {"a": "hello "}


GEMMA_HISTORY = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {}}}]},
    {"role": "tool", "tool_call_id": "c", "content": "r"},
]


@pytest.mark.parametrize("space", [" ", "\n", " \t "])
def test_white_space_before_the_role_of_a_reopened_gemma_turn_is_skipped(space: str) -> None:
    """After tool results Gemma's generation prompt opens no turn: a completion that opens one
    may put white space (Gemma's ``%ignore``) before its role, outside any call."""
    reply = codec.load("gemma4").parse(f"<|turn>{space}model\nhi", history=GEMMA_HISTORY, enable_thinking=False)
    assert (reply.content, reply.tool_calls, reply.diagnostics) == ("hi", (), ())


SOLAR_CALL = '<|tool_call:begin|>{id}<|tool_call:name|>{name}<|tool_call:args|>{{"a": "x"}}<|tool_call:end|>'


def solar_calls(*calls: tuple[str, str]) -> str:
    return "<|tool_calls|>" + "".join(SOLAR_CALL.format(id=i, name=n) for i, n in calls) + "<|calls|>"


def reported(fmt: str, text: str, tools: Any = TOOLS) -> tuple[codec.AssistantMessage, list[tuple[str, int, str]]]:
    reply = codec.load(fmt).parse(text, tools=tools, id_factory=lambda index: f"new{index}")
    return reply, [(d.code, d.offset, d.message) for d in reply.diagnostics]


@pytest.mark.parametrize("written", ["", "  "])
def test_a_solar_call_without_an_id_gets_a_new_one_and_says_so(written: str) -> None:
    text = solar_calls((written, "f"))
    reply, diagnostics = reported("solar-open", text)
    at = text.index("<|tool_call:name|>")
    assert diagnostics[-1] == ("missing_call_id", at, "a call without an id; a new one is made")
    assert [(call.id, call.name) for call in reply.tool_calls] == [("new0", "f")]


def test_a_repeated_call_id_is_replaced_by_a_new_one() -> None:
    text = solar_calls(("abcdefghij", "f"), ("abcdefghij", "f"))
    reply, diagnostics = reported("solar-open", text)
    second = text.rindex("<|tool_call:args|>")  # the id is settled when the arguments start
    assert diagnostics == [("repeated_call_id", second, "call id 'abcdefghij' used twice; a new one is made")]
    assert [call.id for call in reply.tool_calls] == ["abcdefghij", "new1"]


def test_white_space_around_a_tool_name_is_stripped_and_reported() -> None:
    text = solar_calls(("abcdefghij", " f "))
    reply, diagnostics = reported("solar-open", text)
    assert diagnostics == [
        ("tool_name_whitespace", text.index("<|tool_call:args|>"), "white space around tool name 'f'")
    ]
    assert [call.name for call in reply.tool_calls] == ["f"]


def test_a_call_to_a_tool_not_offered_is_kept_and_reported_only_when_tools_were_given() -> None:
    text = solar_calls(("abcdefghij", "g"))
    reply, diagnostics = reported("solar-open", text)
    assert diagnostics == [
        ("unknown_tool", text.index("<|tool_call:args|>"), "call to 'g', a tool that was not offered")
    ]
    assert reply.tool_calls == reported("solar-open", text, tools=None)[0].tool_calls
    assert reported("solar-open", text, tools=None)[1] == []


def test_a_call_without_a_name_is_kept_apart_as_incomplete() -> None:
    text = solar_calls(("abcdefghij", ""))
    reply, diagnostics = reported("solar-open", text)
    assert diagnostics[-1] == (
        "missing_tool_name",
        text.index("<|tool_call:end|>"),
        "a call without a tool name is not a call to run",
    )
    # "length": a call was begun and not finished, so the reply holds nothing to run as it is
    assert reply.tool_calls == () and reply.truncated_call is None and reply.finish_reason == "length"
    assert [(call.id, call.name, call.arguments) for call in reply.incomplete_calls] == [("abcdefghij", "", {"a": "x"})]


@pytest.mark.parametrize(("call_id", "name"), [("  ", "f"), ("", "f"), ("abcdefghij", " f "), ("ab", "get")])
def test_an_id_and_a_name_read_one_character_at_a_time_read_as_whole(call_id: str, name: str) -> None:
    """Streamed or whole, a call's id and name, and what is reported about them, are the same."""
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in ("f", "get")]
    text = solar_calls((call_id, name))
    parser = codec.load("solar-open").stream(tools=tools, id_factory=lambda index: f"new{index}")
    for char in text:
        parser.feed(char)
    parser.close()
    whole = reported("solar-open", text, tools=tools)[0]
    assert parser.message == whole and parser.message.diagnostics == whole.diagnostics
    assert [(call.id, call.name) for call in whole.tool_calls] == [(call_id.strip() or "new0", name.strip())]


@pytest.mark.parametrize(("limit", "complete"), [(1, False), (2, True)])
def test_the_empty_arguments_of_a_call_with_none_count_toward_the_size_limit(limit: int, complete: bool) -> None:
    """GLM, a call that names no argument: its arguments are ``{}``, two characters."""
    text = "</think><tool_call>f</tool_call>after"
    reply = codec.load("glm").parse(text, limits=codec.Limits(max_argument_chars=limit), id_factory=lambda i: "x")
    calls = [codec.ToolCall(id="x", name="f", arguments={})]
    assert (list(reply.tool_calls), list(reply.incomplete_calls)) == ((calls, []) if complete else ([], calls))
    assert reply.content == "after"
    if not complete:
        stop = (
            text.index("</tool_call>"),
            "arguments longer than 1 characters; the call stops here, the rest is content",
        )
        assert [(d.code, d.offset, d.message) for d in reply.diagnostics] == [("too_large", *stop)]


def test_a_call_with_no_arguments_streamed_one_character_at_a_time_keeps_its_whole_name() -> None:
    """GLM: with no argument to read, the name's pieces are joined only when the call ends."""
    parser = codec.load("glm").stream(id_factory=lambda index: "x")
    events = [event for char in "</think><tool_call>get_weather</tool_call>" for event in parser.feed(char)]
    events += parser.close()
    assert parser.message.tool_calls == (codec.ToolCall(id="x", name="get_weather", arguments={}),)
    assert [event for event in events if isinstance(event, ToolCallStart)] == [ToolCallStart(0, "x", "get_weather")]


def test_calls_after_a_stopped_call_are_numbered_after_it() -> None:
    """Event indices count every announced call, the stopped (incomplete) ones too."""
    big = "<tool_call>f<arg_key>a</arg_key><arg_value>" + "x" * 20 + "</arg_value></tool_call>"
    small = "<tool_call>f<arg_key>a</arg_key><arg_value>y</arg_value></tool_call>"
    parser = codec.load("glm").stream(tools=TOOLS, limits=codec.Limits(max_argument_chars=15), id_factory=str)
    events = parser.feed("</think>" + big + small) + parser.close()
    starts = [event for event in events if isinstance(event, ToolCallStart)]
    assert starts == [ToolCallStart(0, "0", "f"), ToolCallStart(1, "1", "f")]
    assert [call.arguments for call in parser.message.tool_calls] == [{"a": "y"}]
    assert [end.index for end in events if isinstance(end, ToolCallEnd)] == [0, 1]


WEATHER_CALLS = {
    "glm": "<tool_call>f<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key>"
    "<arg_value>[1, 2]</arg_value></tool_call>",
    "solar-open": "<|tool_calls|><|tool_call:begin|>abcdefghij<|tool_call:name|>f<|tool_call:args|>"
    '{"city": "Paris", "days": [1, 2]}<|tool_call:end|><|calls|>',
    "gemma4": '<|tool_call>call:f{city:<|"|>Paris<|"|>,days:[1,2]}<tool_call|>',
}


@pytest.mark.parametrize("fmt", sorted(WEATHER_CALLS))
def test_a_call_streamed_one_character_at_a_time_reads_as_whole(fmt: str) -> None:
    """Every piece of a run of text after its first (a key's, a value's) reaches the call."""
    text = WEATHER_CALLS[fmt]
    parser = codec.load(fmt).stream(id_factory=str)
    for char in text:
        parser.feed(char)
    parser.close()
    assert [call.arguments for call in parser.message.tool_calls] == [{"city": "Paris", "days": [1, 2]}]
    assert parser.message == codec.load(fmt).parse(text, id_factory=str)


@pytest.mark.parametrize(
    ("fmt", "text"),
    [("glm", "thinking"), ("gemma4", "<|channel>thought\nhmm"), ("solar-open", "<|think|>hmm")],
)
def test_output_that_ends_inside_the_reasoning_finished_for_length(fmt: str, text: str) -> None:
    reply = codec.load(fmt).parse(text)
    assert (reply.finish_reason, reply.truncated_call, reply.tool_calls) == ("length", None, ())


def test_output_that_ends_inside_a_call_finished_for_length_and_keeps_the_call_apart() -> None:
    reply = codec.load("glm").parse("ok</think><tool_call>f<arg_key>a", id_factory=str)
    assert (reply.finish_reason, reply.tool_calls) == ("length", ())
    assert reply.truncated_call == codec.ToolCall(id="0", name="f", arguments={})
    assert reply.incomplete_calls == (reply.truncated_call,)


def test_a_message_read_before_the_end_says_no_finish_reason() -> None:
    """Only a parse that ended knows how the output finished: not the message mid-stream, nor
    the partial message a strict error carries."""
    parser = codec.load("glm").stream()
    parser.feed("ok</think>ans")
    assert (parser.message.content, parser.message.finish_reason) == ("ans", None)
    with pytest.raises(codec.ParseError) as raised:
        codec.load("glm").parse("ok</think>answer<think>", strict=True)
    partial = raised.value.partial
    assert partial is not None
    assert (partial.reasoning, partial.content, partial.finish_reason) == ("ok", "answer", None)


@pytest.mark.parametrize("fmt", sorted(STRING_CALLS))
def test_a_parsed_message_is_the_model_s_own_output_until_it_is_changed(fmt: str) -> None:
    # `is_model_output` lets render tell a reply parse returned from one a caller built.
    message = codec.load(fmt).parse(STRING_CALLS[fmt], tools=TOOLS)
    assert message.is_model_output
    assert not message.model_copy(update={"content": "edited"}).is_model_output
    assert not codec.AssistantMessage(content=message.content, tool_calls=message.tool_calls).is_model_output


def _state(model: Any) -> tuple[Any, ...]:
    """Everything pydantic keeps on an instance, and what it shows of it."""
    return (
        list(model.__dict__.items()),
        model.model_fields_set,
        model.__pydantic_extra__,
        model.__pydantic_private__,
        model.model_dump(),
        model.model_dump(exclude_unset=True),
        repr(model),
    )


def test_built_makes_what_model_construct_makes() -> None:
    """The builder's fast constructor (``models.built``) against pydantic's own, on the two
    models it builds: every attribute pydantic keeps, dumps, repr, pickling, equality and
    ``is_model_output``. A change in pydantic's internals shows here first."""
    call_fields = {"id": "c1", "name": "f", "arguments": {"a": [1, {"b": None}]}}
    call = built(ToolCall, dict(call_fields))
    assert _state(call) == _state(ToolCall.model_construct(**call_fields))
    message_fields = {
        "role": "assistant",
        "content": "Hi",
        "reasoning": None,
        "tool_calls": (call,),
        "finish_reason": "tool_calls",
        "truncated_call": None,
        "incomplete_calls": (),
        "diagnostics": (Diagnostic("value_repaired", 3, "read leniently"),),
    }
    parsed = ("Hi", None, (call,))
    message = built(AssistantMessage, dict(message_fields), {"_parsed": parsed})
    reference = AssistantMessage.model_construct(**message_fields)
    reference._parsed = parsed
    assert _state(message) == _state(reference)
    assert message == reference
    assert message.is_model_output and reference.is_model_output
    assert _state(pickle.loads(pickle.dumps(message))) == _state(reference)
    assert message.model_copy(update={"content": "Bye"}).content == "Bye"
    with pytest.raises(ValidationError):  # still frozen
        message.content = "changed"  # type: ignore[misc]
