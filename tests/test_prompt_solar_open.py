"""``parse_prompt`` and ``canonical`` for Solar Open, one quirk of its template at a time.

Every example checks the two prompt round trips (``parse_prompt(render(c)) == canonical(c)``
and ``render(parse_prompt(p)) == p``) before looking at what came back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

import codec

SOLAR = codec.load("solar-open")
NOW = datetime(2026, 11, 30, 9, 30)
WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
}


def parsed(messages: list[dict[str, Any]], **kwargs: Any) -> codec.Conversation:
    """What ``parse_prompt`` reads from the rendered prompt (after both round trips)."""
    prompt = SOLAR.render(messages, now=NOW, **kwargs)
    conversation = SOLAR.parse_prompt(prompt)
    assert conversation == SOLAR.canonical(messages, now=NOW, **kwargs)
    assert SOLAR.render_conversation(conversation) == prompt
    return conversation


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def system(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


def assistant(content: str | None = None, reasoning: str | None = None, *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if content is not None:
        message["content"] = content
    if reasoning is not None:
        message["reasoning"] = reasoning
    if calls:
        message["tool_calls"] = list(calls)
    return message


def call(call_id: str, city: str) -> dict[str, Any]:
    function = {"name": "get_weather", "arguments": {"city": city}}
    return {"id": call_id, "type": "function", "function": function}


def result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_system_messages_anywhere_come_back_first() -> None:
    conversation = parsed([user("Hi"), system("Be brief."), user("2 + 2?"), system("No emoji.")])
    assert conversation.to_openai() == [system("Be brief."), system("No emoji."), user("Hi"), user("2 + 2?")]


def test_a_system_message_holding_a_blank_line_comes_back_as_two() -> None:
    conversation = parsed([system("Answer in French.\n\nBe brief."), user("Hi")])
    assert conversation.to_openai()[:2] == [system("Answer in French."), system("Be brief.")]


def test_the_provider_section_gives_the_date_as_option_now() -> None:
    conversation = parsed([user("Hi")])
    assert conversation.options == {"now": "2026-11-30"}
    assert SOLAR.render_conversation(conversation) == SOLAR.render([user("Hi")], now=NOW)


def test_without_the_provider_section_default_system_prompt_is_false() -> None:
    off = {"default_system_prompt": False}
    assert parsed([user("Hi")], default_system_prompt=False).options == off
    only_system = parsed([system("S"), user("Hi")], default_system_prompt=False)
    assert only_system.options == off
    assert only_system.messages[0] == codec.SystemMessage(content="S")


def test_tools_come_back_as_the_function_json_the_prompt_shows() -> None:
    search = {"type": "function", "function": {"name": "search", "strict": True}}
    conversation = parsed([user("Hi")], tools=[WEATHER, {**search, "cache_control": {"type": "x"}}])
    assert conversation.tools == (WEATHER, search)


@pytest.mark.parametrize(
    ("given", "back"),
    [
        ({"type": "json_object"}, {"type": "json_object"}),
        ({"enum": [1.5, None, True, "it's"]}, {"enum": [1.5, None, True, "it's"]}),
        ("Reply with one word.", "Reply with one word."),
        ("{'type': 'json_object'}", {"type": "json_object"}),  # the same text as the dict's
        ({"limit": float("inf")}, "{'limit': inf}"),  # not a Python literal: the text comes back
    ],
)
def test_response_format_comes_back_as_printed(given: Any, back: Any) -> None:
    conversation = parsed([user("Hi")], response_format=given)
    assert conversation.options == {"now": "2026-11-30", "response_format": back}


def test_an_empty_response_format_is_not_printed() -> None:
    assert "response_format" not in parsed([user("Hi")], response_format={}).options


def test_lastthink_keeps_reasoning_only_after_the_last_user_message() -> None:
    messages = [user("Hi"), assistant("Hello", "greet"), user("Bye"), assistant("Bye!", "farewell")]
    conversation = parsed(messages)
    replies = [m for m in conversation.messages if isinstance(m, codec.AssistantMessage)]
    assert [m.reasoning for m in replies] == [None, "farewell"]
    assert "think_render_option" not in conversation.options


def test_all_shows_earlier_reasoning_and_so_comes_back() -> None:
    messages = [user("Hi"), assistant("Hello", "greet"), user("Bye")]
    conversation = parsed(messages, think_render_option="all")
    assert conversation.messages[1] == codec.AssistantMessage(content="Hello", reasoning="greet")
    assert conversation.options["think_render_option"] == "all"


def test_all_without_earlier_reasoning_is_invisible() -> None:
    conversation = parsed([user("Hi"), assistant("Hello", "greet")], think_render_option="all")
    assert conversation.messages[1].reasoning == "greet"  # type: ignore[union-attr]
    assert "think_render_option" not in conversation.options


def test_any_other_think_render_option_shows_no_reasoning() -> None:
    conversation = parsed([user("Hi"), assistant("Hello", "greet")], think_render_option="none")
    assert conversation.messages[1] == codec.AssistantMessage(content="Hello")
    assert "think_render_option" not in conversation.options


def test_content_beside_tool_calls_is_dropped_and_empty_content_stays() -> None:
    messages = [
        user("Weather?"),
        assistant("Checking.", "need data", call("a1b2c3d4e5", "Oslo")),
        result("a1b2c3d4e5", "-3 C"),
        assistant(""),
    ]
    conversation = parsed(messages)
    checking, answer = conversation.messages[1], conversation.messages[3]
    assert checking == codec.AssistantMessage(
        reasoning="need data",
        tool_calls=(codec.ToolCall(id="a1b2c3d4e5", name="get_weather", arguments={"city": "Oslo"}),),
    )
    assert answer == codec.AssistantMessage(content="")  # the template cannot print None


def test_arguments_come_back_as_json_reads_them() -> None:
    function = {"name": "plot", "arguments": {"points": (1, 2.5), "label": '日本語 "q"'}}
    messages = [user("Go"), assistant(None, None, {"id": "call_1", "type": "function", "function": function})]
    reply = parsed(messages, add_generation_prompt=False).messages[1]
    assert isinstance(reply, codec.AssistantMessage)
    assert reply.tool_calls[0].arguments == {"points": [1, 2.5], "label": '日本語 "q"'}


@pytest.mark.parametrize(("effort", "shown"), [("low", "low"), ("minimal", "low"), ("high", None)])
def test_low_effort_writes_an_empty_think_turn_first(effort: str, shown: str | None) -> None:
    prompt = SOLAR.render([user("Hi")], now=NOW, reasoning_effort=effort)
    low = prompt.endswith("<|begin|>assistant<|think|><|end|><|begin|>assistant")
    assert low == (shown is not None)
    assert parsed([user("Hi")], reasoning_effort=effort).options.get("reasoning_effort") == shown
    history = parsed([user("Hi")], reasoning_effort=effort, add_generation_prompt=False)
    assert "reasoning_effort" not in history.options


def test_consecutive_results_share_one_block_and_take_their_calls_names() -> None:
    calls = assistant(None, None, call("a1b2c3d4e5", "Oslo"), call("f6g7h8i9j0", "Rome"))
    messages = [
        user("Oslo and Rome?"),
        calls,
        result("f6g7h8i9j0", "22 C"),
        {**result("a1b2c3d4e5", "-3 C"), "name": "weather"},
        result("unknown", "late"),
    ]
    assert SOLAR.render(messages, now=NOW).count("<|begin|>tool<|tool_response|>") == 1
    results = [m for m in parsed(messages).messages if isinstance(m, codec.ToolMessage)]
    assert [(m.tool_call_id, m.name) for m in results] == [
        ("f6g7h8i9j0", "get_weather"),
        ("a1b2c3d4e5", "get_weather"),
        ("unknown", None),
    ]


def test_a_system_message_between_results_goes_back_between_them() -> None:
    messages = [
        system("Use tools."),
        user("Oslo?"),
        assistant(None, None, call("a1b2c3d4e5", "Oslo")),
        result("a1b2c3d4e5", "-3 C"),
        system("Results may be stale."),
        system("Really."),
        result("a1b2c3d4e5", "-4 C"),
    ]
    assert SOLAR.render(messages, now=NOW).count("<|begin|>tool<|tool_response|>") == 2
    roles = [m.role for m in parsed(messages).messages]
    assert roles == ["system", "system", "user", "assistant", "tool", "system", "tool"]
    assert parsed(messages).messages[5] == codec.SystemMessage(content="Really.")


def test_explain_losses_names_each_rule_at_the_callers_message_index() -> None:
    messages = [
        user("Hi"),
        assistant("Hello", "greet"),
        system("Be brief."),
        user("Weather?"),
        assistant("Checking.", None, call("a1b2c3d4e5", "Oslo")),
        result("a1b2c3d4e5", "-3 C"),
    ]
    losses = SOLAR.explain_losses(messages, now=NOW, reasoning_effort="high")
    found = [(loss.rule, loss.message_index) for loss in losses]
    assert ("reasoning_shown", 1) in found
    assert ("content_beside_calls_dropped", 4) in found
    assert ("result_names", 5) in found
    assert ("provider_section", None) in found
    assert ("low_effort_only", None) in found
    assert ("system_messages_first", 0) in found  # the system message moved to the front
    assert "think_render_option" not in "".join(loss.rule for loss in losses)


def test_nothing_is_lost_from_a_plain_conversation() -> None:
    messages = [user("Hi"), assistant("Hello")]
    assert SOLAR.explain_losses(messages, now=NOW, default_system_prompt=False) == []


ASKED = "<|begin|>user<|content|>x<|end|><|begin|>assistant"
RESULTS = (
    "<|begin|>tool<|tool_response|><|tool_response:begin|>a<|tool_response:name|>"
    "<|tool_response:result|>r<|tool_response:end|><|end|>"
)


@pytest.mark.parametrize(
    ("prompt", "code", "offset"),
    [
        (codec.load("glm").render([user("hi")]), "unexpected_text", 0),  # another format's prompt
        (ASKED + "<|content|>y<|flush|>", "unexpected_marker", 62),  # a completion's stop marker
        ("<|begin|>system<|content|>Hello<|end|>", "system_text", 26),  # no section heading
        (
            ASKED + "<|tool_calls|><|tool_call:begin|>a<|tool_call:name|>f<|tool_call:args|>[1]"
            "<|tool_call:end|><|calls|>",
            "arguments",
            121,
        ),  # arguments that are not an object
        (RESULTS * 2, "tool_blocks", 129),  # two tool blocks with no system message to part them
    ],
)
def test_a_prompt_the_template_cannot_write_is_a_parse_error(prompt: str, code: str, offset: int) -> None:
    with pytest.raises(codec.ParseError) as raised:
        SOLAR.parse_prompt(prompt)
    assert (raised.value.code, raised.value.offset) == (code, offset)
    assert raised.value.line == 1 and raised.value.column == offset + 1


def test_the_tools_instruction_must_be_the_templates_own() -> None:
    prompt = SOLAR.render([user("Hi")], tools=[WEATHER], now=NOW)
    changed = prompt.replace("randomly generated", "random")
    with pytest.raises(codec.ParseError) as raised:
        SOLAR.parse_prompt(changed)
    assert raised.value.offset == changed.index("\n- The <tool-call-id> must be")
    assert raised.value.line > 1
