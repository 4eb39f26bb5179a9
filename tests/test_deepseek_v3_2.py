"""DeepSeek-V3.2's quirks, one per test: the thought the generation prompt opens (or pre-fills
empty, which a reply the template writes shortens to ``</think>``), every call of a turn in one
DSML block, values typed by the schema and by their ``string`` attribute, the header the
template writes only where one is pending, and what its models write wrong (the mistakes vLLM's
and SGLang's DeepSeek-V3.2 parsers were fixed for)."""

from __future__ import annotations

from typing import Any

import pytest

import codec
from codec._resources import read_text
from support.parsing import fold, ids

D = "\uff5cDSML\uff5c"  # the fullwidth bars of every DSML token
EOS = "<\uff5cend\u2581of\u2581sentence\uff5c>"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "detail": {"type": "boolean"},
                    "filters": {"type": "object"},
                },
            },
        },
    }
]


def _parameter(key: str, value: str, kind: str = "true") -> str:
    return f'<{D}parameter name="{key}" string="{kind}">{value}</{D}parameter>\n'


def _invoke(name: str = "get_weather", parameters: str = "") -> str:
    return f'<{D}invoke name="{name}">\n{parameters or _parameter("city", "Paris")}</{D}invoke>\n'


def _block(*invokes: str) -> str:
    return f"\n\n<{D}function_calls>\n" + "".join(invokes or (_invoke(),)) + f"</{D}function_calls>"


def _parse(text: str, **options: Any) -> codec.AssistantMessage:
    return codec.load("deepseek-v3-2").parse(text, tools=TOOLS, id_factory=ids, **options)


def _arguments(reply: codec.AssistantMessage) -> list[dict[str, Any]]:
    return [call.arguments for call in reply.tool_calls]


def _codes(reply: codec.AssistantMessage) -> list[str]:
    return [d.code for d in reply.diagnostics]


def test_thinking_opens_the_thought_and_off_pre_fills_it_empty() -> None:
    c = codec.load("deepseek-v3-2")
    user = [{"role": "user", "content": "Hi"}]
    assert c.render(user, thinking=True).endswith("<\uff5cAssistant\uff5c><think>")
    assert c.render(user).endswith("<\uff5cAssistant\uff5c><think></think>")
    reply = _parse("Paris, then.</think>Checking." + _block() + EOS, thinking=True, strict=True)
    assert (reply.reasoning, reply.content, _arguments(reply)) == ("Paris, then.", "Checking.", [{"city": "Paris"}])


def test_a_reply_the_template_writes_with_thinking_off_shortens_the_empty_thought() -> None:
    """The generation prompt pre-fills `<think></think>`; the same reply in the history reads
    `</think>answer`: a model's answer after the prompt is what follows it, parsed strictly."""
    c = codec.load("deepseek-v3-2")
    history = [{"role": "user", "content": "Hi"}]
    full = c.render([*history, {"role": "assistant", "content": "Hello."}], add_generation_prompt=False)
    assert full.endswith("<\uff5cAssistant\uff5c></think>Hello." + EOS)
    assert not full.startswith(c.render(history))
    assert c.spec.reply_thought_close == "THINK_CLOSE"
    assert _parse("Hello." + EOS, strict=True).content == "Hello."


def test_after_tool_results_the_prompt_writes_a_blank_line_not_a_header() -> None:
    c = codec.load("deepseek-v3-2")
    call = {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    history = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "sunny"},
    ]
    prompt = c.render(history, tools=TOOLS, thinking=True)
    assert prompt.endswith("<result>sunny</result>\n</function_results>\n\n<think>")
    reply = c.parse("It is sunny.</think>Sunny in Paris." + EOS, history=history, tools=TOOLS, thinking=True)
    assert (reply.reasoning, reply.content, reply.diagnostics) == ("It is sunny.", "Sunny in Paris.", ())
    parsed = c.parse_prompt(prompt)
    assert (parsed.add_generation_prompt, parsed.options) == (True, {"thinking": True})


def test_parallel_calls_share_one_block_and_stream_like_a_whole_parse() -> None:
    days = _parameter("city", "Rome") + _parameter("days", "3", "false")
    text = "Two.</think>" + _block(_invoke(), _invoke(parameters=days)) + EOS
    whole = _parse(text, thinking=True, strict=True)
    assert _arguments(whole) == [{"city": "Paris"}, {"city": "Rome", "days": 3}]
    for size in (1, 3, 8):
        parser = codec.load("deepseek-v3-2").stream(tools=TOOLS, id_factory=ids, thinking=True)
        events = [event for i in range(0, len(text), size) for event in parser.feed(text[i : i + size])]
        events += parser.close()
        assert parser.message == whole
        assert fold(events) == whole.to_openai()


@pytest.mark.parametrize(
    "layout",
    [
        # vLLM's and SGLang's tests: no new lines at all, and the peers' indented layout
        f'<{D}function_calls><{D}invoke name="get_weather"><{D}parameter name="city" string="true">Paris'
        f"</{D}parameter></{D}invoke></{D}function_calls>",
        f'\n\n        <{D}function_calls>\n            <{D}invoke name="get_weather">\n                '
        f'<{D}parameter name="city" string="true">Paris</{D}parameter>\n            </{D}invoke>\n'
        f"        </{D}function_calls>\n        ",
    ],
    ids=["compact", "indented"],
)
def test_layout_between_the_markers_is_not_content(layout: str) -> None:
    reply = _parse("Sure." + layout)
    # The white space before the block is the content's own (the template writes `\n\n` there).
    assert (str(reply.content).rstrip(), _arguments(reply)) == ("Sure.", [{"city": "Paris"}])


@pytest.mark.parametrize(
    ("key", "written", "kind", "value"),
    [
        ("days", "42", "true", "42"),  # the string "42": what the template writes for it (vLLM: 42)
        ("days", "42", "false", 42),
        ("city", "null", "false", None),  # JSON null, as the template writes None (vLLM: "null")
        ("filters", '{"k": [1]}', "true", '{"k": [1]}'),
        ("filters", '{"k": [1]}', "false", {"k": [1]}),
        ("detail", "True", "false", True),  # not JSON: read by the schema, Python's word
        ("filters", "{'k': [1],}", "false", {"k": [1]}),  # not JSON: Python's dict, read by the schema
        ("filters", "tags café, limit five", "false", "tags café, limit five"),  # SGLang: not JSON, kept
        ("days", "42", None, 42),  # no attribute: typed by the schema
    ],
    ids=[
        "true-integer",
        "false-integer",
        "null-for-string",
        "true-object",
        "false-object",
        "python-word",
        "python-dict",
        "prose-for-object",
        "no-attribute",
    ],
)
def test_a_value_is_read_as_its_attribute_says(key: str, written: str, kind: str | None, value: Any) -> None:
    if kind is None:
        parameter = f'<{D}parameter name="{key}">{written}</{D}parameter>\n'
    else:
        parameter = _parameter(key, written, kind)
    text = _block(_invoke(parameters=parameter)) + EOS
    for chunks in ([text], list(text)):
        parser = codec.load("deepseek-v3-2").stream(tools=TOOLS, id_factory=ids)
        events = [event for chunk in chunks for event in parser.feed(chunk)] + parser.close()
        assert _arguments(parser.message) == [{key: value}]
        assert fold(events) == parser.message.to_openai()


def test_a_value_the_template_writes_reads_back_whatever_its_schema() -> None:
    """A string for an integer parameter and None for a string one are written with the
    attribute that says so; the prompt and a completion give them back as they were."""
    c = codec.load("deepseek-v3-2")
    arguments = {"days": "3", "city": None}
    call = {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "", "tool_calls": [call]}]
    prompt = c.render(messages, tools=TOOLS, add_generation_prompt=False)
    assert 'name="days" string="true">3<' in prompt and 'name="city" string="false">null<' in prompt
    [reply] = [m for m in c.parse_prompt(prompt).messages if m.role == "assistant"]
    assert _arguments(reply) == [{"days": "3", "city": None}]
    completion = prompt[len(c.render(messages[:1], tools=TOOLS)) - len("<think></think>") :]
    assert _arguments(_parse(completion.split("</think>", 1)[1], strict=True)) == [{"days": "3", "city": None}]


@pytest.mark.parametrize(("kind", "value"), [("true", "42"), ("false", 42)], ids=["string-true", "string-false"])
def test_without_a_schema_the_attribute_says_whether_a_value_is_text(kind: str, value: Any) -> None:
    text = _block(_invoke("unknown", _parameter("count", "42", kind))) + EOS
    for chunks in ([text], list(text)):
        parser = codec.load("deepseek-v3-2").stream(id_factory=ids)
        events = [event for chunk in chunks for event in parser.feed(chunk)] + parser.close()
        assert _arguments(parser.message) == [{"count": value}]
        assert fold(events) == parser.message.to_openai()


def test_a_missing_parameter_close_is_inserted() -> None:
    text = f'<{D}parameter name="city" string="true">Paris\n' + _parameter("days", "3", "false")
    reply = _parse(_block(_invoke(parameters=text)) + EOS)
    assert _arguments(reply) == [{"city": "Paris", "days": 3}]
    assert _codes(reply) == ["missing_marker"]


@pytest.mark.parametrize(
    ("end", "finished"),
    [
        (_parameter("city", "Paris"), True),  # the line ended: only </invoke> is missing
        (_parameter("city", "Paris") + f"</{D}function_calls>", True),
        (_parameter("city", "Paris").rstrip("\n"), False),  # another argument may have followed
        (f'<{D}parameter name="city" string="true">Par', False),
    ],
    ids=["after-its-line", "block-closed-after-its-line", "right-after-the-close", "in-value"],
)
def test_a_call_without_its_invoke_close_is_finished_only_after_a_whole_argument_line(end: str, finished: bool) -> None:
    text = f'\n\n<{D}function_calls>\n<{D}invoke name="get_weather">\n' + end
    reply = _parse(text, finish_reason="stop")
    assert (len(reply.tool_calls), reply.truncated_call is not None) == (int(finished), not finished)


def test_a_block_the_output_ends_in_keeps_its_finished_calls() -> None:
    """SGLang's flush test: the model stopped before `</｜DSML｜function_calls>`."""
    reply = _parse(f"\n\n<{D}function_calls>\n" + _invoke() + _invoke(parameters=_parameter("city", "Rome")))
    assert (_arguments(reply), reply.finish_reason) == ([{"city": "Paris"}, {"city": "Rome"}], "tool_calls")
    assert "malformed" in _codes(reply)


@pytest.mark.parametrize("size", [1, 3, 0])
def test_a_call_cut_off_is_never_a_call_to_run(size: int) -> None:
    """SGLang's report: one complete call, then one cut by max_tokens; the first is kept, the
    second is the truncated call, and its streamed arguments never close as JSON."""
    text = "Check both." + _block(_invoke())[: -len(f"</{D}function_calls>")]
    text += f'<{D}invoke name="get_weather">\n<{D}parameter name="city" string="true">San Fr'
    chunks = [text] if size == 0 else [text[i : i + size] for i in range(0, len(text), size)]
    parser = codec.load("deepseek-v3-2").stream(tools=TOOLS, id_factory=ids)
    events = [event for chunk in chunks for event in parser.feed(chunk)] + parser.close()
    reply = parser.message
    assert (_arguments(reply), reply.finish_reason) == ([{"city": "Paris"}], "length")
    assert reply.truncated_call is not None and reply.truncated_call.arguments == {"city": "San Fr"}
    streamed = "".join(e.arguments for e in events if isinstance(e, codec.ToolCallDelta) and e.index == 1)
    assert streamed == '{"city": "San Fr'


def test_a_call_inside_the_unclosed_thought_is_a_call() -> None:
    reply = _parse("I will look it up." + _block() + EOS, thinking=True)
    assert (reply.reasoning, _arguments(reply)) == ("I will look it up.", [{"city": "Paris"}])
    assert "malformed" in _codes(reply)


def test_a_parameter_close_inside_a_value_followed_by_more_of_it_is_text() -> None:
    value = f"a </{D}parameter> b"
    reply = _parse(_block(_invoke(parameters=_parameter("city", value))) + EOS)
    assert _arguments(reply) == [{"city": value}]


def test_reasoning_is_written_only_after_the_last_user_message_with_thinking_on() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello.", "reasoning_content": "greet"},
        {"role": "user", "content": "Bye"},
        {"role": "assistant", "content": "Bye.", "reasoning_content": "farewell"},
    ]
    c = codec.load("deepseek-v3-2")
    for thinking, last in ((True, "farewell"), (False, None)):
        prompt = c.render(messages, add_generation_prompt=False, thinking=thinking)
        kept = c.parse_prompt(prompt).messages
        assert [getattr(m, "reasoning", None) for m in kept] == [None, None, None, last]
    rules = [loss.rule for loss in c.explain_losses(messages, add_generation_prompt=False, thinking=True)]
    assert rules == ["reasoning_in_headers_only"]


def test_a_developer_message_is_never_written_but_counts_as_a_user_turn() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello.", "reasoning_content": "greet"},
        {"role": "developer", "content": "Be terse."},
    ]
    c = codec.load("deepseek-v3-2")
    prompt = c.render(messages, add_generation_prompt=False, thinking=True)
    assert "Be terse." not in prompt and "greet" not in prompt
    assert c.parse_prompt(prompt) == c.canonical(messages, add_generation_prompt=False, thinking=True)


def test_system_messages_are_joined_first_and_an_opening_reply_runs_on_from_them() -> None:
    c = codec.load("deepseek-v3-2")
    messages = [
        {"role": "system", "content": "A."},
        {"role": "assistant", "content": "Hello."},
        {"role": "system", "content": "B."},
        {"role": "user", "content": "Hi"},
    ]
    prompt = c.render(messages)
    assert prompt.startswith("<\uff5cbegin\u2581of\u2581sentence\uff5c>A.\n\nB.Hello." + EOS)
    parsed = c.parse_prompt(prompt)
    assert [(m.role, m.content) for m in parsed.messages] == [("assistant", "A.\n\nB.Hello."), ("user", "Hi")]
    assert c.render(list(parsed.messages), **parsed.options) == prompt


def test_the_tools_block_reads_back_its_tools_and_the_system_text_before_it() -> None:
    c = codec.load("deepseek-v3-2")
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    parsed = c.parse_prompt(c.render(messages, tools=TOOLS))
    assert (parsed.messages[0].content, list(parsed.tools)) == ("Be brief.", TOOLS)


def test_the_edited_template_is_told_by_the_tokens_it_writes_from_pieces() -> None:
    text = read_text("templates", "deepseek_v3_2.jinja")
    assert f"<{D}invoke name=" not in text  # written as '<' + dsml_token + 'invoke name="'
    found = codec.detect("{# edited #}" + text)
    assert (found.format, found.how) == ("deepseek-v3-2", "tokens")
    assert f"<{D}invoke name=" in found.evidence


def test_model_ids_load_it() -> None:
    assert codec.load("deepseek-ai/DeepSeek-V3.2").name == "deepseek-v3-2"
    assert codec.load("someone/DeepSeek-V3.2-GGUF").name == "deepseek-v3-2"
    assert codec.load("deepseek-ai/DeepSeek-V3.1").name == "deepseek-v3-1"


def test_constraint_is_refused_for_want_of_a_call_syntax() -> None:
    with pytest.raises(codec.CodecError, match="no call syntax"):
        codec.load("deepseek-v3-2").constraint(tools=TOOLS)
