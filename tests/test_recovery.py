"""What models actually write (issue: "Recover what models actually write"): each example the
issue names, with the outcome it now gets, whole and streamed a character at a time; and the
repair search's own rules (docs/architecture.md, "Lenient repair").

The corpus of real outputs is ``tests/test_corpus.py``; the corruption property per format is
``tests/test_corruption.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

import codec

F = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "integer"},
                    "n": {"type": "integer"},
                    "items": {"type": "array", "items": {"type": "object"}},
                },
            },
        },
    }
]
GLM_CONTENT = {"enable_thinking": False}  # glm-effort: the completion starts in content


def parse(fmt: str, text: str, **options: Any) -> codec.AssistantMessage:
    """The whole parse, checked against a streamed one fed a character at a time."""
    c = codec.load(fmt)
    whole = c.parse(text, tools=F, id_factory=str, **options)
    parser = c.stream(tools=F, id_factory=str, **options)
    for char in text:
        parser.feed(char)
    parser.close()
    streamed = parser.message
    where = [(d.code, d.offset) for d in whole.diagnostics]
    assert (streamed, [(d.code, d.offset) for d in streamed.diagnostics]) == (whole, where), (
        "chunking changed the parse"
    )
    return whole


def calls(message: codec.AssistantMessage) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in message.tool_calls]


def codes(message: codec.AssistantMessage) -> list[str]:
    return [d.code for d in message.diagnostics]


@pytest.mark.parametrize(
    "body",
    ['{a:"x",b:3}', "{a:'x',b:3}", '{"a":"x","b":3}', "{a:x,b:3}", "{a:x, b:3,}"],
    ids=["json-quotes", "single-quotes", "json-keys", "bare-value", "trailing-comma"],
)
def test_gemma_values_in_other_quote_styles(body: str) -> None:
    reply = parse("gemma4", f"<|tool_call>call:f{body}<tool_call|>Done.")
    assert calls(reply) == [("f", {"a": "x", "b": 3})]
    assert reply.content == "Done."
    assert "malformed" in codes(reply)


def test_gemma_final_string_left_unclosed_is_a_cut_off_call_keeping_its_text() -> None:
    reply = parse("gemma4", '<|tool_call>call:f{a:"x')
    assert reply.tool_calls == ()
    assert reply.truncated_call is not None and reply.truncated_call.arguments == {"a": "x"}


def test_gemma_quote_token_used_for_inner_quotes() -> None:
    reply = parse("gemma4", '<|tool_call>call:f{a:<|"|>say <|"|>hi<|"|> now<|"|>,b:2}<tool_call|>')
    assert calls(reply) == [("f", {"a": 'say "hi" now', "b": 2})]  # the quote token stands in for "
    assert codes(reply) == ["marker_as_text", "marker_as_text"]


def test_gemma_bare_string_with_a_comma_runs_to_the_next_key() -> None:
    reply = parse("gemma4", "<|tool_call>call:f{a:Paris, France,b:5}<tool_call|>")
    assert calls(reply) == [("f", {"a": "Paris, France", "b": 5})]


SOLAR_CALL = (
    "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>f<|tool_call:args|>{}<|tool_call:end|><|calls|>"
)


@pytest.mark.parametrize(
    "arguments", ["{'a': 'x', 'b': 3}", '{"a": "x", "b": 3,}', '{\'a\': "x", "b": 3}', '{"a": "x", b: 3}']
)
def test_solar_arguments_that_are_not_quite_json(arguments: str) -> None:
    reply = parse("solar-open", SOLAR_CALL.replace("{}", arguments))
    assert calls(reply) == [("f", {"a": "x", "b": 3})]
    assert reply.content is None
    assert "arguments_repaired" in codes(reply)


def test_solar_answer_followed_by_a_tool_calls_message() -> None:
    reply = parse(
        "solar-open", "<|content|>Checking.<|end|><|begin|>assistant" + SOLAR_CALL.replace("{}", '{"a": "x"}')
    )
    assert reply.content == "Checking."
    assert calls(reply) == [("f", {"a": "x"})]
    assert codes(reply) == []


def test_solar_header_left_out_after_reasoning() -> None:
    reply = parse("solar-open", "<|think|>R<|end|><|content|>Hi")
    assert (reply.reasoning, reply.content) == ("R", "Hi")
    assert codes(reply) == ["missing_marker"]


def test_solar_think_reopened_after_the_low_effort_prompt() -> None:
    reply = parse("solar-open", "<|think|>R<|end|><|begin|>assistant<|content|>Hi<|end|>", reasoning_effort="low")
    assert (reply.reasoning, reply.content) == ("R", "Hi")


def test_a_call_opener_inside_a_glm_value_ends_the_call_unfinished() -> None:
    """A value that seems to quote ``<tool_call>``: a call's opener inside a call always ends it
    (issue 21: the model may have cut the call and begun another), so ``f`` is kept apart,
    unfinished, and the call the opener begins is read as written; the rest is content. The
    reply's ``finish_reason`` is ``length``: nothing in it is run as it is."""
    text = (
        "<tool_call>f<arg_key>a</arg_key><arg_value>Use <tool_call>x</tool_call> here</arg_value>"
        "<arg_key>b</arg_key><arg_value>2</arg_value></tool_call>"
    )
    reply = parse("glm-effort", text, **GLM_CONTENT)
    assert calls(reply) == [("x", {})]
    assert [call.arguments for call in reply.incomplete_calls] == [{"a": "Use "}]
    assert reply.content == " here</arg_value><arg_key>b</arg_key><arg_value>2</arg_value></tool_call>"
    assert codes(reply)[0] == "unfinished_call" and reply.finish_reason == "length"


def test_glm_value_quoting_its_own_close_marker() -> None:
    text = "<tool_call>f<arg_key>a</arg_key><arg_value>use </arg_value> in docs</arg_value></tool_call>"
    reply = parse("glm-effort", text, **GLM_CONTENT)
    assert calls(reply) == [("f", {"a": "use </arg_value> in docs"})]


def test_glm_missing_value_opener() -> None:
    text = "<tool_call>f<arg_key>a</arg_key>how many days</arg_value></tool_call>"
    reply = parse("glm-effort", text, **GLM_CONTENT)
    assert calls(reply) == [("f", {"a": "how many days"})]
    assert codes(reply) == ["missing_marker"]


@pytest.mark.parametrize(
    ("value", "typed"),
    [('"42"', 42), ('\\"42\\"', 42), ('[{\\"id\\": \\"1\\"}]', [{"id": "1"}]), ("[{'id': '1'},]", [{"id": "1"}])],
)
def test_glm_values_typed_by_the_schema(value: str, typed: Any) -> None:
    key = "b" if isinstance(typed, int) else "items"
    text = f"<tool_call>f<arg_key>{key}</arg_key><arg_value>{value}</arg_value></tool_call>"
    assert calls(parse("glm-effort", text, **GLM_CONTENT)) == [("f", {key: typed})]


def test_glm_string_parameter_keeps_its_text_as_written() -> None:
    text = '<tool_call>f<arg_key>a</arg_key><arg_value>"42"</arg_value></tool_call>'
    assert calls(parse("glm-effort", text, **GLM_CONTENT)) == [("f", {"a": '"42"'})]


def test_glm_45_newlines_between_markers_are_layout() -> None:
    call = "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>{v}</arg_value>\n</tool_call>\n"
    reply = parse("glm-effort", "Hi\n" + call.format(v="x") + call.format(v="y") + "</tool_call>", **GLM_CONTENT)
    assert reply.content == "Hi\n"
    assert calls(reply) == [("f", {"a": "x"}), ("f", {"a": "y"})]
    assert "stray_marker" in codes(reply), "the duplicated close is dropped, and said so"


def test_glm_think_opened_by_the_model_after_leading_white_space() -> None:
    reply = parse("glm-effort", "\n<think>R</think>Hi", regular=True)
    assert (reply.reasoning, reply.content) == ("R", "Hi")


def test_gemma_channel_without_its_name_and_after_content() -> None:
    reply = parse("gemma4", "Before\n<|channel>R<channel|>\nAfter", enable_thinking=True)
    assert (reply.reasoning, reply.content) == ("R", "Before\n\nAfter")


def test_gemma_tool_names_with_colons() -> None:
    reply = parse("gemma4", "<|tool_call>call:mcp.calendar:list_events{limit:5}<tool_call|>")
    assert calls(reply) == [("mcp.calendar:list_events", {"limit": 5})]


def test_a_stray_marker_amid_content_stays_text_between_structure_it_is_dropped() -> None:
    amid = parse("gemma4", "Use <tool_call|> to end.")
    assert amid.content == "Use <tool_call|> to end."
    between = parse("gemma4", "<|tool_call>call:f{b:1}<tool_call|><tool_call|>")
    assert between.content is None and codes(between) == ["stray_marker"]
    assert between.diagnostics[0].offset == len("<|tool_call>call:f{b:1}<tool_call|>")
