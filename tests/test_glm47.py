"""GLM-4.7's quirks, one per test: GLM-4.5's tokens without its new lines, a bare ``</think>``
for a turn without reasoning, a generation prompt that opens (or, thinking off, closes) the
thought, ``clear_thinking``, and the model's known mistakes."""

from __future__ import annotations

from typing import Any

import codec
from codec.constrain import constraint

C = codec.load("glm-4-7")
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "filters": {
                        "type": "object",
                        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
                    },
                },
            },
        },
    }
]
CALL = (
    "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
    "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>"
)


def test_a_call_written_without_new_lines_reads_strictly_after_the_prompts_think() -> None:
    reply = C.parse("R</think>Hello" + CALL, tools=TOOLS, strict=True)
    assert (reply.reasoning, reply.content) == ("R", "Hello")
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("get_weather", {"city": "Paris", "days": 3})]


def test_a_turn_without_reasoning_is_a_bare_think_close_and_blank_reasoning_an_empty_block() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "assistant", "content": "c", "reasoning_content": "  "},
    ]
    prompt = C.render(messages, add_generation_prompt=False)
    assert prompt.endswith("<|user|>a<|assistant|></think>b<|assistant|><think></think>c")
    conversation = C.parse_prompt(prompt)
    assert [m.reasoning for m in conversation.messages[1:]] == [None, " "]
    assert conversation == C.canonical(messages, add_generation_prompt=False)


def test_thinking_off_closes_the_thought_in_the_generation_prompt_and_writes_no_nothink() -> None:
    messages = [{"role": "user", "content": "hi"}]
    prompt = C.render(messages, enable_thinking=False)
    assert prompt.endswith("<|user|>hi<|assistant|></think>")
    conversation = C.parse_prompt(prompt)
    assert conversation.options == {"enable_thinking": False} and conversation.add_generation_prompt
    reply = C.parse("Hello", enable_thinking=False)
    assert (reply.reasoning, reply.content) == (None, "Hello")


def test_an_empty_last_turn_is_the_thinking_off_generation_prompt() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}]
    conversation = C.canonical(messages, add_generation_prompt=False)
    assert conversation.add_generation_prompt and conversation.options == {"enable_thinking": False}
    assert C.parse_prompt(C.render(messages, add_generation_prompt=False)) == conversation


def test_clear_thinking_false_keeps_earlier_reasoning_and_reads_back_as_the_option() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b", "reasoning_content": "kept"},
        {"role": "user", "content": "c"},
    ]
    assert "<think></think>" not in C.render(messages)
    assert "</think>b" in C.render(messages) and "<think>kept</think>b" not in C.render(messages)
    prompt = C.render(messages, clear_thinking=False)
    assert "<|assistant|><think>kept</think>b" in prompt
    conversation = C.parse_prompt(prompt)
    assert conversation.options == {"clear_thinking": False} and conversation.messages[1].reasoning == "kept"
    assert conversation == C.canonical(messages, clear_thinking=False)
    # With no earlier reasoning to show, the option leaves no trace.
    assert C.canonical(messages[:1], clear_thinking=False).options == {}


def test_new_lines_at_the_edges_of_user_text_and_tool_results_are_the_callers() -> None:
    messages = [
        {"role": "user", "content": "\nhi\n"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "x", "type": "function", "function": {"name": "get_weather", "arguments": {}}}],
        },
        {"role": "tool", "tool_call_id": "x", "content": "\nsunny\n"},
    ]
    conversation = C.parse_prompt(C.render(messages, tools=TOOLS))
    assert conversation.messages[0].content == "\nhi\n" and conversation.messages[2].content == "\nsunny\n"


def test_a_missing_value_close_keeps_both_arguments() -> None:
    reply = C.parse("</think>" + CALL.replace("Paris</arg_value>", "Paris"), tools=TOOLS)
    assert [c.arguments for c in reply.tool_calls] == [{"city": "Paris", "days": 3}]
    assert [d.code for d in reply.diagnostics] == ["missing_marker"]


def test_an_object_written_as_a_json_string_is_decoded_once() -> None:
    value = '"{\\"tags\\": [\\"wifi\\"]}"'
    text = f"</think><tool_call>get_weather<arg_key>filters</arg_key><arg_value>{value}</arg_value></tool_call>"
    reply = C.parse(text, tools=TOOLS)
    assert [c.arguments for c in reply.tool_calls] == [{"filters": {"tags": ["wifi"]}}]
    assert [d.code for d in reply.diagnostics] == ["value_repaired"]


def test_a_call_cut_off_is_never_a_call_to_run() -> None:
    reply = C.parse("</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Par", tools=TOOLS)
    assert reply.tool_calls == () and reply.finish_reason == "length"
    assert reply.truncated_call is not None and reply.truncated_call.name == "get_weather"


def test_a_call_inside_the_unclosed_thought_is_a_call() -> None:
    reply = C.parse("I will look." + CALL, tools=TOOLS)
    assert reply.reasoning == "I will look." and len(reply.tool_calls) == 1


def test_the_constraint_writes_calls_without_glm45s_new_lines() -> None:
    [call] = [line for line in constraint(C, tools=TOOLS).splitlines() if line.startswith("call_")]
    assert '<tool_call> "get_weather" (<arg_key> ' in call and '"\\n"' not in call
    [call_45] = [
        line for line in constraint(codec.load("glm-4-5"), tools=TOOLS).splitlines() if line.startswith("call_")
    ]
    assert '<tool_call> "get_weather" "\\n" (<arg_key> ' in call_45
