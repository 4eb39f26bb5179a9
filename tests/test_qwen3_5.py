"""Qwen3.5's quirks, one per test: the thought the generation prompt opens (or pre-fills empty),
Qwen3-Coder's values after it, the known mistakes (a call inside an unclosed thought), earlier
turns' reasoning dropped by the template, images and videos as placeholders, and detection."""

from __future__ import annotations

from typing import Any

import codec
from codec._resources import read_text
from codec.registry import find

FMT = "qwen3.5"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"s": {"type": "string"}, "n": {"type": "integer"}, "b": {"type": "boolean"}},
            },
        },
    }
]
USER = {"role": "user", "content": "hi"}


def call(**arguments: str) -> str:
    body = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in arguments.items())
    return f"<tool_call>\n<function=f>\n{body}</function>\n</tool_call>"


def parsed(text: str, **options: Any) -> codec.AssistantMessage:
    return codec.load(FMT).parse(text, tools=TOOLS, **options)


def test_the_generation_prompt_opens_the_thought_only_under_enable_thinking() -> None:
    c = codec.load(FMT)
    assert c.render([USER]).endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert c.render([USER], enable_thinking=True).endswith("<|im_start|>assistant\n<think>\n")


def test_reasoning_after_the_opened_thought_then_a_call_with_typed_values() -> None:
    message = parsed("Look it up.\n</think>\n\n" + call(s="True", n="3", b="False"), enable_thinking=True)
    assert message.reasoning == "Look it up."
    assert message.tool_calls[0].arguments == {"s": "True", "n": 3, "b": False}


def test_with_thinking_off_the_completion_is_content_and_calls() -> None:
    message = parsed("Sure.\n\n" + call(s="x"))
    assert (message.reasoning, message.content) == (None, "Sure.")
    assert message.tool_calls[0].arguments == {"s": "x"}


def test_a_call_inside_an_unclosed_thought_is_a_call() -> None:
    message = parsed("I will call.\n" + call(s="x"), enable_thinking=True)
    assert message.reasoning == "I will call."
    assert [c.name for c in message.tool_calls] == ["f"]
    assert "malformed" in [d.code for d in message.diagnostics]


def test_a_missing_parameter_close_is_inserted() -> None:
    text = "<tool_call>\n<function=f>\n<parameter=s>\nx\n<parameter=n>\n2\n</parameter>\n</function>\n</tool_call>"
    message = parsed(text)
    assert message.tool_calls[0].arguments == {"s": "x", "n": 2}


def test_earlier_turns_reasoning_is_dropped_and_explained() -> None:
    messages = [
        USER,
        {"role": "assistant", "content": "a", "reasoning_content": "first"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "b", "reasoning_content": "second"},
    ]
    c = codec.load(FMT)
    prompt = c.render(messages, add_generation_prompt=False)
    assert "first" not in prompt and "<think>\nsecond\n</think>\n\nb" in prompt
    back = c.parse_prompt(prompt).messages
    assert (back[1].reasoning, back[3].reasoning) == (None, "second")
    losses = c.explain_losses(messages, add_generation_prompt=False)
    assert any("last user query" in str(loss) for loss in losses)


def test_images_and_videos_read_back_as_placeholders_and_numbered_with_add_vision_id() -> None:
    content = [{"type": "text", "text": "see "}, {"type": "image_url", "image_url": {"url": "u"}}, {"type": "video"}]
    c = codec.load(FMT)
    prompt = c.render([{"role": "user", "content": content}], add_vision_id=True)
    assert "see Picture 1: <|vision_start|><|image_pad|><|vision_end|>Video 1: " in prompt
    back = c.parse_prompt(prompt).messages[0].content
    assert isinstance(back, tuple) and [p.type for p in back] == ["text", "image", "text", "video"]


def test_the_tools_come_back_from_their_json_lines_and_the_system_text_after_the_instruction() -> None:
    c = codec.load(FMT)
    prompt = c.render([{"role": "system", "content": " Be brief. "}, USER], tools=TOOLS)
    conversation = c.parse_prompt(prompt)
    assert list(conversation.tools) == TOOLS
    assert conversation.messages[0].content == "Be brief."


def test_model_ids_of_the_family_load_it_and_qwen3_ids_do_not() -> None:
    assert find("Qwen/Qwen3.5-9B").name == FMT
    assert find("Qwen/Qwen3-8B").name == "qwen3"
    assert find("Qwen/Qwen3-Coder-30B-A3B-Instruct").name == "qwen3-coder"


def test_the_template_is_told_from_qwen3_and_qwen3_coder_and_vision_tokens_prove_nothing() -> None:
    template = "{# edited #}" + read_text("templates", "qwen3_5.jinja")
    assert codec.detect(template).format == FMT
    vision = "<|vision_start|><|image_pad|><|video_pad|><|vision_end|>"
    hermes_vl = "<|im_start|><|im_end|><tool_call></tool_call><tool_response>" + vision
    assert codec.detect(hermes_vl + "<think></think>").format == "qwen3"
