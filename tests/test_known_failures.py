"""Each way existing parsers fail (docs/formats.md, "Known failures") as a test of ours.

The generic tests run for every format of the registry, on the completions its ``examples`` hold
(``codec.formats.Examples``: two calls to ``get_weather``, a ``run_code`` call cut off inside
its string, a string argument that reads as a number); a few state one format's own trap.
"""

from __future__ import annotations

import pytest

import codec
from codec.events import ContentDelta, ReasoningDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from codec.registry import FORMATS
from support.parsing import TOOLS, ids, stream_chunks


def _arguments_by_call(events: list[codec.Event]) -> dict[int, str]:
    fragments: dict[int, str] = {}
    for event in events:
        if isinstance(event, ToolCallDelta):
            fragments[event.index] = fragments.get(event.index, "") + event.arguments
    return fragments


@pytest.mark.parametrize("fmt", codec.formats())
def test_two_complete_calls_in_one_chunk_are_both_kept_with_their_own_index(fmt: str) -> None:
    events, message, _ = stream_chunks(fmt, [FORMATS[fmt].examples.two_calls])
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.name) for s in starts] == [(0, "get_weather"), (1, "get_weather")]
    assert [call.arguments for call in message.tool_calls] == [{"city": "Paris"}, {"city": "Rome"}]


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_long_string_argument_streams_before_the_call_ends(fmt: str) -> None:
    """A string's text goes out as it arrives; where the format's values are pattern tokens
    (``FormatSpec.string_lag``: Llama 4's), at most that many characters behind, and the name
    once the string's first line follows it."""
    lag, line = FORMATS[fmt].string_lag, "x = 1\n"
    parser = codec.load(fmt).stream(tools=TOOLS, id_factory=ids)
    started = parser.feed(FORMATS[fmt].examples.code_head)
    early = parser.feed(line) if lag else []  # a pattern token is decided once text follows it
    assert any(isinstance(e, ToolCallStart) for e in started + early), "the name is out before any argument"
    streamed = "".join(e.arguments for e in early if isinstance(e, ToolCallDelta))
    lines = 100 + lag // len(line)
    for _ in range(lines - bool(lag)):
        events = parser.feed(line)
        assert not any(isinstance(e, ToolCallEnd) for e in events)
        streamed += "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
    # no fake streaming: text goes out as it arrives (no more than ``lag`` characters behind)
    assert streamed.count("x = 1\\n") >= lines - 1 - lag // len(line)


@pytest.mark.parametrize("fmt", codec.formats())
def test_streaming_and_batch_agree_on_types(fmt: str) -> None:
    completion = FORMATS[fmt].examples.typing_trap
    expected = {"city": "123", "days": 123}
    _, whole, _ = stream_chunks(fmt, [completion])
    events, streamed, _ = stream_chunks(fmt, list(completion))
    assert whole.tool_calls[0].arguments == streamed.tool_calls[0].arguments == expected
    assert _arguments_by_call(events) == {0: '{"city": "123", "days": 123}'}


def test_a_finished_generation_is_not_thrown_away_when_a_strict_parse_would_fail() -> None:
    completion = "</think>Here.<tool_call>get_weather<arg_key>city</arg_key>Paris</arg_value></tool_call>"
    with pytest.raises(codec.ParseError) as raised:
        codec.load("glm").parse(completion, tools=TOOLS, strict=True)
    assert raised.value.partial is not None and raised.value.partial.content == "Here."
    reply = codec.load("glm").parse(completion, tools=TOOLS)
    assert reply.content == "Here." and reply.tool_calls[0].arguments == {"city": "Paris"}


@pytest.mark.parametrize("fmt", codec.formats())
def test_special_tokens_never_leak_into_content(fmt: str) -> None:
    events, message, _ = stream_chunks(fmt, list(FORMATS[fmt].examples.two_calls))
    assert message.content is None
    assert not any(isinstance(e, ContentDelta) for e in events)


def test_reasoning_does_not_leak_into_content_in_a_later_turn() -> None:
    """Gemma goes on in the same turn after a tool result, inside a thought channel when
    thinking is on; given the history, the parser starts there."""
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "18 C"},
    ]
    gemma = codec.load("gemma4")
    reply = gemma.parse(
        "Mild.\n<channel|>It is 18 C.<turn|>", tools=TOOLS, history=history, enable_thinking=True, strict=True
    )
    assert (reply.reasoning, reply.content) == ("Mild.", "It is 18 C.")
    events, _, _ = stream_chunks("glm", list("Still thinking.</think>Answer."))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Still thinking."
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == "Answer."


@pytest.mark.parametrize("fmt", codec.formats())
def test_parallel_calls_to_one_tool_are_not_merged(fmt: str) -> None:
    events, message, _ = stream_chunks(fmt, list(FORMATS[fmt].examples.two_calls))
    assert _arguments_by_call(events) == {0: '{"city": "Paris"}', 1: '{"city": "Rome"}'}
    assert len({call.id for call in message.tool_calls}) == 2
