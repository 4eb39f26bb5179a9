"""GLM-4.5's quirks, one per test: the template's line breaks read as the markers', /nothink and
the thinking-off generation prompt, a think block in every turn, the known mistakes."""

from __future__ import annotations

from typing import Any

import codec

C = codec.load("glm-4-5")
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]
CALL = (
    "\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>"
    "\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
)


def test_the_templates_line_breaks_are_no_part_of_names_or_content_even_strict() -> None:
    reply = C.parse("\n<think>R</think>\nHello" + CALL, tools=TOOLS, strict=True)
    assert (reply.reasoning, reply.content) == ("R", "Hello")
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("get_weather", {"city": "Paris", "days": 3})]


def test_thinking_off_writes_nothink_after_each_user_message_and_reads_back() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
        {"role": "user", "content": "x/nothink"},
    ]
    prompt = C.render(messages, enable_thinking=False)
    assert prompt.endswith(
        "<|user|>\nhi/nothink<|assistant|>\n<think></think>\nyo<|user|>\nx/nothink<|assistant|>\n<think></think>"
    )
    conversation = C.parse_prompt(prompt)
    assert conversation.options == {"enable_thinking": False} and conversation.add_generation_prompt
    assert [m.content for m in conversation.messages] == ["hi", "yo", "x"]
    assert conversation == C.canonical(messages, enable_thinking=False)


def test_an_empty_last_turn_without_nothink_stays_a_turn() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}]
    conversation = C.parse_prompt(C.render(messages, add_generation_prompt=False))
    assert not conversation.add_generation_prompt and conversation.options == {}
    assert conversation == C.canonical(messages, add_generation_prompt=False)


def test_reasoning_before_the_last_user_message_is_dropped() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b", "reasoning_content": "hidden"},
        {"role": "user", "content": "c"},
    ]
    assert "<think></think>\nb" in C.render(messages)
    assert C.canonical(messages).messages[1].reasoning is None


def test_a_call_inside_an_unclosed_think_is_a_call() -> None:
    reply = C.parse("\n<think>I will look." + CALL, tools=TOOLS)
    assert reply.reasoning == "I will look." and len(reply.tool_calls) == 1


def test_a_missing_value_close_keeps_both_arguments() -> None:
    text = CALL.replace("Paris</arg_value>", "Paris")
    reply = C.parse(text, tools=TOOLS)
    assert [c.arguments for c in reply.tool_calls] == [{"city": "Paris", "days": 3}]
    assert reply.diagnostics


def test_the_whole_tool_object_is_listed_and_read_back() -> None:
    prompt = C.render([{"role": "user", "content": "hi"}], tools=TOOLS)
    assert '{"type": "function", "function": {"name": "get_weather"' in prompt
    assert list(C.parse_prompt(prompt).tools) == TOOLS


def test_thinking_off_the_new_line_before_the_content_is_the_prompts_last_marker() -> None:
    """The prompt ends at `</think>`; the template writes `</think>\\n` + content, so the reply's
    first new line is that marker's (the engine's spelling carried over from the prompt), however
    the reply is chunked, with offsets counted from the reply's start."""
    for chunks in (["\nHello"], ["\n", "Hello"], list("\nHello"), ["", "\n", "", "Hel", "lo"]):
        parser = C.stream(enable_thinking=False, strict=True)
        for chunk in chunks:
            parser.feed(chunk)
        parser.close()
        assert parser.message.content == "Hello", chunks
    assert C.parse("\n\nHello", enable_thinking=False).content == "\nHello"  # one new line is the marker's
    assert C.parse("\n", enable_thinking=False).content is None
    cut = C.parse("\n<tool_call>get_weathe", enable_thinking=False, tools=TOOLS)
    assert [d.offset for d in cut.diagnostics if d.code == "truncated"] == [len("\n<tool_call>get_weathe")]


def test_arguments_written_as_json_after_the_name_are_read_as_the_arguments() -> None:
    text = '\n<tool_call>get_weather\n{"city": "Paris", "days": 3}\n</tool_call>'
    reply = C.parse(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("get_weather", {"city": "Paris", "days": 3})]
    assert [d.code for d in reply.diagnostics] == ["arguments_repaired"]
    # Not for a tool that was not offered, nor for text that is not one JSON object: the name stays.
    assert C.parse(text).tool_calls[0].name.startswith("get_weather\n{")
    assert C.parse(text.replace("3}", "3"), tools=TOOLS).tool_calls[0].arguments == {}
