"""gpt-oss's quirks, one per test: the harmony headers (the recipient before or after the
channel), what the template keeps of a conversation (one call per message, reasoning only
where it precedes a call, results as JSON under the last call's name, tools as TypeScript),
and what the models write wrong (the mistakes vLLM's, llama.cpp's and Ollama's harmony parsers
were fixed for)."""

from __future__ import annotations

from typing import Any

import pytest

import codec
from codec._resources import read_text
from support.parsing import fold, ids

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
NOW = "2026-11-30"
START = "<|start|>assistant"
TEMPLATE_CALL = ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>'
HARMONY_CALL = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>'


def _parse(text: str, **options: Any) -> codec.AssistantMessage:
    return codec.load("gpt-oss").parse(text, tools=TOOLS, id_factory=ids, **options)


def _calls(reply: codec.AssistantMessage) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in reply.tool_calls]


def test_the_recipient_before_or_after_the_channel_names_the_same_call() -> None:
    for text in (TEMPLATE_CALL, HARMONY_CALL):
        reply = _parse(text, strict=True)
        assert _calls(reply) == [("get_weather", {"city": "Paris"})], text
        assert reply.finish_reason == "tool_calls"


def test_analysis_is_reasoning_final_is_content_and_a_preamble_is_content() -> None:
    text = (
        "<|channel|>analysis<|message|>Think.<|end|>"
        + START
        + "<|channel|>commentary<|message|>Checking.<|end|>"
        + START
        + TEMPLATE_CALL
    )
    reply = _parse(text, strict=True)
    assert (reply.reasoning, reply.content, _calls(reply)) == (
        "Think.",
        "Checking.",
        [("get_weather", {"city": "Paris"})],
    )
    answer = _parse("<|channel|>analysis<|message|>Hm.<|end|>" + START + "<|channel|>final<|message|>Hi.<|return|>")
    assert (answer.reasoning, answer.content, answer.finish_reason) == ("Hm.", "Hi.", "stop")


def test_a_call_streams_as_a_whole_parse_whichever_layout() -> None:
    for text in ("<|channel|>analysis<|message|>x<|end|>" + START + TEMPLATE_CALL, HARMONY_CALL):
        whole = _parse(text)
        for size in (1, 3, 7):
            parser = codec.load("gpt-oss").stream(tools=TOOLS, id_factory=ids)
            events = [event for i in range(0, len(text), size) for event in parser.feed(text[i : i + size])]
            events += parser.close()
            assert parser.message == whole
            assert fold(events) == whole.to_openai()


def test_a_missing_call_closer_is_a_call_only_when_the_model_stopped() -> None:
    """A server that strips the stop <|call|> leaves the call without its closer: only the
    engine's finish reason says whether the model ended it."""
    text = TEMPLATE_CALL.removesuffix("<|call|>")
    assert _parse(text).tool_calls == () and _parse(text).truncated_call is not None
    stopped = _parse(text, finish_reason="stop")
    assert _calls(stopped) == [("get_weather", {"city": "Paris"})]
    assert "missing_marker" in [d.code for d in stopped.diagnostics]


def test_the_closer_inside_an_open_value_leaves_the_call_unfinished() -> None:
    """<|call|> is the closer and a stop token: written inside a string, generation ended there."""
    reply = _parse(' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Par<|call|>')
    assert reply.tool_calls == () and reply.finish_reason == "length"
    assert reply.truncated_call is not None and reply.truncated_call.arguments == {"city": "Par"}


def test_another_opener_inside_a_call_goes_back_to_the_header_that_named_it() -> None:
    text = ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Par'
    reply = _parse(text + '<|channel|>commentary json<|message|>{"city": "Rome"}<|call|>')
    assert _calls(reply) == [("get_weather", {"city": "Rome"})]
    assert [call.arguments for call in reply.incomplete_calls] == [{"city": "Par"}]


def test_known_mistakes_are_read_leniently_and_refused_strictly() -> None:
    cases = {
        # no <|start|>assistant between two messages
        "<|channel|>analysis<|message|>Think.<|end|><|channel|>final<|message|>Hi.<|return|>": ("Think.", "Hi.", []),
        # the channel header written twice
        "<|channel|>final<|channel|>final<|message|>Hi.<|return|>": (None, "Hi.", []),
        # `to=NAME` without `functions.`
        '<|channel|>commentary to=get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>': (
            None,
            None,
            [("get_weather", {"city": "Paris"})],
        ),
        # double-encoded arguments
        ' to=functions.get_weather<|channel|>commentary json<|message|>"{\\"city\\": \\"Paris\\"}"<|call|>': (
            None,
            None,
            [("get_weather", {"city": "Paris"})],
        ),
    }
    for text, (reasoning, content, calls) in cases.items():
        reply = _parse(text)
        assert (reply.reasoning, reply.content, _calls(reply)) == (reasoning, content, calls), text
        assert reply.diagnostics, text
        with pytest.raises(codec.ParseError):
            _parse(text, strict=True)


def test_a_recipient_with_its_content_type_before_the_channel_is_the_template_s_call() -> None:
    text = ' to=functions.get_weather <|constrain|>json<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>'
    assert _calls(_parse(text, strict=True)) == [("get_weather", {"city": "Paris"})]


def test_a_name_cut_off_in_the_header_is_content() -> None:
    reply = _parse(" to=functions.get_wea")
    assert reply.tool_calls == () and reply.content == "get_wea" and reply.finish_reason == "length"


def test_the_template_writes_only_the_first_call_of_a_message() -> None:
    c = codec.load("gpt-oss")
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "get_weather", "arguments": {"city": city}}}
        for i, city in enumerate(("Paris", "Rome"))
    ]
    messages = [{"role": "user", "content": "Both?"}, {"role": "assistant", "tool_calls": calls}]
    prompt = c.render(messages, tools=TOOLS, now=NOW, add_generation_prompt=False)
    assert "Paris" in prompt and "Rome" not in prompt
    [kept] = c.canonical(messages, tools=TOOLS, now=NOW, add_generation_prompt=False).messages[1].tool_calls
    assert (kept.id, kept.arguments) == ("call_0", {"city": "Paris"})
    assert "first_call_only" in [loss.rule for loss in c.explain_losses(messages, tools=TOOLS, now=NOW)]


def test_reasoning_is_kept_only_before_a_call_not_yet_answered_and_in_a_last_reply() -> None:
    c = codec.load("gpt-oss")
    call = {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    thinking_call = {"role": "assistant", "reasoning_content": "Look it up.", "tool_calls": [call]}
    result = {"role": "tool", "tool_call_id": "a", "content": "sunny"}
    answer = {"role": "assistant", "content": "Sunny.", "reasoning_content": "Read it."}
    history = [{"role": "user", "content": "Weather?"}, thinking_call, result]
    pending = c.canonical(history, tools=TOOLS, now=NOW).messages
    assert pending[1].reasoning == "Look it up."
    answered = c.canonical([*history, answer], tools=TOOLS, now=NOW).messages
    assert (answered[1].reasoning, answered[3].reasoning) == (None, None)
    last = c.canonical([*history, answer], tools=TOOLS, now=NOW, add_generation_prompt=False).messages
    assert last[3].reasoning == "Read it."


def test_a_result_is_written_as_json_under_the_last_call_s_name() -> None:
    c = codec.load("gpt-oss")
    call = {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {}}}
    messages = [
        {"role": "user", "content": "?"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "zzz", "name": "other", "content": 'say "hi"'},
    ]
    prompt = c.render(messages, tools=TOOLS, now=NOW)
    assert '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"say \\"hi\\""<|end|>' in prompt
    result = c.parse_prompt(prompt).messages[-1]
    assert (result.content, result.name, result.tool_call_id) == ('say "hi"', "get_weather", "call_0")


def test_the_system_block_shows_the_options() -> None:
    c = codec.load("gpt-oss")
    options = {"reasoning_effort": "high", "model_identity": "You are a bot.", "builtin_tools": ["python", "browser"]}
    prompt = c.render([{"role": "user", "content": "Hi"}], now=NOW, **options)
    assert "Reasoning: high" in prompt and "## browser" in prompt and "## python" in prompt
    read = c.parse_prompt(prompt).options
    assert read == {
        "now": NOW,
        "reasoning_effort": "high",
        "model_identity": "You are a bot.",
        "builtin_tools": ["browser", "python"],
    }
    assert c.parse_prompt(c.render([{"role": "user", "content": "Hi"}], now=NOW)).options == {"now": NOW}


def test_tools_read_back_from_their_typescript() -> None:
    """``integer`` and ``number`` are both ``number``; an array's schema is its type text."""
    c = codec.load("gpt-oss")
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "description": "A tool.",
            "parameters": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "description": "How many"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                },
                "required": ["n"],
            },
        },
    }
    prompt = c.render([{"role": "user", "content": "Hi"}], tools=[tool], now=NOW)
    assert "n: number,\n" in prompt and "tags?: string[],\n" in prompt
    [read] = c.parse_prompt(prompt).tools
    properties = read["function"]["parameters"]["properties"]
    assert properties["n"] == {"type": "number", "description": "How many"}
    assert properties["tags"] == {"type": ["string[]"]}
    assert properties["mode"] == {"type": "string", "enum": ["a", "b"], "default": "a"}
    assert c.render([{"role": "user", "content": "Hi"}], tools=[read], now=NOW) == prompt


def test_a_tool_without_a_description_cannot_be_written() -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    with pytest.raises(codec.RenderError, match="description"):
        codec.load("gpt-oss").render([{"role": "user", "content": "Hi"}], tools=[tool], now=NOW)


def test_model_ids_load_and_the_template_is_detected() -> None:
    for model in ("openai/gpt-oss-120b", "openai/gpt-oss-20b"):
        assert codec.load(model).spec.name == "gpt-oss"
    text = read_text("templates", "gpt_oss.jinja")
    assert codec.detect(text).format == "gpt-oss"
    assert codec.detect(text.replace("Knowledge cutoff", "Cutoff")).how == "tokens"


def test_the_constraint_writes_the_template_s_call() -> None:
    grammar = codec.load("gpt-oss").constraint(tools=TOOLS, tool_choice="required")
    assert '" to=functions." "get_weather" <|channel|> "commentary " "json" <|message|>' in grammar
