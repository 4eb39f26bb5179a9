"""Llama 3's quirks, one per test: the call written as a bare JSON object with no marker before
it, how the template writes tools, results and dates, what it refuses, and what its models write
wrong (the cases vLLM's llama3_json parser and llama.cpp's Llama 3.x parser handle)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import codec
from codec._resources import read_text
from codec.formats._demo_scenario import HISTORY, one_call_each
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
EOT, EOM, TAG = "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"
CALL = '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}'
USER = {"role": "user", "content": "Weather in Paris?"}


def _llama() -> codec.Codec:
    return codec.load("llama-3")


def _parse(text: str, **options: Any) -> codec.AssistantMessage:
    return _llama().parse(text, tools=TOOLS, id_factory=ids, **options)


def _calls(reply: codec.AssistantMessage) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in reply.tool_calls]


def _call_message(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    listed = [
        {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}} for i, (n, a) in enumerate(calls)
    ]
    return {"role": "assistant", "tool_calls": listed}


def test_a_bare_object_is_a_call_with_or_without_the_turns_end() -> None:
    for text in (CALL, CALL + EOT):
        reply = _parse(text, strict=True)
        assert _calls(reply) == [("get_weather", {"city": "Paris", "days": 3})]
        assert reply.finish_reason == "tool_calls" and reply.content is None


def test_json_that_is_not_a_call_stays_content() -> None:
    for text in ('{"name": "Paris", "country": "France"}', '{"parameters": {}}', '{"name": "f"}', "[1, 2]", "{}"):
        reply = _parse(text + EOT, strict=True)
        assert reply.tool_calls == () and reply.content == text, text


def test_a_call_after_text_is_text() -> None:
    """The template writes a call as the whole reply: an object after prose is prose (vLLM reads
    it as a call; tests/corpus/misses.json)."""
    reply = _parse("Here you go: " + CALL + EOT, strict=True)
    assert reply.tool_calls == () and reply.content == "Here you go: " + CALL


def test_the_call_streams_its_name_before_its_arguments_and_folds_like_a_whole_parse() -> None:
    text = '{"name": "get_weather", "parameters": {"city": "Par\\u00eds", "days": 3}}' + EOT
    whole = _parse(text)
    for size in (1, 2, 5):
        parser = _llama().stream(tools=TOOLS, id_factory=ids)
        events = [event for i in range(0, len(text), size) for event in parser.feed(text[i : i + size])]
        events += parser.close()
        assert parser.message == whole
        assert fold(events) == whole.to_openai()
    parser = _llama().stream(tools=TOOLS, id_factory=ids)
    started = parser.feed('{"name": "get_weather", "parameters": {"city": "Pa')
    assert [type(event).__name__ for event in started][:1] == ["ToolCallStart"]


def test_a_call_cut_inside_its_object_is_never_a_call_to_run() -> None:
    """The object's own ``}`` ends the call (engines leave ``<|eot_id|>`` out): cut anywhere
    before it, the reply holds no call; once its head (``"name": …, "parameters":``) is whole,
    it is the cut-off call (before that, the text is content)."""
    name_end = CALL.index("{", 1) - 1
    for cut in range(1, len(CALL)):
        reply = _parse(CALL[:cut])
        assert reply.tool_calls == (), cut
        if cut > name_end:
            assert reply.finish_reason == "length" and reply.truncated_call is not None, cut
    assert _calls(_parse(CALL)) == [("get_weather", {"city": "Paris", "days": 3})]


def test_arguments_for_parameters_and_python_tag_and_eom_are_read() -> None:
    """Fine-tunes write ``"arguments"``; ``<|python_tag|>`` before the object and ``<|eom_id|>``
    after it are what the template writes with ``builtin_tools`` (ipython mode)."""
    for text in (CALL.replace("parameters", "arguments") + EOT, TAG + CALL + EOM, CALL + EOM):
        reply = _parse(text, strict=True)
        assert _calls(reply) == [("get_weather", {"city": "Paris", "days": 3})], text


def test_double_encoded_and_python_arguments_are_read_again() -> None:
    for arguments in (json.dumps(json.dumps({"city": "Paris", "days": 3})), "{'city': 'Paris', 'days': 3}"):
        reply = _parse('{"name": "get_weather", "parameters": ' + arguments + "}" + EOT)
        assert _calls(reply) == [("get_weather", {"city": "Paris", "days": 3})]
        assert "arguments_repaired" in [d.code for d in reply.diagnostics]


def test_semicolon_separated_calls_keep_the_first_and_the_rest_as_text() -> None:
    """vLLM splits ``{…}; {…}`` into two calls; codec keeps the second object as content, with a
    diagnostic (tests/corpus/misses.json): the template never writes two calls in one reply."""
    second = '{"name": "get_weather", "parameters": {"city": "Rome"}}'
    reply = _parse(CALL + "; " + second)
    assert _calls(reply) == [("get_weather", {"city": "Paris", "days": 3})]
    assert reply.content == "; " + second
    assert "invalid_arguments" in [d.code for d in reply.diagnostics]


def test_a_built_in_tool_call_is_content() -> None:
    reply = _parse(TAG + 'brave_search.call(query="weather")' + EOM, strict=True)
    assert reply.tool_calls == () and reply.content == 'brave_search.call(query="weather")'


def test_two_calls_in_one_message_are_refused_as_the_template_refuses_them() -> None:
    message = _call_message(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"}))
    with pytest.raises(codec.RenderError, match="single tool-calls"):
        _llama().render([USER, message], tools=TOOLS)


def test_tools_need_a_message_after_the_system_message() -> None:
    with pytest.raises(codec.RenderError):
        _llama().render([{"role": "system", "content": "S"}], tools=TOOLS)


def test_a_tool_result_is_written_as_json_and_read_back() -> None:
    messages = [
        USER,
        _call_message(("get_weather", {"city": "Paris"})),
        {"role": "tool", "tool_call_id": "c0", "content": 'a "b"\n'},
    ]
    prompt = _llama().render(messages, tools=TOOLS)
    assert '<|start_header_id|>ipython<|end_header_id|>\n\n"a \\"b\\"\\n"<|eot_id|>' in prompt
    result = _llama().parse_prompt(prompt).messages[-1]
    assert isinstance(result, codec.ToolMessage) and result.content == 'a "b"\n' and result.tool_call_id == "call_0"


def test_the_tools_go_in_the_first_user_message_or_the_system_block() -> None:
    c = _llama()
    for options, block in (({}, "user"), ({"tools_in_user_message": False}, "system")):
        prompt = c.render([USER], tools=TOOLS, **options)
        header = f"<|start_header_id|>{block}<|end_header_id|>\n\n"
        assert prompt.index('"name": "get_weather"') > prompt.index(header)
        conversation = c.parse_prompt(prompt)
        assert conversation.tools == tuple(TOOLS) and conversation.options == options
        assert conversation.messages == (codec.UserMessage(content="Weather in Paris?"),)


def test_the_first_message_after_the_system_one_holds_the_tools_whatever_its_role() -> None:
    """An assistant message first is written in the user block with the tools: a user message."""
    canon = _llama().canonical([{"role": "assistant", "content": " Hi "}], tools=TOOLS)
    assert canon.messages == (codec.UserMessage(content="Hi"),)


def test_an_empty_tool_list_writes_the_tools_block_and_comes_back_as_custom_tools() -> None:
    c = _llama()
    prompt = c.render([USER], tools=[])
    assert "Environment: ipython" in prompt and prompt != c.render([USER])
    conversation = c.parse_prompt(prompt)
    assert conversation.tools == () and conversation.options == {"custom_tools": []}
    assert c.render(list(conversation.messages), **conversation.options) == prompt
    assert c.canonical([USER], tools=[]) == conversation


def test_the_date_and_the_built_in_tools_are_read_back_as_options() -> None:
    c = _llama()
    options = {"date_string": "1 Jan 2026", "builtin_tools": ["brave_search", "code_interpreter"]}
    messages = [USER, _call_message(("brave_search", {"query": "Paris"}))]
    prompt = c.render(messages, **options)
    assert '<|python_tag|>brave_search.call(query="Paris")<|eom_id|>' in prompt
    conversation = c.parse_prompt(prompt)
    assert conversation.options == {"date_string": "1 Jan 2026", "builtin_tools": ["brave_search"]}
    assert conversation == c.canonical(messages, **options)


def test_system_and_user_text_is_trimmed_and_a_call_message_loses_its_text() -> None:
    messages = [{"role": "system", "content": "  S  "}, {"role": "user", "content": " U "}]
    messages.append({**_call_message(("get_weather", {"city": "Paris"})), "content": "Let me look."})
    canon = _llama().canonical(messages, tools=TOOLS)
    assert [m.content for m in canon.messages] == ["S", "U", ""]
    assert canon.messages[2].tool_calls[0].id == "call_0"  # type: ignore[union-attr]


def test_the_demo_history_writes_one_call_per_message() -> None:
    split = one_call_each(HISTORY)
    assert [m["role"] for m in split] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert all(len(m.get("tool_calls", [None])) == 1 for m in split)


def test_detected_by_its_header_tokens_with_no_call_marker() -> None:
    edited = "{# edited #}" + read_text("templates", "llama3.jinja")
    found = codec.detect(edited)
    assert (found.format, found.how) == ("llama-3", "tokens")
    assert "<|start_header_id|>" in found.evidence


def test_too_many_calls_past_the_limit_are_text() -> None:
    text = CALL + EOT + CALL + EOT
    reply = _llama().parse(text, tools=TOOLS, limits=codec.Limits(max_calls=1))
    assert len(reply.tool_calls) == 1 and "too_many_calls" in [d.code for d in reply.diagnostics]
    assert "Paris" in (reply.content or "")


def test_eom_is_a_stop_token_as_well_as_eot() -> None:
    """``<|eom_id|>`` ends a turn whose call waits for its result (the template writes it after a
    built-in call, ``{{- "<|eom_id|>" }}``): a server must stop there too."""
    assert _llama().stop_tokens == (EOT, EOM)
    assert codec.load("llama-3-2").stop_tokens == (EOT, EOM)
    assert _parse(CALL + EOM).finish_reason == "tool_calls"
