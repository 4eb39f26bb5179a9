"""Strict parsing: where, what was found, what was expected — and a parser that failed stays
failed. Lenient parsing: every repair is a diagnostic with its offset.

The tests for every format use its registry examples (``FormatSpec.examples``); the others
state one format's own deviations."""

from __future__ import annotations

import json

import pytest

import codec
from codec.events import ContentDelta, ReasoningDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from codec.registry import FORMATS
from support.parsing import TOOLS, ids


def strict_error(fmt: str, completion: str, **options: object) -> codec.ParseError:
    with pytest.raises(codec.ParseError) as raised:
        codec.load(fmt).parse(completion, tools=TOOLS, strict=True, id_factory=ids, **options)
    return raised.value


def test_error_names_position_found_and_expected() -> None:
    error = strict_error("glm", "Hmm.\nOk.</think>Hi<arg_value>x")
    assert (error.code, error.found) == ("unexpected_marker", "<arg_value>")
    assert (error.offset, error.line, error.column) == (len("Hmm.\nOk.</think>Hi"), 2, len("Ok.</think>Hi") + 1)
    assert "<tool_call>" in error.expected and "CONTENT" in error.expected
    assert error.partial is not None and (error.partial.reasoning, error.partial.content) == ("Hmm.\nOk.", "Hi")
    assert "line 2" in str(error) and "<arg_value>" in str(error)


def test_expected_is_computed_before_feeding() -> None:
    error = strict_error("solar-open", "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:args|>{}")
    assert error.found == "<|tool_call:args|>"
    assert "<|tool_call:name|>" in error.expected


@pytest.mark.parametrize(
    ("fmt", "completion", "code"),
    [
        ("glm", "</think><tool_call>get_weather<arg_key>city</arg_key>Paris</arg_value></tool_call>", "missing_marker"),
        ("glm", "Thinking<tool_call>get_weather</tool_call>", "missing_marker"),
        ("glm", "</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>P", "truncated"),
        ("gemma4", '<|tool_call>call:get_weather(city:<|"|>P<|"|>)<tool_call|>', "malformed"),
        (
            "solar-open",
            "<|tool_calls|><|tool_call:begin|>short<|tool_call:name|>f<|tool_call:args|>{}<|tool_call:end|>",
            "malformed",
        ),
        (
            "solar-open",
            "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather<|tool_call:args|>"
            '{"city": x}<|tool_call:end|>',
            "invalid_arguments",
        ),
    ],
)
def test_strict_stops_at_the_first_deviation(fmt: str, completion: str, code: str) -> None:
    assert strict_error(fmt, completion).code == code


@pytest.mark.parametrize("fmt", codec.formats())
def test_the_registry_examples_are_strictly_valid(fmt: str) -> None:
    examples = FORMATS[fmt].examples
    for completion in (
        examples.one_call,
        examples.two_calls,
        examples.typing_trap,
        examples.code_head + "print(1)" + examples.code_tail,
    ):
        reply = codec.load(fmt).parse(completion, tools=TOOLS, strict=True, id_factory=ids)
        assert reply.finish_reason == "tool_calls"


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_call_cut_off_is_truncated_and_kept_apart(fmt: str) -> None:
    """Strict: ``truncated`` at the end of the text. Lenient: the call is not in ``tool_calls``
    (invariant 7) but kept apart with what arrived of it, and the reply ended by length."""
    completion = FORMATS[fmt].examples.code_head + "print(1)"
    error = strict_error(fmt, completion)
    assert (error.code, error.offset) == ("truncated", len(completion))
    reply = codec.load(fmt).parse(completion, tools=TOOLS, id_factory=ids)
    assert reply.tool_calls == () and reply.finish_reason == "length"
    assert reply.truncated_call is not None
    assert (reply.truncated_call.name, reply.truncated_call.arguments) == ("run_code", {"code": "print(1)"})
    assert "truncated" in [diagnostic.code for diagnostic in reply.diagnostics]


def test_a_failed_parser_stays_failed() -> None:
    parser = codec.load("glm").stream(tools=TOOLS, strict=True)
    parser.feed("ok</think>")
    with pytest.raises(codec.ParseError) as first:
        parser.feed("<arg_key>")
    with pytest.raises(codec.ParseError) as again:
        parser.feed("more")
    assert again.value is first.value
    with pytest.raises(codec.ParseError):
        parser.close()


def test_a_closed_parser_refuses_more() -> None:
    parser = codec.load("glm").stream()
    parser.feed("</think>done")
    parser.close()
    with pytest.raises(codec.CodecError, match="closed"):
        parser.feed("x")


def test_lenient_diagnostics_carry_offsets() -> None:
    parser = codec.load("glm").stream(tools=TOOLS)
    parser.feed("</think><tool_call>get_weather<arg_key>city</arg_key>Paris</arg_value></tool_call>")
    parser.close()
    [diagnostic] = parser.diagnostics
    assert diagnostic.code == "missing_marker"
    assert diagnostic.offset == len("</think><tool_call>get_weather<arg_key>city</arg_key>")
    assert "<arg_value>" in diagnostic.message


def test_rejected_json_arguments_are_one_repair_where_the_json_breaks() -> None:
    """Repairs depend on the text, not on the chunks (invariant 8): the text after a complete
    JSON object is one ``invalid_arguments`` repair at its offset, however it arrives."""
    head = '<|tool_calls|><|tool_call:begin|>aaaaaaaaa1<|tool_call:name|>get_weather<|tool_call:args|>{"city": "Paris"}'
    completion = head + " trailing words<|tool_call:end|><|calls|>"
    for size in (len(completion), 3, 1):
        parser = codec.load("solar-open").stream(tools=TOOLS, id_factory=ids)
        for start in range(0, len(completion), size):
            parser.feed(completion[start : start + size])
        parser.close()
        assert parser.message.content == " trailing words"
        assert [(d.code, d.offset) for d in parser.diagnostics if d.code == "invalid_arguments"] == [
            ("invalid_arguments", len(head))
        ], size


def test_stray_text_between_arguments_loses_nothing() -> None:
    """Lenient parsing never drops text (invariant 5): the second argument is kept, as an
    argument or as content."""
    completion = (
        "</think><tool_call>get_weather<arg_key>days</arg_key><arg_value>2</arg_value>x"
        "<arg_key>city</arg_key><arg_value>Rome</arg_value></tool_call>"
    )
    reply = codec.load("glm").parse(completion, tools=TOOLS, id_factory=ids)
    kept = json.dumps(reply.to_openai())
    assert "city" in kept and "Rome" in kept


def test_unknown_option_is_refused_before_parsing() -> None:
    with pytest.raises(codec.RenderError, match="enable_thinking"):
        codec.load("gemma4").stream(not_an_option=True)


def test_ids_come_from_the_factory_or_are_unique() -> None:
    completion = "</think>" + "<tool_call>get_weather<arg_key>city</arg_key><arg_value>P</arg_value></tool_call>" * 2
    generated = codec.load("glm").parse(completion, tools=TOOLS)
    first, second = generated.tool_calls
    assert first.id != second.id and first.id.startswith("call_")
    fixed = codec.load("glm").parse(completion, tools=TOOLS, id_factory=lambda i: f"id{i}")
    assert [call.id for call in fixed.tool_calls] == ["id0", "id1"]


def test_openai_deltas() -> None:
    call = codec.ToolCall(id="c1", name="f", arguments={"a": 1})
    assert codec.openai_delta(ReasoningDelta("r")) == {"reasoning_content": "r"}
    assert codec.openai_delta(ContentDelta("c")) == {"content": "c"}
    assert codec.openai_delta(ToolCallStart(0, "c1", "f")) == {
        "tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}]
    }
    assert codec.openai_delta(ToolCallDelta(0, '{"a"')) == {
        "tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]
    }
    assert codec.openai_delta(ToolCallEnd(0, call)) == {}


def test_openai_stream_reassembles_to_the_message() -> None:
    """What a client does with the deltas: concatenate per field and per call index."""
    completion = (
        "Plan.</think>Looking.<tool_call>search<arg_key>query</arg_key><arg_value>café</arg_value>"
        '<arg_key>filters</arg_key><arg_value>{"limit": 2}</arg_value></tool_call>'
    )
    parser = codec.load("glm").stream(tools=TOOLS, id_factory=ids)
    deltas = [codec.openai_delta(e) for chunk in completion for e in parser.feed(chunk)]
    deltas += [codec.openai_delta(e) for e in parser.close()]
    content = "".join(d.get("content", "") for d in deltas)
    reasoning = "".join(d.get("reasoning_content", "") for d in deltas)
    arguments = "".join(c["function"]["arguments"] for d in deltas for c in d.get("tool_calls", []))
    assert (reasoning, content) == ("Plan.", "Looking.")
    assert json.loads(arguments) == {"query": "café", "filters": {"limit": 2}}
    assert arguments == parser.message.tool_calls[0].to_openai()["function"]["arguments"]
