"""Mistral v0.3's quirks, one per test: the calls as one JSON list after ``[TOOL_CALLS]`` with
nothing but ``,`` between two calls, the id after the arguments, how the template writes the
system message, the tools and the results, what it refuses, and what its models write wrong (the
cases vLLM's pre-v11 Mistral parser and SGLang's Mistral detector handle)."""

from __future__ import annotations

from typing import Any

import pytest

import codec
from codec.events import ToolCallDelta, ToolCallStart
from support.parsing import fold, ids

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": 'Say "where" first',  # a quote the template writes unescaped
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]
USER = {"role": "user", "content": "Weather in Paris and Rome?"}
PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}'
ROME = '{"name": "get_weather", "arguments": {"city": "Rome"}, "id": "f5g6h7i8j"}'


def _codec() -> codec.Codec:
    return codec.load("mistral-v0-3")


def _parse(text: str, **options: Any) -> codec.AssistantMessage:
    return _codec().parse(text, tools=TOOLS, id_factory=ids, **options)


def _calls(reply: codec.AssistantMessage) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in reply.tool_calls]


def _codes(reply: codec.AssistantMessage) -> list[str]:
    return [diagnostic.code for diagnostic in reply.diagnostics]


def _call_message(*cities: str) -> dict[str, Any]:
    calls = [
        {"id": f"call{n:05d}", "type": "function", "function": {"name": "get_weather", "arguments": {"city": city}}}
        for n, city in enumerate(cities)
    ]
    return {"role": "assistant", "tool_calls": calls}


def test_two_calls_in_one_list_are_two_calls() -> None:
    reply = _parse(f"[TOOL_CALLS] [{PARIS}, {ROME}]</s>", strict=True)
    assert _calls(reply) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    assert reply.finish_reason == "tool_calls" and reply.content is None


def test_a_comma_a_bracket_or_a_brace_inside_a_string_ends_no_call() -> None:
    text = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "a}, {\\"x\\": ], ["}, "id": "a1b2c3d4e"}]</s>'
    assert _calls(_parse(text, strict=True)) == [("get_weather", {"city": 'a}, {"x": ], ['})]


def test_the_second_calls_arguments_stream_before_the_list_ends() -> None:
    parser = _codec().stream(tools=TOOLS, id_factory=ids)
    events = parser.feed(f"[TOOL_CALLS] [{PARIS}, " + '{"name": "get_weather", "arguments": {"city": "Ro')
    starts = [event for event in events if isinstance(event, ToolCallStart)]
    assert [start.index for start in starts] == [0, 1]
    assert "".join(e.arguments for e in events if isinstance(e, ToolCallDelta) and e.index == 1) == '{"city": "Ro'


def test_streamed_a_character_at_a_time_it_reads_as_whole() -> None:
    text = f"[TOOL_CALLS] [{PARIS}, {ROME}]</s>"
    parser = _codec().stream(tools=TOOLS, id_factory=ids)
    events = [event for char in text for event in parser.feed(char)] + parser.close()
    assert fold(events) == _parse(text).to_openai()


def test_the_written_id_is_not_the_calls_id() -> None:
    """The id comes after the arguments, once the call is announced: the call keeps the id it
    was announced with, nine letters or digits as the template asks (vLLM makes one too)."""
    [call] = _codec().parse(f"[TOOL_CALLS] [{PARIS}]</s>").tool_calls
    assert call.id != "a1b2c3d4e" and len(call.id or "") == 9 and (call.id or "").isalnum()


def test_a_call_without_an_id_is_read_with_a_diagnostic() -> None:
    reply = _parse('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]</s>')
    assert _calls(reply) == [("get_weather", {"city": "Paris"})]
    assert _codes(reply) == ["missing_call_id"]
    with pytest.raises(codec.ParseError):
        _parse('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]</s>', strict=True)


def test_a_member_other_than_the_id_after_the_arguments_is_content() -> None:
    reply = _parse('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "note": "x"}]</s>')
    assert _calls(reply) == [("get_weather", {"city": "Paris"})]
    assert "invalid_arguments" in _codes(reply) and '"note": "x"' in (reply.content or "")


def test_the_list_cut_off_keeps_the_finished_calls_and_says_length() -> None:
    reply = _parse(f"[TOOL_CALLS] [{PARIS}, " + '{"name": "get_weather", "arguments": {"city": "Ro')
    assert _calls(reply) == [("get_weather", {"city": "Paris"})]
    assert reply.finish_reason == "length"
    assert reply.truncated_call is not None and reply.truncated_call.arguments == {"city": "Ro"}


def test_a_list_without_its_marker_is_read_leniently() -> None:
    """Engines that strip special tokens pass the list on without ``[TOOL_CALLS]``."""
    reply = _parse(f"[{PARIS}]</s>")
    assert _calls(reply) == [("get_weather", {"city": "Paris"})] and "malformed" in _codes(reply)
    assert _parse(f"[{PARIS}]</s>", strict=False).content is None
    assert _parse("[1, 2] are two numbers.</s>").content == "[1, 2] are two numbers."


def test_a_single_object_for_the_list_is_read_leniently() -> None:
    reply = _parse(f"[TOOL_CALLS] {PARIS}</s>")
    assert _calls(reply) == [("get_weather", {"city": "Paris"})] and _codes(reply) == ["malformed"]


def test_double_encoded_arguments_are_read_again() -> None:
    text = '[TOOL_CALLS] [{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}", "id": "a1b2c3d4e"}]</s>'
    reply = _parse(text)
    assert _calls(reply) == [("get_weather", {"city": "Paris"})] and "arguments_repaired" in _codes(reply)


def test_text_before_the_calls_is_content_with_a_diagnostic() -> None:
    reply = _parse(f"Let me check.[TOOL_CALLS] [{PARIS}]</s>")
    assert reply.content == "Let me check." and len(reply.tool_calls) == 1
    assert _codes(reply) == ["malformed"]


def test_an_answer_after_inst_loses_the_space_the_template_writes() -> None:
    """``" " + message["content"]|trim + eos_token``: the space after ``[/INST]`` is the template's."""
    reply = _codec().parse(" It is sunny.</s>", history=[USER])
    assert reply.content == "It is sunny."


def test_the_system_message_is_written_in_the_last_user_message() -> None:
    c = _codec()
    messages = [{"role": "system", "content": "Be brief."}, USER]
    prompt = c.render(messages)
    assert prompt == "<s>[INST] Be brief.\n\nWeather in Paris and Rome?[/INST]"
    assert c.parse_prompt(prompt).messages == (codec.UserMessage(content="Be brief.\n\nWeather in Paris and Rome?"),)
    answered = [*messages, {"role": "assistant", "content": "Sunny."}]
    assert "Be brief." not in c.render(answered)  # not the last message: the system message is lost


def test_tools_with_a_quote_in_a_description_read_back() -> None:
    c = _codec()
    prompt = c.render([USER], tools=TOOLS)
    assert 'Say "where" first' in prompt  # written unescaped: not JSON
    assert list(c.parse_prompt(prompt).tools) == TOOLS


def test_results_are_read_back_with_their_ids() -> None:
    c = _codec()
    messages = [
        USER,
        _call_message("Paris", "Rome"),
        {"role": "tool", "tool_call_id": "call00000", "content": "18 C, sunny"},
        {"role": "tool", "tool_call_id": "call00001", "content": '{"sky": "rain"}'},
    ]
    prompt = c.render(messages, tools=TOOLS)
    assert '[TOOL_RESULTS] {"content": 18 C, sunny, "call_id": "call00000"}[/TOOL_RESULTS]' in prompt
    parsed = c.parse_prompt(prompt)
    assert [m.tool_call_id for m in parsed.messages if isinstance(m, codec.ToolMessage)] == ["call00000", "call00001"]
    assert [call.id for call in parsed.messages[1].tool_calls] == ["call00000", "call00001"]  # type: ignore[union-attr]


def test_the_template_refuses_ids_that_are_not_nine_long_and_roles_that_do_not_alternate() -> None:
    c = _codec()
    with pytest.raises(codec.RenderError, match="length 9"):
        c.render(
            [USER, {**_call_message("Paris"), "tool_calls": [{**_call_message("Paris")["tool_calls"][0], "id": "c1"}]}]
        )
    with pytest.raises(codec.RenderError, match="alternate"):
        c.render([USER, USER])


def test_an_empty_tool_list_writes_a_block_with_no_close() -> None:
    assert _codec().render([USER], tools=[]).startswith("<s>[AVAILABLE_TOOLS] [[/AVAILABLE_TOOLS]")
