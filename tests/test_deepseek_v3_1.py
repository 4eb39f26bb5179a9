"""DeepSeek-V3.1's quirks, one per test: a completion with no header after a tool result, what
its template loses (tools, reasoning, ids, where system messages stood), and what its models
write wrong (DeepSeek-V3's call layout, double-encoded arguments, a call inside the thought, a
missing closing marker)."""

from __future__ import annotations

from typing import Any

import codec
from codec._resources import read_text
from support.parsing import fold, ids

FORMAT = "deepseek-v3-1"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]
CALLS_OPEN, CALLS_CLOSE = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
EOS = "<｜end▁of▁sentence｜>"


def _call(name: str, arguments: str) -> str:
    return f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arguments}<｜tool▁call▁end｜>"


def _streamed(text: str, size: int = 1, **options: Any) -> tuple[codec.AssistantMessage, dict[str, object]]:
    parser = codec.load(FORMAT).stream(tools=TOOLS, id_factory=ids, **options)
    events = [event for i in range(0, len(text), size) for event in parser.feed(text[i : i + size])]
    events += parser.close()
    return parser.message, fold(events)


def _codes(message: codec.AssistantMessage) -> list[str]:
    return [diagnostic.code for diagnostic in message.diagnostics]


def test_thinking_opens_the_thought_and_its_absence_pre_fills_an_empty_one() -> None:
    c = codec.load(FORMAT)
    user = [{"role": "user", "content": "Hi"}]
    assert c.render(user, thinking=True).endswith("<｜Assistant｜><think>")
    assert c.render(user, enable_thinking=True).endswith("<｜Assistant｜><think>")
    assert c.render(user).endswith("<｜Assistant｜><think></think>")
    reply = c.parse("Greet back.</think>Hello!" + EOS, thinking=True)
    assert (reply.reasoning, reply.content) == ("Greet back.", "Hello!")


def test_after_a_tool_result_the_reply_has_no_header() -> None:
    c = codec.load(FORMAT)
    history = [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {}}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "-3 C"},
    ]
    assert c.render(history) == c.render(history, add_generation_prompt=False)
    assert c.render(history).endswith("<｜tool▁output▁end｜>")
    reply = c.parse(" It is -3 C." + EOS, history=history)
    assert (reply.reasoning, reply.content) == (None, " It is -3 C.")


def test_the_template_writes_no_tools_no_reasoning_and_no_ids() -> None:
    c = codec.load(FORMAT)
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "reasoning_content": "Look it up.",
            "tool_calls": [{"id": "x7", "type": "function", "function": {"name": "get_weather", "arguments": {}}}],
        },
        {"role": "tool", "tool_call_id": "x7", "name": "get_weather", "content": "sunny"},
    ]
    prompt = c.render(messages, tools=TOOLS)
    assert "get_weather<｜tool▁sep｜>{}" in prompt and "city" not in prompt and "Look it up" not in prompt
    back = c.parse_prompt(prompt)
    assert back.tools == () and back.messages[1].reasoning is None
    assert back.messages[1].tool_calls[0].id == back.messages[2].tool_call_id == "call_0"


def test_system_messages_are_joined_first_and_an_opening_reply_takes_their_text() -> None:
    c = codec.load(FORMAT)
    joined = [
        {"role": "system", "content": "A"},
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": "B"},
    ]
    assert c.parse_prompt(c.render(joined)).messages[0] == codec.SystemMessage(content="A\n\nB")
    assert c.canonical(joined).messages[0] == codec.SystemMessage(content="A\n\nB")
    opening = [{"role": "system", "content": "S"}, {"role": "assistant", "content": "hello"}]
    prompt = c.render(opening, add_generation_prompt=False)
    assert c.parse_prompt(prompt).messages == (codec.AssistantMessage(content="Shello"),)
    assert c.render([{"role": "assistant", "content": "Shello"}], add_generation_prompt=False) == prompt


def test_white_space_after_the_thought_is_content_on_every_parse() -> None:
    c = codec.load(FORMAT)
    assert [c.parse(" " + EOS).content for _ in range(2)] == [" ", " "]


def test_double_encoded_arguments_are_read_again() -> None:
    text = CALLS_OPEN + _call("get_weather", '"{\\"city\\": \\"Paris\\", \\"days\\": 3}"') + CALLS_CLOSE
    reply = codec.load(FORMAT).parse(text, tools=TOOLS)
    assert [call.arguments for call in reply.tool_calls] == [{"city": "Paris", "days": 3}]
    assert "arguments_repaired" in _codes(reply)


def test_a_call_inside_the_unclosed_thought_is_a_call() -> None:
    text = "I will look it up." + CALLS_OPEN + _call("get_weather", '{"city": "Paris"}') + CALLS_CLOSE + EOS
    reply = codec.load(FORMAT).parse(text, tools=TOOLS, thinking=True)
    assert reply.reasoning == "I will look it up."
    assert [call.arguments for call in reply.tool_calls] == [{"city": "Paris"}]
    assert "malformed" in _codes(reply)


def test_the_calls_are_whole_without_the_block_close() -> None:
    text = CALLS_OPEN + _call("get_weather", '{"city": "Paris"}') + EOS
    reply = codec.load(FORMAT).parse(text, tools=TOOLS)
    assert [call.arguments for call in reply.tool_calls] == [{"city": "Paris"}] and reply.truncated_call is None


def test_a_call_in_deepseek_v3_layout_is_read_and_streams_like_a_whole_parse() -> None:
    text = (
        "Checking."
        + CALLS_OPEN
        + '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "a ``` b", "days": 3}\n```'
        + "<｜tool▁call▁end｜>"
        + CALLS_CLOSE
        + EOS
    )
    whole = codec.load(FORMAT).parse(text, tools=TOOLS, id_factory=ids)
    assert [(call.name, call.arguments) for call in whole.tool_calls] == [
        ("get_weather", {"city": "a ``` b", "days": 3})
    ]
    assert (whole.content, _codes(whole)) == ("Checking.", ["malformed"])
    for size in (1, 2, 3, 7):
        message, folded = _streamed(text, size)
        assert message == whole
        assert folded == whole.to_openai()
    c = codec.load(FORMAT)
    for cut in range(1, len(text)):  # a piece may end anywhere: in the head, the JSON, the fence
        parser = c.stream(tools=TOOLS, id_factory=ids)
        parser.feed(text[:cut])
        parser.feed(text[cut:])
        parser.close()
        assert parser.message == whole, cut


def test_a_call_named_function_in_v31_layout_stays_one() -> None:
    text = CALLS_OPEN + _call("function", '{"city": "Paris"}') + CALLS_CLOSE
    reply = codec.load(FORMAT).parse(text)
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("function", {"city": "Paris"})]
    assert "malformed" not in _codes(reply)


def test_the_format_is_found_by_its_model_ids_and_its_dotted_name() -> None:
    assert codec.load("deepseek-ai/DeepSeek-V3.1").name == FORMAT
    assert codec.load("deepseek-v3.1").name == FORMAT
    assert codec.detect(read_text("templates", "deepseek_v3_1.jinja")).format == FORMAT
