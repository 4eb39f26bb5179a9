"""``parse_prompt`` and ``canonical`` for Gemma 4, one quirk of its template at a time.

Every example checks the two prompt round trips (``parse_prompt(render(c)) == canonical(c)``
and ``render(parse_prompt(p)) == p``) before looking at what came back.
"""

from __future__ import annotations

from typing import Any

import pytest

import codec
from codec.formats.gemma4.turns import HIDDEN_REASONING
from codec.models import MediaPart, TextPart

GEMMA = codec.load("gemma4")
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather.",
        "strict": True,
        "parameters": {
            "type": "object",
            "required": ["city"],
            "additionalProperties": False,
            "properties": {
                "city": {"type": "string", "description": "City name", "default": "Paris"},
                "unit": {"type": "string", "enum": ["C", "F"], "format": "unit"},
                "days": {"type": ["integer", "null"], "minimum": 1, "description": "How many"},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 9}},
                "where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
                "Extra": {"type": "object", "title": "free-form", "nullable": True},
            },
        },
    },
}


def parsed(messages: list[dict[str, Any]], **kwargs: Any) -> codec.Conversation:
    """What ``parse_prompt`` reads from the rendered prompt (after both round trips)."""
    prompt = GEMMA.render(messages, **kwargs)
    conversation = GEMMA.parse_prompt(prompt)
    assert conversation == GEMMA.canonical(messages, **kwargs)
    assert GEMMA.render_conversation(conversation) == prompt
    return conversation


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def system(content: Any) -> dict[str, Any]:
    return {"role": "system", "content": content}


def assistant(content: Any = None, reasoning: str | None = None, *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    if content is not None:
        message["content"] = content
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = list(calls)
    return message


def call(call_id: str, city: str, name: str = "get_weather") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": {"city": city}}}


def result(call_id: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def test_declarations_come_back_as_the_schema_they_show() -> None:
    prompt = GEMMA.render([user("Hi")], tools=[WEATHER])
    assert 'type:<|"|>STRING<|"|>' in prompt and 'required:[<|"|>city<|"|>]' in prompt
    function = parsed([user("Hi")], tools=[WEATHER]).tools[0]["function"]
    assert function == {
        "name": "get_weather",
        "description": "Current weather.",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["C", "F"]},
                "days": {"type": ["integer", "null"], "description": "How many"},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 9}},
                "where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
                "Extra": {"type": "object", "nullable": True, "properties": {"title": {}}},
            },
        },
    }
    assert list(function["parameters"]["properties"]) == ["city", "days", "Extra", "tags", "unit", "where"]


def test_a_tool_call_turn_its_results_and_the_answer_share_one_model_turn() -> None:
    messages = [
        user("Weather in Paris and Oslo?"),
        assistant(None, None, call("x1", "Paris"), call("x2", "Oslo")),
        result("x2", "-3 C"),
        result("x1", "18 C"),
        assistant("Paris is warmer."),
    ]
    prompt = GEMMA.render(messages, add_generation_prompt=False)
    assert prompt.count("<|turn>model\n") == 1
    assert '{value:<|"|>18 C<|"|>}<tool_response|>\nParis is warmer.<turn|>' in prompt
    back = parsed(messages, add_generation_prompt=False)
    assert [(c.id, c.arguments) for c in back.messages[1].tool_calls] == [
        ("call_0", {"city": "Paris"}),
        ("call_1", {"city": "Oslo"}),
    ]
    assert back.to_openai()[2:] == [
        {"role": "tool", "content": "-3 C", "tool_call_id": "call_0"},  # by name and order only
        {"role": "tool", "content": "18 C", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "Paris is warmer."},
    ]


def test_answers_in_one_turn_run_together_where_no_separator_shows() -> None:
    messages = [user("Hi"), assistant("Hello."), assistant("How can I help?"), user("Bye")]
    conversation = parsed(messages)
    assert conversation.messages[1] == codec.AssistantMessage(content="Hello.\nHow can I help?")
    assert len(conversation.messages) == 3


def test_history_reasoning_is_dropped_and_its_absence_shows_with_thinking_off() -> None:
    messages = [user("2+2?"), assistant("4", "Easy."), user("3+3?"), assistant("6", "Also easy.")]
    conversation = parsed(messages, add_generation_prompt=False)
    assert conversation.messages[1].reasoning == HIDDEN_REASONING  # no empty thought channel
    assert conversation.messages[3].reasoning == "Also easy."
    assert conversation.options == {}
    thinking = parsed(messages, add_generation_prompt=False, enable_thinking=True)
    assert thinking.messages[1].reasoning is None
    assert thinking.options == {"enable_thinking": True}


def test_preserve_thinking_shows_through_the_reasoning_it_keeps() -> None:
    messages = [user("2+2?"), assistant("4", "Easy."), user("3+3?")]
    kept = parsed(messages, preserve_thinking=True)
    assert kept.messages[1].reasoning == "Easy."
    assert kept.options == {"preserve_thinking": True}
    assert parsed([user("Hi")], preserve_thinking=True).options == {}  # nothing kept: invisible


def test_the_empty_thought_channel_means_thinking_off() -> None:
    prompt = GEMMA.render([user("Hi"), assistant("Hello")])
    assert prompt.endswith(
        "<|turn>model\n<|channel>thought\n<channel|>Hello<turn|>\n<|turn>model\n<|channel>thought\n<channel|>"
    )
    conversation = parsed([user("Hi"), assistant("Hello")])
    assert conversation.messages[1] == codec.AssistantMessage(content="Hello")
    assert conversation.add_generation_prompt


def test_after_tool_results_the_generation_prompt_is_an_open_thought_or_nothing() -> None:
    messages = [user("Paris?"), assistant(None, None, call("a", "Paris")), result("a", "18 C")]
    assert GEMMA.render(messages, enable_thinking=True).endswith("<tool_response|><|channel>thought\n")
    assert parsed(messages, enable_thinking=True).add_generation_prompt
    assert not parsed(messages).add_generation_prompt  # thinking off: nothing is written
    assert GEMMA.explain_losses(messages)[-1].rule == "generation_prompt_hidden_after_calls"


def test_a_call_without_its_result_leaves_a_bare_response_marker() -> None:
    messages = [user("Paris?"), assistant(None, None, call("a", "Paris")), user("Never mind.")]
    assert "<tool_call|><|tool_response><|turn>user\n" in GEMMA.render(messages)
    assert [m.role for m in parsed(messages).messages] == ["user", "assistant", "user"]


def test_string_results_are_values_and_mapping_results_read_as_json() -> None:
    messages = [user("Paris?"), assistant(None, None, call("a", "Paris")), result("a", '{"temp": 18}')]
    assert parsed(messages).messages[2].content == '{"temp": 18}'
    assert 'response:get_weather{value:<|"|>{"temp": 18}<|"|>}' in GEMMA.render(messages)
    # A mapping result (transformers with a dict content) prints its keys; it reads back as JSON.
    prompt = GEMMA.render(messages).replace('{value:<|"|>{"temp": 18}<|"|>}', '{temp:18,unit:<|"|>C<|"|>}')
    assert GEMMA.parse_prompt(prompt).messages[2].content == '{"temp": 18, "unit": "C"}'


def test_results_are_matched_by_the_name_the_template_prints() -> None:
    messages = [
        user("Two?"),
        assistant(None, None, call("a", "Paris"), call("b", "Oslo", "get_time")),
        result("b", "noon"),
        result("zzz", "?"),
        {**result("a", "18 C"), "name": "get_weather"},
    ]
    back = parsed(messages).messages
    assert [(m.tool_call_id, m.name) for m in back[2:]] == [("call_1", None), (None, "unknown"), ("call_0", None)]


def test_media_become_placeholders_and_url_audio_and_video_are_lost() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
    audio_url = {"type": "audio_url", "audio_url": {"url": "https://example.com/a.mp3"}}
    content = [{"type": "text", "text": " What is this? "}, image, audio_url, {"type": "text", "text": " And?"}]
    prompt = GEMMA.render([user(content)])
    assert "<|turn>user\nWhat is this?<|image|>And?<turn|>" in prompt
    assert parsed([user(content)]).messages[0].content == (
        TextPart(text="What is this?"),
        MediaPart(type="image"),
        TextPart(text="And?"),
    )
    tool_media = [
        user("Look"),
        assistant(None, None, call("a", "Paris")),
        result("a", [{"type": "text", "text": "a map"}, {"type": "image"}]),
    ]
    assert parsed(tool_media).messages[2].content == (TextPart(text="a map"), MediaPart(type="image"))


def test_the_first_system_message_keeps_the_shape_the_header_shows() -> None:
    parts = [{"type": "text", "text": " Be brief. "}, {"type": "text", "text": "Be kind."}]
    assert "<|turn>system\nBe brief. Be kind. <turn|>" in GEMMA.render([system(parts), user("Hi")])
    assert parsed([system(parts), user("Hi")]).messages[0].content == (TextPart(text="Be brief. Be kind."),)
    assert parsed([system("  Be brief.  "), user("Hi")]).messages[0].content == "Be brief."
    assert parsed([system(""), user("Hi")], enable_thinking=True).messages[0].role == "user"


def test_explain_losses_names_each_rule_at_the_callers_message_index() -> None:
    messages = [
        user("Hi"),
        assistant(" Hello ", "greet"),
        result("nobody", "?"),
        user("Oslo?"),
        assistant(None, None, call("c9", "Oslo")),
        result("c9", "-3 C"),
    ]
    losses = GEMMA.explain_losses(messages, tools=[WEATHER], preserve_thinking=False)
    found = [(loss.rule, loss.message_index) for loss in losses]
    assert ("results_without_their_call_dropped", None) in found
    assert ("options_as_shown", None) in found
    assert ("text_trimmed", 1) in found
    assert ("history_reasoning_dropped", 1) in found
    assert ("call_ids_numbered", 3) in found  # indices as the messages were before the rule
    assert ("tools_as_declared", None) in found
    assert "reasoning before the last user message is dropped" in str(losses).lower()


def test_nothing_is_lost_from_a_plain_conversation() -> None:
    assert GEMMA.explain_losses([user("Hi"), assistant("Hello")]) == []


ASKED = "<bos><|turn>user\nHi<turn|>\n<|turn>model\n"


@pytest.mark.parametrize(
    ("prompt", "code", "at"),
    [
        (codec.load("glm").render([user("hi")]), "unexpected_text", "[gMASK]"),  # another format's
        (ASKED + "<|channel>thought\n<channel|>Hi<eos>", "unexpected_marker", "<eos>"),  # a stop marker
        ("<bos><|turn>assistant\nHi<turn|>\n", "unexpected_text", "assistant"),  # not a template role
        (ASKED + "<|tool_call>call:f{city:Paris}<tool_call|>", "malformed", "Paris"),  # an unquoted string
        (ASKED + "Hi<turn|><|turn>user\n", "unexpected_marker", "<|turn>user"),  # no new line after <turn|>
    ],
)
def test_a_prompt_that_is_not_gemmas_raises_parse_error_with_its_position(prompt: str, code: str, at: str) -> None:
    with pytest.raises(codec.ParseError) as raised:
        GEMMA.parse_prompt(prompt)
    offset = prompt.rindex(at)
    assert (raised.value.code, raised.value.offset) == (code, offset)
    assert raised.value.line == 1 + prompt[:offset].count("\n")
