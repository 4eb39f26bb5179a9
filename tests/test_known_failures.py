"""Each way existing parsers fail (FORMATS.md, "Known failures") as a test of ours."""

from __future__ import annotations

import pytest

import codec
from codec.events import ContentDelta, ReasoningDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from parse_support import TOOLS, ids, stream_chunks

Q = '<|"|>'
TWO_CALLS = {
    "glm": ("</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value></tool_call>"),
    "solar-open": ("<|tool_calls|><|tool_call:begin|>aaaaaaaaa1<|tool_call:name|>get_weather<|tool_call:args|>"
                   '{"city": "Paris"}<|tool_call:end|><|tool_call:begin|>aaaaaaaaa2<|tool_call:name|>get_weather'
                   '<|tool_call:args|>{"city": "Rome"}<|tool_call:end|><|calls|>'),
    "gemma4": (f"<|tool_call>call:get_weather{{city:{Q}Paris{Q}}}<tool_call|>"
               f"<|tool_call>call:get_weather{{city:{Q}Rome{Q}}}<tool_call|><|tool_response>"),
}
LONG_VALUE_HEAD = {
    "glm": "</think><tool_call>run_code<arg_key>code</arg_key><arg_value>",
    "solar-open": '<|tool_calls|><|tool_call:begin|>aaaaaaaaa1<|tool_call:name|>run_code<|tool_call:args|>{"code": "',
    "gemma4": f"<|tool_call>call:run_code{{code:{Q}",
}


@pytest.mark.parametrize("fmt", sorted(TWO_CALLS))
def test_two_complete_calls_in_one_chunk_are_both_kept_with_their_own_index(fmt: str) -> None:
    events, message, _ = stream_chunks(fmt, [TWO_CALLS[fmt]])
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.name) for s in starts] == [(0, "get_weather"), (1, "get_weather")]
    assert [call.arguments for call in message.tool_calls] == [{"city": "Paris"}, {"city": "Rome"}]


@pytest.mark.parametrize("fmt", sorted(LONG_VALUE_HEAD))
def test_a_long_string_argument_streams_before_the_call_ends(fmt: str) -> None:
    parser = codec.load(fmt).stream(tools=TOOLS, id_factory=ids)
    started = parser.feed(LONG_VALUE_HEAD[fmt])
    assert any(isinstance(e, ToolCallStart) for e in started), "the name is out before any argument"
    streamed = ""
    for _ in range(100):
        events = parser.feed("x = 1\n")
        assert not any(isinstance(e, ToolCallEnd) for e in events)
        streamed += "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
    assert streamed.count("x = 1\\n") >= 99  # no fake streaming: text goes out as it arrives


@pytest.mark.parametrize("fmt", sorted(TWO_CALLS))
def test_streaming_and_batch_agree_on_types(fmt: str) -> None:
    completion = {
        "glm": "</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>123</arg_value>"
               "<arg_key>days</arg_key><arg_value>123</arg_value></tool_call>",
        "solar-open": '<|tool_calls|><|tool_call:begin|>aaaaaaaaa1<|tool_call:name|>get_weather<|tool_call:args|>'
                      '{"city": "123", "days": 123}<|tool_call:end|><|calls|>',
        "gemma4": f"<|tool_call>call:get_weather{{city:{Q}123{Q},days:123}}<tool_call|>",
    }[fmt]
    expected = {"city": "123", "days": 123}
    _, whole, _ = stream_chunks(fmt, [completion])
    events, streamed, _ = stream_chunks(fmt, list(completion))
    assert whole.tool_calls[0].arguments == streamed.tool_calls[0].arguments == expected
    fragments = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
    assert fragments == '{"city": "123", "days": 123}'


def test_a_finished_generation_is_not_thrown_away_when_a_strict_parse_would_fail() -> None:
    completion = "</think>Here.<tool_call>get_weather<arg_key>city</arg_key>Paris</arg_value></tool_call>"
    with pytest.raises(codec.ParseError) as raised:
        codec.load("glm").parse(completion, tools=TOOLS, strict=True)
    assert raised.value.partial is not None and raised.value.partial.content == "Here."
    reply = codec.load("glm").parse(completion, tools=TOOLS)
    assert reply.content == "Here." and reply.tool_calls[0].arguments == {"city": "Paris"}


@pytest.mark.parametrize("fmt", ["glm", "solar-open", "gemma4"])
def test_special_tokens_never_leak_into_content(fmt: str) -> None:
    events, message, _ = stream_chunks(fmt, list(TWO_CALLS[fmt]))
    assert message.content is None
    assert not any(isinstance(e, ContentDelta) for e in events)


def test_reasoning_does_not_leak_into_content_in_a_later_turn() -> None:
    """Gemma goes on in the same turn after a tool result, inside a thought channel when
    thinking is on; given the history, the parser starts there."""
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "tool_calls": [{"id": "a", "type": "function",
                                              "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "tool_call_id": "a", "content": "18 C"},
    ]
    gemma = codec.load("gemma4")
    reply = gemma.parse("Mild.\n<channel|>It is 18 C.<turn|>", tools=TOOLS, history=history,
                        enable_thinking=True, strict=True)
    assert (reply.reasoning, reply.content) == ("Mild.", "It is 18 C.")
    events, _, _ = stream_chunks("glm", list("Still thinking.</think>Answer."))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Still thinking."
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == "Answer."


def test_parallel_calls_to_one_tool_are_not_merged() -> None:
    events, message, _ = stream_chunks("glm", list(TWO_CALLS["glm"]))
    deltas = {}
    for event in events:
        if isinstance(event, ToolCallDelta):
            deltas[event.index] = deltas.get(event.index, "") + event.arguments
    assert deltas == {0: '{"city": "Paris"}', 1: '{"city": "Rome"}'}
    assert len({call.id for call in message.tool_calls}) == 2
