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


# Nemotron 3 Nano (`nemotron-3-nano`): the family's second layout (Qwen3-Coder's system block and
# listing, its own spellings of the thought and results, truncate_history_thinking).
NEMOTRON = "nemotron-3-nano"


def nemotron(text: str, **options: Any) -> codec.AssistantMessage:
    return codec.load(NEMOTRON).parse(text, tools=TOOLS, **options)


def test_nemotron_opens_the_thought_unless_enable_thinking_is_false_and_always_writes_a_system_block() -> None:
    c = codec.load(NEMOTRON)
    empty_system = "<|im_start|>system\n<|im_end|>\n"
    assert c.render([USER]) == empty_system + "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    assert c.render([USER], enable_thinking=False).endswith("<|im_start|>assistant\n<think></think>")
    assert c.parse_prompt(c.render([USER], enable_thinking=False)).options == {"enable_thinking": False}
    # An empty system message is the empty block the template writes anyway: it is lost.
    assert c.canonical([{"role": "system", "content": ""}, USER]).messages == (codec.UserMessage(content="hi"),)


def test_nemotron_reasoning_then_content_then_calls_with_a_new_line_after_each() -> None:
    text = "Look it up.\n</think>\nSure.\n" + call(s="True", n="3") + "\n" + call(b="False") + "\n"
    message = nemotron(text)
    assert (message.reasoning, message.content) == ("Look it up.", "Sure.")
    assert [c.arguments for c in message.tool_calls] == [{"s": "True", "n": 3}, {"b": False}]
    assert message.diagnostics == ()


def test_nemotron_content_that_starts_with_a_new_line_keeps_it_after_the_thought() -> None:
    # `"\n</think>\n" ~ content`: Qwen3.5's spelling `\n</think>\n\n` would take the content's newline.
    c = codec.load(NEMOTRON)
    messages = [USER, {"role": "assistant", "content": "\nanswer", "reasoning_content": "r"}]
    prompt = c.render(messages, add_generation_prompt=False)
    assert "<think>\nr\n</think>\n\nanswer<|im_end|>" in prompt
    assert c.parse_prompt(prompt).messages[1].content == "\nanswer"
    assert nemotron("r\n</think>\n\nanswer").content == "\nanswer"


def test_nemotron_truncates_history_thinking_and_leaves_the_new_line_after_it() -> None:
    messages = [
        USER,
        {"role": "assistant", "content": "a", "reasoning_content": "first"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "b", "reasoning_content": "second"},
    ]
    c = codec.load(NEMOTRON)
    prompt = c.render(messages, add_generation_prompt=False)
    assert "first" not in prompt and "<think></think>\na<|im_end|>" in prompt
    back = c.parse_prompt(prompt)
    assert [(m.reasoning, m.content) for m in back.messages[1::2]] == [(None, "\na"), ("second", "b")]
    assert back == c.canonical(messages, add_generation_prompt=False)
    kept = c.parse_prompt(c.render(messages, add_generation_prompt=False, truncate_history_thinking=False))
    assert kept.messages[1].reasoning == "first"
    assert kept.options == {"truncate_history_thinking": False}


def test_nemotron_lists_tools_as_qwen3_coder_does_with_enum_and_required_and_reads_them_back() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "description": "d",
            "parameters": {
                "type": "object",
                "properties": {"u": {"type": "string", "enum": ["a", "b"]}},
                "required": ["u"],
            },
        },
    }
    c = codec.load(NEMOTRON)
    prompt = c.render([{"role": "system", "content": "S"}, USER], tools=[tool])
    assert prompt.startswith("<|im_start|>system\nS\n\n# Tools\n\n")
    assert '<enum>["a", "b"]</enum>\n</parameter>\n<required>["u"]</required>\n</parameters>' in prompt
    conversation = c.parse_prompt(prompt)
    assert list(conversation.tools) == [tool] and conversation.messages[0].content == "S"


def test_nemotron_values_are_written_raw_or_as_json_and_typed_back_by_the_schema() -> None:
    c = codec.load(NEMOTRON)
    calls = [{"id": "x", "type": "function", "function": {"name": "f", "arguments": {"s": "007", "n": 3, "b": True}}}]
    prompt = c.render([USER, {"role": "assistant", "content": "", "tool_calls": calls}], tools=TOOLS)
    assert "<parameter=s>\n007\n</parameter>\n<parameter=n>\n3\n</parameter>\n" in prompt
    assert "<parameter=b>\nTrue\n</parameter>" in prompt
    back = c.parse_prompt(prompt).messages[1]
    assert back.tool_calls[0].arguments == {"s": "007", "n": 3, "b": True}
    assert back.content is None  # the new line after `</tool_call>` is the template's, not content


def test_nemotron_known_mistakes_missing_closers_are_repaired() -> None:
    no_parameter_close = "</think>\n<tool_call>\n<function=f>\n<parameter=s>\nx\n<parameter=n>\n2\n"
    no_parameter_close += "</function>\n</tool_call>\n"
    assert nemotron(no_parameter_close).tool_calls[0].arguments == {"s": "x", "n": 2}
    no_function_close = "</think>\n<tool_call>\n<function=f>\n<parameter=s>\nx\n</parameter>\n</tool_call>\n"
    message = nemotron(no_function_close)
    assert message.tool_calls[0].arguments == {"s": "x"}
    assert "missing_marker" in [d.code for d in message.diagnostics]


def test_nemotron_a_call_inside_an_unclosed_thought_is_a_call() -> None:
    message = nemotron("I will call.\n" + call(s="x") + "\n")
    assert message.reasoning == "I will call."
    assert [c.name for c in message.tool_calls] == ["f"]
    assert "malformed" in [d.code for d in message.diagnostics]


def test_nemotron_a_cut_off_call_is_never_a_call_to_run() -> None:
    head = "</think>\n<tool_call>\n<function=f>\n"
    for cut in (head + "<parameter=s>\nx", head + "</function>\n"):
        message = nemotron(cut)
        assert message.tool_calls == () and message.finish_reason == "length"


def test_nemotron_ids_load_it_and_its_template_is_told_from_qwen3_5() -> None:
    assert find("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16").name == NEMOTRON
    assert find("unsloth/Nemotron-3-Nano-30B-A3B-GGUF").name == NEMOTRON
    assert codec.detect("{# edited #}" + read_text("templates", "nemotron_3_nano.jinja")).format == NEMOTRON
    assert codec.detect("{# edited #}" + read_text("templates", "qwen3_5.jinja")).format == FMT
