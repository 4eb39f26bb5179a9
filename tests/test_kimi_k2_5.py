"""Kimi K2.5's and K2.6's quirks, one per test: the caller's ids written as they are (the name
shows only in ``functions.NAME:IDX``), the thought of history turns, names in headers, media
placeholders, ``tools_ts_str``, and what the models write wrong (calls inside an unclosed
thought, an id without its index)."""

from __future__ import annotations

from typing import Any

import codec
from codec._resources import read_text
from support.parsing import ids

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
SECTION, END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
USER = {"role": "user", "content": "Weather in Paris?"}


def _call(written_id: str, arguments: str = '{"city": "Paris"}') -> str:
    return f"<|tool_call_begin|>{written_id}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>"


def _calling(call_id: str) -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def _round_trip(fmt: str, messages: list[Any], **options: Any) -> codec.Conversation:
    c = codec.load(fmt)
    prompt = c.render(messages, tools=TOOLS, **options)
    parsed = c.parse_prompt(prompt)
    assert parsed == c.canonical(messages, tools=TOOLS, **options)
    assert c.render_conversation(parsed) == prompt
    return parsed


def test_a_kimi_id_is_written_as_it_is_and_names_the_call() -> None:
    messages = [USER, _calling("functions.get_weather:0")]
    prompt = codec.load("kimi-k2-5").render(messages, tools=TOOLS, add_generation_prompt=False)
    assert _call("functions.get_weather:0") in prompt
    call = _round_trip("kimi-k2-5", messages).messages[1].tool_calls[0]  # type: ignore[union-attr]
    assert (call.id, call.name) == ("functions.get_weather:0", "get_weather")


def test_another_id_is_written_as_it_is_and_the_name_is_lost_and_explained() -> None:
    messages = [USER, _calling("call_7")]
    call = _round_trip("kimi-k2-5", messages).messages[1].tool_calls[0]  # type: ignore[union-attr]
    assert (call.id, call.name) == ("call_7", "call_7")
    losses = codec.load("kimi-k2-5").explain_losses(messages, tools=TOOLS)
    assert [(loss.rule, loss.message_index) for loss in losses] == [("names_from_ids", 1)]


def test_only_turns_after_the_last_answer_keep_their_thought() -> None:
    messages = [
        USER,
        {"role": "assistant", "content": "Sunny.", "reasoning_content": "old thought"},
        USER,
        {**_calling("functions.get_weather:0"), "reasoning_content": "new thought"},
    ]
    prompt = codec.load("kimi-k2-5").render(messages, tools=TOOLS)
    assert "<think></think>Sunny." in prompt and "<think>new thought</think>" in prompt
    parsed = _round_trip("kimi-k2-5", messages)
    assert [getattr(m, "reasoning", None) for m in parsed.messages] == [None, None, None, "new thought"]


def test_thinking_off_empties_the_later_thoughts_and_reads_back_as_the_option() -> None:
    messages = [USER, {**_calling("functions.get_weather:0"), "reasoning_content": "R"}]
    prompt = codec.load("kimi-k2-5").render(messages, tools=TOOLS, thinking=False)
    assert prompt.endswith("<|im_assistant|>assistant<|im_middle|><think></think>") and "R</think>" not in prompt
    assert _round_trip("kimi-k2-5", messages, thinking=False).options == {"thinking": False}


def test_k2_6_preserve_thinking_keeps_every_thought_and_reads_back() -> None:
    messages = [USER, {"role": "assistant", "content": "Sunny.", "reasoning_content": "R"}, USER]
    assert "<think>R</think>" in codec.load("kimi-k2-6").render(messages, preserve_thinking=True)
    assert "<think>R</think>" not in codec.load("kimi-k2-6").render(messages)
    assert _round_trip("kimi-k2-6", messages, preserve_thinking=True).options == {"preserve_thinking": True}


def test_names_are_written_in_place_of_the_role_and_read_back() -> None:
    messages = [
        {"role": "user", "content": "Hi", "name": "ann"},
        _calling("functions.get_weather:0"),
        {"role": "tool", "tool_call_id": "functions.get_weather:0", "name": "get_weather", "content": "15 C"},
    ]
    prompt = codec.load("kimi-k2-5").render(messages, tools=TOOLS)
    assert "<|im_user|>ann<|im_middle|>" in prompt
    assert "<|im_system|>get_weather<|im_middle|>## Return of functions.get_weather:0\n15 C" in prompt
    user, _, result = _round_trip("kimi-k2-5", messages).messages
    assert (user.name, result.name) == ("ann", "get_weather")  # type: ignore[union-attr]


def test_system_text_that_reads_as_a_result_is_one() -> None:
    messages = [USER, {"role": "system", "content": "## Return of x\ndone"}]
    (_, result) = _round_trip("kimi-k2-5", messages).messages
    assert (result.role, result.content, result.tool_call_id, result.name) == ("tool", "done", "x", "system")  # type: ignore[union-attr]


def test_images_and_videos_are_placeholders_and_audio_is_lost() -> None:
    content = [
        {"type": "text", "text": "Look:"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "video_url", "video_url": {"url": "https://example.com/v.mp4"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]
    prompt = codec.load("kimi-k2-5").render([{"role": "user", "content": content}])
    assert (
        "Look:<|media_begin|>image<|media_content|><|media_pad|><|media_end|>\n<|kimi_k25_video_placeholder|>\n"
        in prompt
    )
    parts = _round_trip("kimi-k2-5", [{"role": "user", "content": content}]).messages[0].content
    assert [part.type for part in parts] == ["text", "image", "video"]  # type: ignore[union-attr]


def test_tools_ts_str_replaces_the_tools_which_are_lost() -> None:
    text = "namespace functions { type get_weather = (_: { city: string }) => any; }"
    prompt = codec.load("kimi-k2-5").render([USER], tools=TOOLS, tools_ts_str=text)
    assert prompt.startswith(f"<|im_system|>tool_declare<|im_middle|>{text}<|im_end|>")
    parsed = _round_trip("kimi-k2-5", [USER], tools_ts_str=text)
    assert (parsed.tools, parsed.options) == (({"declared_in": "tools_ts_str"},), {"tools_ts_str": text})


def test_a_call_inside_an_unclosed_thought_is_a_call() -> None:
    reply = codec.load("kimi-k2-5").parse(
        "I will look." + SECTION + _call("functions.get_weather:0") + END, tools=TOOLS
    )
    assert reply.reasoning == "I will look." and [c.name for c in reply.tool_calls] == ["get_weather"]
    assert "malformed" in [d.code for d in reply.diagnostics]


def test_an_id_without_its_index_still_names_the_call() -> None:
    text = "</think>" + SECTION + _call("functions.get_weather") + END
    reply = codec.load("kimi-k2-5").parse(text, tools=TOOLS, id_factory=ids)
    assert [(c.id, c.name) for c in reply.tool_calls] == [("functions.get_weather", "get_weather")]


def test_the_bundled_templates_are_told_apart_and_media_tokens_prove_nothing() -> None:
    for fmt, file in (("kimi-k2-5", "kimi_k2_5.jinja"), ("kimi-k2-6", "kimi_k2_6.jinja")):
        found = codec.detect(read_text("templates", file) + "\n")
        assert found.format == fmt and "<|media_begin|>" not in found.evidence
