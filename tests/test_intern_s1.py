"""Intern-S1's quirks, one per test: InternLM2's action block (two special tokens open it, the
object says "parameters"), the layout its template writes around it, the default system prompt
and enable_thinking, environment turns, images, and what its models write wrong (the call
object is Qwen3's, so its reader is Qwen3's)."""

from __future__ import annotations

import codec
from codec._resources import read_text
from codec.cli import roundtrip
from codec.formats.intern_s1.texts import default_system
from codec.models import MediaPart, TextPart
from codec.strategies import RenderCase
from support.parsing import ids

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
USER = {"role": "user", "content": "Weather in Paris?"}
CALL = '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n<|action_end|>'
THOUGHT = "\nLook it up.\n</think>\n"  # after the pre-opened <think>


def _call(call_id: str, city: str = "Paris") -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": {"city": city}}}


def test_the_call_is_the_action_block_after_the_thought_with_parameters() -> None:
    reply = codec.load("intern-s1").parse(THOUGHT + "Checking." + CALL, tools=TOOLS, id_factory=ids)
    assert (reply.reasoning, reply.content) == ("Look it up.", "Checking.")
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_an_opener_decoded_with_a_space_between_its_tokens_is_the_same_call() -> None:
    c = codec.load("intern-s1")
    spaced = THOUGHT + CALL.replace("<|action_start|><|plugin|>", "<|action_start|> <|plugin|>")
    assert c.parse(spaced, tools=TOOLS, id_factory=ids) == c.parse(THOUGHT + CALL, tools=TOOLS, id_factory=ids)
    assert not c.parse(spaced, tools=TOOLS).diagnostics


def test_double_encoded_arguments_are_read_leniently() -> None:
    text = THOUGHT + CALL.replace('{"city": "Paris"}', '"{\\"city\\": \\"Paris\\"}"')
    reply = codec.load("intern-s1").parse(text, tools=TOOLS)
    assert reply.tool_calls[0].arguments == {"city": "Paris"}
    assert [d.code for d in reply.diagnostics] == ["invalid_arguments", "arguments_repaired"]


def test_a_call_inside_the_pre_opened_thought_is_a_call() -> None:
    reply = codec.load("intern-s1").parse("\nI will look it up.\n" + CALL, tools=TOOLS)
    # The template writes nothing between text and a call: the new line before it is the model's.
    assert reply.reasoning == "I will look it up.\n" and [call.name for call in reply.tool_calls] == ["get_weather"]
    assert [d.code for d in reply.diagnostics] == ["malformed"]


def test_a_call_without_its_closer_is_not_finished_for_a_model_that_stopped() -> None:
    head = THOUGHT + CALL.removesuffix("\n<|action_end|>")
    c = codec.load("intern-s1")
    assert c.parse(head, tools=TOOLS, finish_reason="stop").tool_calls == ()
    assert len(c.parse(head + "\n", tools=TOOLS, finish_reason="stop").tool_calls) == 1


def test_the_default_system_prompt_reads_back_as_none_and_is_kept_only_with_thinking_off() -> None:
    c = codec.load("intern-s1")
    prompt = c.render([USER])
    assert default_system() in prompt and [m.role for m in c.parse_prompt(prompt).messages] == ["user"]
    default = {"role": "system", "content": default_system()}  # it holds <think>: a special token
    assert [m.role for m in c.canonical([default, USER]).messages] == ["user"]
    off = c.canonical([default, USER], enable_thinking=False)
    assert [m.role for m in off.messages] == ["system", "user"] and off.options == {"enable_thinking": False}
    assert c.parse_prompt(c.render([default, USER], enable_thinking=False, allow_special_tokens=True)) == off


def test_a_lone_empty_system_message_writes_nothing_and_the_roundtrip_accepts_it() -> None:
    c = codec.load("intern-s1")
    messages = [{"role": "system", "content": "\n"}]
    assert c.render(messages, add_generation_prompt=False) == ""
    assert c.canonical(messages, add_generation_prompt=False).messages == ()
    case = RenderCase(messages=messages, tools=None, options={}, add_generation_prompt=False)
    roundtrip._check(c, case, None, True, roundtrip.Report("intern-s1", requested=1))


def test_later_system_messages_are_not_written() -> None:
    messages = [{"role": "system", "content": "First."}, USER, {"role": "system", "content": "Later."}]
    assert "Later." not in codec.load("intern-s1").render(messages)
    assert [m.content for m in codec.load("intern-s1").canonical(messages).messages] == ["First.", USER["content"]]


def test_results_are_environment_turns_that_take_the_ids_of_the_calls_by_position() -> None:
    c = codec.load("intern-s1")
    messages = [
        USER,
        {"role": "assistant", "content": "Both.\n", "tool_calls": [_call("x1"), _call("x2", "Rome")]},
        {"role": "tool", "tool_call_id": "x2", "content": "Rome: 22 C"},
        {"role": "tool", "tool_call_id": "x1", "content": "Paris: 15 C"},
    ]
    prompt = c.render(messages, tools=TOOLS)
    assert prompt.count("<|im_start|>environment name=<|plugin|>\n") == 2
    read = c.parse_prompt(prompt)
    assert read == c.canonical(messages, tools=TOOLS)
    assert read.messages[1].content == "Both.\n"  # the new line before the first call is the content's
    assert [m.tool_call_id for m in read.messages[2:]] == ["call_0", "call_1"]


def test_images_are_placeholders_after_a_new_line_and_a_video_is_text() -> None:
    c = codec.load("intern-s1")
    parts = [{"type": "text", "text": "Look:"}, {"type": "image"}, {"type": "text", "text": ""}, {"type": "video"}]
    prompt = c.render([{"role": "user", "content": parts}])
    assert "<|im_start|>user\nLook:\n<IMG_CONTEXT>\n\n<video><|im_end|>" in prompt
    read = c.parse_prompt(prompt).messages[-1].content
    assert read == (TextPart(text="Look:"), MediaPart(type="image"), TextPart(text="\n<video>"))
    assert read == c.canonical([{"role": "user", "content": parts}]).messages[-1].content


def test_the_bundled_template_is_told_by_its_hash_and_an_edited_copy_by_its_tokens() -> None:
    text = read_text("templates", "intern_s1.jinja")
    assert codec.detect(text).how == "hash"
    found = codec.detect(text + "\n")
    assert (found.format, found.how) == ("intern-s1", "tokens") and "<|action_start|>" in found.evidence


def test_a_call_whose_closer_ends_the_output_is_finished_whole_and_streamed() -> None:
    """A server strips <|im_end|>: the output ends with <|action_end|>, a whole marker the scanner
    holds only because it may grow into its spelling with a new line (CALL_CLOSE__NL). It closes
    the call; it is no cut marker."""
    c = codec.load("intern-s1")
    text = THOUGHT + CALL
    whole = c.parse(text, tools=TOOLS, id_factory=ids)
    assert [call.name for call in whole.tool_calls] == ["get_weather"] and whole.truncated_call is None
    parser = c.stream(tools=TOOLS, id_factory=ids)
    for char in text:
        parser.feed(char)
    parser.close()
    assert parser.message == whole and not whole.diagnostics
