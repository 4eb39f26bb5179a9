"""Granite 4.0's quirks, one per test: the default system text its template writes, how its
prompt holds tools and results, and what its models write wrong (the call syntax is Qwen3's,
so its reader is Qwen3's); then Granite 4.1's, whose template writes no default system text."""

from __future__ import annotations

import codec
from codec._resources import read_text
from codec.cli import roundtrip
from codec.formats.granite.prompt import DEFAULT_SYSTEM
from codec.strategies import RenderCase

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
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_no_system_message_renders_the_default_text_and_reads_back_as_none() -> None:
    c = codec.load("granite-4")
    prompt = c.render([USER])
    assert DEFAULT_SYSTEM in prompt
    assert [m.role for m in c.parse_prompt(prompt).messages] == ["user"]


def test_a_system_message_of_the_default_text_is_lost_but_kept_before_another_system_message() -> None:
    c = codec.load("granite-4")
    default = {"role": "system", "content": DEFAULT_SYSTEM}
    assert [m.role for m in c.canonical([default, USER]).messages] == ["user"]
    kept = c.canonical([default, {"role": "system", "content": ""}, USER]).messages
    assert [(m.role, m.content) for m in kept] == [
        ("system", DEFAULT_SYSTEM),
        ("system", ""),
        ("user", USER["content"]),
    ]


def test_text_parts_are_joined_by_new_lines_only_after_some_text() -> None:
    parts = [{"type": "text", "text": ""}, {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    message = codec.load("granite-4").canonical([{"role": "user", "content": parts}]).messages[0]
    assert message.content == "a\nb"


def test_tools_and_results_read_back_from_the_prompt() -> None:
    c = codec.load("granite-4")
    messages = [
        {"role": "system", "content": "Be brief."},
        USER,
        {"role": "assistant", "content": "Checking.", "tool_calls": [_call("x1")]},
        {"role": "tool", "tool_call_id": "x1", "content": "18 C"},
    ]
    read = c.parse_prompt(c.render(messages, tools=TOOLS, add_generation_prompt=True))
    assert read == c.canonical(messages, tools=TOOLS)
    assert read.tools[0]["function"]["name"] == "get_weather"
    assert read.messages[-1].tool_call_id == read.messages[-2].tool_calls[0].id == "call_0"


def test_available_tools_come_back_as_the_tools() -> None:
    c = codec.load("granite-4")
    prompt = c.render([USER], available_tools=TOOLS)
    assert c.parse_prompt(prompt).tools == c.canonical([USER], available_tools=TOOLS).tools
    assert c.canonical([USER], available_tools=TOOLS).tools[0]["function"]["name"] == "get_weather"


def test_the_new_line_before_a_call_is_the_templates_not_content() -> None:
    reply = codec.load("granite-4").parse("Checking.\n" + CALL + "<|end_of_text|>", tools=TOOLS)
    assert reply.content == "Checking."
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_double_encoded_arguments_are_decoded() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}\n</tool_call>'
    reply = codec.load("granite-4").parse(text, tools=TOOLS)
    assert reply.tool_calls[0].arguments == {"city": "Paris"}


def test_a_call_left_open_at_the_stop_token_is_still_a_call() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n<|end_of_text|>'
    reply = codec.load("granite-4").parse(text, tools=TOOLS)
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_granite_3s_call_list_and_a_list_in_one_block_stay_content() -> None:
    c = codec.load("granite-4")
    granite3 = '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    assert c.parse(granite3, tools=TOOLS).tool_calls == ()
    listed = '<tool_call>\n[{"name": "get_weather", "arguments": {"city": "Paris"}}]\n</tool_call>'
    reply = c.parse(listed, tools=TOOLS)
    assert reply.tool_calls == () and "get_weather" in (reply.content or "")


def test_a_granite_model_id_finds_the_format() -> None:
    assert codec.load("ibm-granite/granite-4.0-h-tiny").spec.name == "granite-4"
    assert codec.load("someone/granite-4.0-h-small-GGUF").spec.name == "granite-4"


def _call(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}


# Granite 4.1 (`granite-4-1`): Granite 4.0's template less its default system text.
def test_granite_4_1_writes_no_system_turn_without_system_text_or_tools() -> None:
    c = codec.load("granite-4-1")
    prompt = c.render([USER])
    assert prompt == "<|start_of_role|>user<|end_of_role|>Weather in Paris?<|end_of_text|>\n" + (
        "<|start_of_role|>assistant<|end_of_role|>"
    )
    assert DEFAULT_SYSTEM not in prompt and [m.role for m in c.parse_prompt(prompt).messages] == ["user"]
    # Granite 4.0's default text is plain system text here: it is written and read back.
    system = {"role": "system", "content": DEFAULT_SYSTEM}
    assert c.parse_prompt(c.render([system, USER])).messages[0].content == DEFAULT_SYSTEM
    assert c.canonical([system, USER]).messages[0].content == DEFAULT_SYSTEM


def test_granite_4_1_an_empty_first_system_message_is_lost_unless_an_empty_one_follows() -> None:
    c = codec.load("granite-4-1")
    empty = {"role": "system", "content": ""}
    assert [m.role for m in c.canonical([empty, USER]).messages] == ["user"]
    # The template skips the first system message and writes the second as a system turn.
    twice = c.render([empty, empty, USER])
    assert twice.startswith("<|start_of_role|>system<|end_of_role|><|end_of_text|>\n")
    assert [m.content for m in c.parse_prompt(twice).messages[:2]] == ["", ""]
    assert c.parse_prompt(twice) == c.canonical([empty, empty, USER])


def test_granite_4_1_tools_make_the_system_turn_and_calls_are_granite_4s() -> None:
    c = codec.load("granite-4-1")
    conversation = c.parse_prompt(c.render([USER], tools=TOOLS))
    assert list(conversation.tools) == TOOLS and [m.role for m in conversation.messages] == ["user"]
    message = c.parse("Checking.\n" + CALL, tools=TOOLS)
    assert (message.content, message.tool_calls[0].arguments) == ("Checking.", {"city": "Paris"})


def test_granite_4_1_an_empty_prompt_is_read_back_as_the_empty_system_message_it_came_from() -> None:
    # `codec roundtrip` takes the empty prompt of an empty system message alone as agreeing.
    c = codec.load("granite-4-1")
    case = RenderCase(messages=[{"role": "system", "content": ""}], tools=None, options={}, add_generation_prompt=False)
    report = roundtrip.Report("granite-4-1", 1)
    roundtrip._check(c, case, None, True, report)
    assert report.examples == 1 and not report.disagreements


def test_granite_4_1_ids_load_it_and_its_template_is_told_from_granite_4s() -> None:
    assert codec.load("ibm-granite/granite-4.1-8b").spec.name == "granite-4-1"
    assert codec.load("ibm-granite/granite-4.0-h-small").spec.name == "granite-4"
    for file, fmt in (("granite_4.jinja", "granite-4"), ("granite_4_1.jinja", "granite-4-1")):
        assert codec.detect("{# edited #}" + read_text("templates", file)).format == fmt
