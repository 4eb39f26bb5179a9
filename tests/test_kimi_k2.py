"""Kimi K2's quirks, one per test: the tool's name inside the call id, the ids and results the
template writes, and what its models write wrong (the mistakes vLLM's and SGLang's kimi_k2
parsers were fixed for)."""

from __future__ import annotations

import json
from typing import Any

import codec
from codec._resources import read_text
from support.parsing import fold, ids

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
SECTION, END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"


def _call(written_id: str, arguments: str = '{"city": "Paris"}') -> str:
    return f"<|tool_call_begin|>{written_id}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>"


def _parse(text: str, **options: Any) -> codec.AssistantMessage:
    return codec.load("kimi-k2").parse(text, id_factory=ids, **options)


def _calls(reply: codec.AssistantMessage) -> list[tuple[str | None, str, dict[str, Any]]]:
    return [(call.id, call.name, call.arguments) for call in reply.tool_calls]


def test_the_name_is_read_from_the_id_and_the_id_is_kept() -> None:
    reply = _parse(SECTION + _call("functions.get_weather:0") + END, tools=TOOLS, strict=True)
    assert _calls(reply) == [("functions.get_weather:0", "get_weather", {"city": "Paris"})]


def test_the_call_is_announced_once_its_id_is_complete_and_streams_like_a_whole_parse() -> None:
    text = "Checking." + SECTION + _call("functions.get_weather:0", '{"city": "Par\\u00eds", "days": 3}') + END
    whole = _parse(text, tools=TOOLS)
    for size in (1, 3, 8):
        parser = codec.load("kimi-k2").stream(tools=TOOLS, id_factory=ids)
        events = [event for i in range(0, len(text), size) for event in parser.feed(text[i : i + size])]
        events += parser.close()
        assert parser.message == whole
        assert fold(events) == whole.to_openai()


def test_names_with_dots_hyphens_and_colons_are_read_whole() -> None:
    text = SECTION + _call("functions.mcp.files-read:0", "{}") + _call("functions.ns:tool:12", "{}") + END
    assert [name for _, name, _ in _calls(_parse(text))] == ["mcp.files-read", "ns:tool"]


def test_an_id_without_the_functions_prefix_still_names_the_call() -> None:
    reply = _parse(SECTION + _call("get_weather:3") + END, tools=TOOLS)
    assert _calls(reply) == [("get_weather:3", "get_weather", {"city": "Paris"})]
    assert [d.code for d in reply.diagnostics] == ["malformed"]


def test_white_space_around_the_id_is_no_part_of_the_name() -> None:
    reply = _parse(SECTION + _call("\nfunctions.get_weather:0 ") + END, tools=TOOLS)
    assert _calls(reply) == [("functions.get_weather:0", "get_weather", {"city": "Paris"})]


def test_double_encoded_arguments_are_read_again() -> None:
    encoded = json.dumps(json.dumps({"city": "Paris", "days": 3}))
    reply = _parse(SECTION + _call("functions.get_weather:0", encoded) + END, tools=TOOLS)
    assert _calls(reply)[0][2] == {"city": "Paris", "days": 3}
    assert "arguments_repaired" in [d.code for d in reply.diagnostics]


def test_a_section_left_open_before_the_stop_is_closed() -> None:
    reply = _parse(SECTION + _call("functions.get_weather:0") + "<|im_end|>", tools=TOOLS)
    assert (len(reply.tool_calls), reply.finish_reason) == (1, "tool_calls")
    assert [d.code for d in reply.diagnostics] == ["missing_marker"]


def test_several_sections_and_a_call_after_the_close_are_all_calls() -> None:
    text = "A" + SECTION + _call("functions.get_weather:0") + END + "B" + SECTION + _call("functions.get_weather:1")
    text += END + _call("functions.get_weather:2") + END
    reply = _parse(text, tools=TOOLS, strict=True)
    assert [call.id for call in reply.tool_calls] == [f"functions.get_weather:{n}" for n in range(3)]
    assert reply.content == "AB"


def test_the_template_writes_calls_by_position_and_results_by_the_callers_id() -> None:
    c = codec.load("kimi-k2")
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "P"}}},
                {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "R"}}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_b", "name": "get_weather", "content": "sunny"},
    ]
    prompt = c.render(messages, add_generation_prompt=False)
    assert "functions.get_weather:1<|tool_call_argument_begin|>" in prompt
    assert "## Return of call_b\\nsunny" in prompt  # `\n` is the two characters the template writes
    read = c.parse_prompt(prompt)
    assert read == c.canonical(messages, add_generation_prompt=False)
    assistant, result = read.messages[1], read.messages[2]
    assert isinstance(assistant, codec.AssistantMessage) and isinstance(result, codec.ToolMessage)
    assert [call.id for call in assistant.tool_calls] == ["functions.get_weather:0", "functions.get_weather:1"]
    assert (result.tool_call_id, result.name, result.content) == ("call_b", None, "sunny")


def test_the_templates_own_system_message_reads_as_none() -> None:
    c = codec.load("kimi-k2")
    user = {"role": "user", "content": "Hi"}
    assert c.parse_prompt(c.render([user])).messages == (codec.UserMessage(content="Hi"),)
    own = [{"role": "system", "content": "You are a helpful assistant"}, user]
    assert c.render(own) == c.render([user])
    assert c.canonical(own).messages == (codec.UserMessage(content="Hi"),)
    twice = [own[0], own[0], user]  # a second system message: the first was the caller's
    assert len(c.parse_prompt(c.render(twice)).messages) == 3


def test_reasoning_is_lost_and_explained() -> None:
    c = codec.load("kimi-k2")
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello", "reasoning_content": "R"}]
    assert "reasoning_not_printed" in [loss.rule for loss in c.explain_losses(messages, add_generation_prompt=False)]


def test_the_bundled_template_is_told_by_its_hash_and_an_edited_copy_by_its_tokens() -> None:
    text = read_text("templates", "kimi_k2.jinja")
    assert codec.detect(text).how == "hash"
    found = codec.detect(text + "\n")
    assert (found.format, found.how) == ("kimi-k2", "tokens") and "<|tool_call_begin|>" in found.evidence
