"""Safe to execute, bounded, nothing lost (issue 9's examples, parse side): a cut-off call is
never a call to run, text survives every repair, limits end in clear outcomes, and the error
contract holds (lenient never raises; parse_prompt raises only ParseError; the CLI never prints
a traceback)."""

from __future__ import annotations

import contextlib
import cProfile
import gc
import io
import json
import pstats
import tracemalloc
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import codec
from codec._nesting import MAX_VALUE_DEPTH
from codec.cli import main
from codec.engine import lalr
from codec.events import ToolCallEnd
from codec.registry import FORMATS
from support.calls import call_id

FORMAT_NAMES = codec.formats()
BASH = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    }
]
NUMBERS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "description": "A tool.",  # gpt-oss's template writes no tool without one
            "parameters": {"type": "object", "properties": {"x": {"type": "number"}, "a": {}}},
        },
    }
]


def ids(index: int) -> str:
    return f"call_{index}"


def strict_json(text: str) -> Any:
    def refuse(word: str) -> Any:
        raise ValueError(word)

    return json.loads(text, parse_constant=refuse)


# 1. A call cut off by the end of output is never a call to run.


def test_a_cut_off_command_is_not_a_tool_call() -> None:
    completion = "</think><tool_call>bash<arg_key>command</arg_key><arg_value>rm -rf /tmp/fo"
    parser = codec.load("glm").stream(tools=BASH, id_factory=ids)
    events = parser.feed(completion) + parser.close()
    reply = parser.message
    assert reply.tool_calls == ()
    assert reply.finish_reason == "length"
    assert reply.truncated_call is not None
    assert reply.truncated_call.arguments == {"command": "rm -rf /tmp/fo"}  # kept, apart
    ends = [event for event in events if isinstance(event, ToolCallEnd)]
    assert [end.complete for end in ends] == [False]
    assert "truncated" in [d.code for d in reply.diagnostics]


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_every_format_keeps_a_cut_off_call_apart(name: str) -> None:
    examples = FORMATS[name].examples
    reply = codec.load(name).parse(examples.code_head + "print(1)", id_factory=ids)
    assert reply.tool_calls == () and reply.finish_reason == "length"
    assert reply.truncated_call is not None and reply.truncated_call.arguments == {"code": "print(1)"}
    assert reply.incomplete_calls == (reply.truncated_call,)
    finished = codec.load(name).parse(examples.code_head + "print(1)" + examples.code_tail, id_factory=ids)
    assert finished.finish_reason == "tool_calls" and finished.truncated_call is None


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_finish_reason_says_how_the_output_ended(name: str) -> None:
    examples = FORMATS[name].examples
    assert codec.load(name).parse(examples.one_call).finish_reason == "tool_calls"
    assert codec.load(name).parse(examples.code_head).finish_reason == "length"


def test_reasoning_cut_off_inside_its_block_is_length() -> None:
    reply = codec.load("glm").parse("Still weighing the options")
    assert reply.finish_reason == "length" and reply.reasoning == "Still weighing the options"
    assert codec.load("glm").parse("Done.</think>Hi.").finish_reason == "stop"


def test_diagnostics_are_on_the_result_but_outside_equality_and_the_wire() -> None:
    completion = "</think><tool_call>bash<arg_key>command</arg_key>ls</arg_value></tool_call>"
    reply = codec.load("glm").parse(completion, tools=BASH, id_factory=ids)
    assert [d.code for d in reply.diagnostics] == ["missing_marker"]
    assert reply.diagnostics[0].offset == completion.index("ls")
    assert reply == codec.AssistantMessage(tool_calls=reply.tool_calls)
    assert set(reply.to_openai()) == {"role", "content", "tool_calls"}


# 2. Text is never lost; the result does not depend on how the text was chunked.


@pytest.mark.parametrize(
    "completion, kept",
    [
        ("<|tool_call>call:get_weather{'city':'Paris'}<tool_call|> Done.", ["city", "Paris", "Done"]),
        ('<|tool_call>call:get_weather{<|"|>city', ["city"]),
        ("<|tool_call>call:f{a:1,a:[1,2", ["[1,2"]),
    ],
)
def test_gemma_keeps_text_it_cannot_place(completion: str, kept: list[str]) -> None:
    reply = codec.load("gemma4").parse(completion)
    placed = json.dumps(reply.to_openai()) + json.dumps(
        reply.truncated_call.to_openai() if reply.truncated_call else {}
    )
    for word in kept:
        assert word in placed, word


def test_a_call_name_with_a_space_keeps_its_space() -> None:
    completion = "<|tool_call>call:get weather{a:1}<tool_call|>"
    assert codec.load("gemma4").parse(completion).content == completion


SOLAR_AFTER_TEXT = (
    "\nLet me check.<|tool_calls|><|tool_call:begin|>abcdefghij<|tool_call:name|>bash"
    '<|tool_call:args|>{"command": "ls"}<|tool_call:end|><|calls|>'
)


@pytest.mark.parametrize(
    "chunks",
    [
        [SOLAR_AFTER_TEXT],
        ["\n", SOLAR_AFTER_TEXT[1:]],
        [SOLAR_AFTER_TEXT[i : i + 4] for i in range(0, len(SOLAR_AFTER_TEXT), 4)],
        list(SOLAR_AFTER_TEXT),
    ],
)
def test_text_before_the_header_reads_the_same_however_it_is_chunked(chunks: list[str]) -> None:
    parser = codec.load("solar-open").stream(tools=BASH)
    for chunk in chunks:
        parser.feed(chunk)
    parser.close()
    reply = parser.message
    assert reply.content == "Let me check."  # leading white space before the header is layout
    assert [call.arguments for call in reply.tool_calls] == [{"command": "ls"}]
    assert [d.code for d in reply.diagnostics] == ["missing_marker", "insertion_undone"]


# 3. Limits: deep nesting, huge arguments and many calls end in clear outcomes, in linear time.

DEEP = {
    "glm": ("</think><tool_call>f<arg_key>a</arg_key><arg_value>", "</arg_value></tool_call>"),
    "solar-open": (
        '<|tool_calls|><|tool_call:begin|>abcdefghij<|tool_call:name|>f<|tool_call:args|>{"a": ',
        "}<|tool_call:end|><|calls|>",
    ),
    "gemma4": ("<|tool_call>call:f{a:", "}<tool_call|>"),
}


def _deep(name: str, depth: int) -> str:
    head, tail = DEEP[name]
    return head + "[" * depth + "1" + "]" * depth + tail + "Done."


def _work(name: str, text: str) -> int:
    profile = cProfile.Profile()
    profile.runcall(codec.load(name).parse, text)
    return sum(stat[1] for stat in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_stops_at_the_limit_and_keeps_the_text(name: str) -> None:
    reply = codec.load(name).parse(_deep(name, 10_000))
    assert reply.tool_calls == ()
    assert reply.diagnostics[0].code == "too_deep"
    assert len(reply.incomplete_calls) == 1
    assert "Done." in (reply.content or "")
    assert reply.content is not None and reply.content.count("[") >= 10_000 - codec.Limits().max_depth - 1
    with pytest.raises(codec.ParseError) as raised:
        codec.load(name).parse(_deep(name, 10_000), strict=True)
    assert raised.value.code == "too_deep"


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_costs_linear_work(name: str) -> None:
    small, large = _work(name, _deep(name, 2_000)), _work(name, _deep(name, 20_000))
    assert large <= 10 * small * 1.5, (small, large)


def test_within_the_limit_nesting_is_parsed() -> None:
    reply = codec.load("gemma4").parse(_deep("gemma4", 20))
    assert reply.tool_calls[0].arguments["a"] == json.loads("[" * 20 + "1" + "]" * 20)


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_too_many_calls_are_kept_as_text(name: str) -> None:
    examples = FORMATS[name].examples
    completion = examples.two_calls
    reply = codec.load(name).parse(completion, limits=codec.Limits(max_calls=1))
    assert len(reply.tool_calls) == 1
    assert "too_many_calls" in [d.code for d in reply.diagnostics]
    assert "Rome" in (reply.content or "")
    with pytest.raises(codec.ParseError) as raised:
        codec.load(name).parse(completion, limits=codec.Limits(max_calls=1), strict=True)
    assert raised.value.code == "too_many_calls"


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_an_argument_past_the_size_limit_stops_its_call(name: str) -> None:
    examples = FORMATS[name].examples
    completion = examples.code_head + "x" * 5_000 + examples.code_tail + "After."
    parser = codec.load(name).stream(limits=codec.Limits(max_argument_chars=1_000))
    for start in range(0, len(completion), 64):
        parser.feed(completion[start : start + 64])
    parser.close()
    reply = parser.message
    assert reply.tool_calls == () and len(reply.incomplete_calls) == 1
    assert "too_large" in [d.code for d in reply.diagnostics]
    kept = len(reply.incomplete_calls[0].arguments["code"]) + (reply.content or "").count("x")
    assert kept == 5_000, "every character is in the stopped call or the content"


def test_limits_must_be_positive() -> None:
    with pytest.raises(codec.CodecError):
        codec.Limits(max_depth=0)


def test_nothing_is_retained_after_a_parse() -> None:
    text = _deep("gemma4", 50_000)
    codec.load("gemma4").parse(text)  # warm: grammar, caches
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    codec.load("gemma4").parse(text)
    gc.collect()
    retained = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert retained < 1_000_000, retained
    assert len(lalr._CONFIGS) <= lalr._TABLE_LIMIT


# 4. No RecursionError: models refuse values nested past what json.dumps survives.


def test_a_tool_call_nested_too_deep_is_a_validation_error_not_a_recursion_error() -> None:
    value: Any = 1
    for _ in range(3_000):
        value = [value]
    with pytest.raises(ValueError, match="nested deeper"):
        codec.ToolCall(name="f", arguments={"a": value})
    wire = {
        "role": "assistant",
        "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": '{"a": ' + "[" * 3_000 + "]" * 3_000 + "}"}}
        ],
    }
    with pytest.raises(codec.RenderError, match="nested deeper"):
        codec.load("glm").render([{"role": "user", "content": "x"}, wire])


@pytest.mark.parametrize(("fmt", "written"), [("gemma4", "a:1"), ("glm", "<arg_value>1</arg_value>")])
@pytest.mark.parametrize("depth", [MAX_VALUE_DEPTH, 300])
def test_a_prompt_whose_call_nests_past_the_value_limit_is_too_deep(fmt: str, written: str, depth: int) -> None:
    """The prompt fits the grammar (Gemma's parser stack allows about a thousand levels, GLM's
    values are text), but the call it holds is deeper than a message may be: ``too_deep``, not
    the catch-all ``unreadable_prompt``. The arguments object is one level itself."""
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
    prompt = codec.load(fmt).render([{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [call]}])
    assert written in prompt
    nested = prompt.replace(written, written.replace("1", "[" * depth + "1" + "]" * depth))
    with pytest.raises(codec.ParseError) as raised:
        codec.load(fmt).parse_prompt(nested)
    assert raised.value.code == "too_deep"
    assert f"nests deeper than {MAX_VALUE_DEPTH} levels" in str(raised.value)
    shallower = prompt.replace(written, written.replace("1", "[" * (depth - 100) + "1" + "]" * (depth - 100)))
    assert codec.load(fmt).parse_prompt(shallower).messages[1].tool_calls[0].name == "f"


# 7. parse_prompt raises only ParseError.

_PROMPT_MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "reasoning_content": "Use the tool.",
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "f", "arguments": {"x": 1.5, "a": [1, {"b": "c"}]}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_0", "content": '{"sunny": true}'},
    {"role": "assistant", "content": "Sunny."},
]


def _prompt_messages(fmt: str) -> list[dict[str, Any]]:
    """``_PROMPT_MESSAGES`` with the call's id as the format's template takes one (``call_id``)."""
    own = call_id(fmt, "call_0")
    messages = [dict(message) for message in _PROMPT_MESSAGES]
    messages[2]["tool_calls"] = [{**messages[2]["tool_calls"][0], "id": own}]
    messages[3]["tool_call_id"] = own
    return messages


@pytest.mark.parametrize("name", FORMAT_NAMES)
@given(data=st.data())
def test_parse_prompt_raises_only_parse_error_on_mutated_prompts(name: str, data: st.DataObject) -> None:
    prompt = codec.load(name).render(_prompt_messages(name), tools=NUMBERS, now="2026-01-31")
    start = data.draw(st.integers(0, len(prompt)))
    end = data.draw(st.integers(start, min(len(prompt), start + 40)))
    insert = data.draw(
        st.sampled_from(["", "x", "{", "}", "[", '"', ":", ",", "\n", "<", "]", "1e5", prompt[start:end]])
    )
    mutated = prompt[:start] + insert + prompt[end:]
    with contextlib.suppress(codec.ParseError):  # anything else fails the test
        codec.load(name).parse_prompt(mutated)


def test_parse_prompt_refuses_what_is_not_text() -> None:
    with pytest.raises(codec.ParseError):
        codec.load("glm").parse_prompt(None)  # type: ignore[arg-type]


# 11. Numbers JSON cannot write stay text: the arguments remain valid JSON.


@pytest.mark.parametrize(
    "name, completion",
    [
        (
            "glm",
            "</think><tool_call>f<arg_key>x</arg_key><arg_value>NaN</arg_value>"
            "<arg_key>a</arg_key><arg_value>-Infinity</arg_value></tool_call>",
        ),
        (
            "solar-open",
            "<|tool_calls|><|tool_call:begin|>abcdefghij<|tool_call:name|>f<|tool_call:args|>"
            '{"x": NaN, "a": -Infinity}<|tool_call:end|>',
        ),
        ("gemma4", "<|tool_call>call:f{a:-inf,x:nan}<tool_call|>"),
    ],
)
def test_non_finite_numbers_never_reach_the_json(name: str, completion: str) -> None:
    for tools in (NUMBERS, None):
        parser = codec.load(name).stream(tools=tools)
        events = parser.feed(completion) + parser.close()
        call = parser.message.tool_calls[0]
        assert strict_json(call.arguments_json) == call.arguments
        streamed = "".join(getattr(event, "arguments", "") for event in events)
        assert strict_json(streamed) == call.arguments


# 6. The CLI: one line, never a traceback.


def _cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as exit_:  # argparse's own usage errors
            status = int(exit_.code or 0)
    return status, out.getvalue(), err.getvalue()


def test_cli_roundtrip_with_no_examples_is_a_usage_error() -> None:
    status, _, err = _cli("roundtrip", "-f", "glm", "--examples", "0")
    assert status == 2 and "at least 1" in err and "Traceback" not in err


def test_cli_an_unexpected_failure_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    completion = tmp_path / "completion.txt"
    completion.write_text("hi", encoding="utf-8")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(codec.Codec, "stream", broken)
    status, _, err = _cli("parse", "-f", "glm", str(completion))
    assert status == 70
    assert err.count("\n") == 1 and "RuntimeError: boom" in err


def test_cli_parse_reports_how_the_output_ended(tmp_path: Any) -> None:
    completion = tmp_path / "completion.txt"
    completion.write_text(
        "</think><tool_call>bash<arg_key>command</arg_key><arg_value>rm -rf /tmp/fo", encoding="utf-8"
    )
    status, out, _ = _cli("parse", "-f", "glm", "--diagnostics", "json", str(completion))
    result = json.loads(out)
    assert status == 0
    assert result["finish_reason"] == "length" and "tool_calls" not in result["message"]
    assert json.loads(result["truncated_call"]["function"]["arguments"]) == {"command": "rm -rf /tmp/fo"}
    assert [d["code"] for d in result["diagnostics"]] == ["truncated"]


def test_cli_deep_input_gets_no_traceback(tmp_path: Any) -> None:
    completion = tmp_path / "completion.txt"
    completion.write_text(_deep("gemma4", 100_000), encoding="utf-8")
    status, out, err = _cli("parse", "-f", "gemma4", str(completion))
    assert status == 0 and "Traceback" not in err
    assert json.loads(out)["content"].endswith("Done.")


def test_solar_arguments_nested_1000_deep_parse_and_go_to_the_wire() -> None:
    reply = codec.load("solar-open").parse(_deep("solar-open", 1_000))
    wire = reply.to_openai()  # 0.1.0 parsed it, then to_openai() raised RecursionError
    assert wire["content"].startswith("[") and wire["content"].endswith("Done.")
    stopped = reply.incomplete_calls[0].to_openai()["function"]["arguments"]
    assert stopped == '{"a": ' + "[" * 64 + "]" * 64 + "}"  # what arrived within the limit


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_a_call_without_a_tool_name_is_not_a_call_to_run(name: str) -> None:
    one_call = FORMATS[name].examples.one_call
    nameless = one_call.replace("get_weather", "", 1)
    reply = codec.load(name).parse(nameless, id_factory=ids)
    assert reply.tool_calls == ()
    if reply.incomplete_calls:  # announced, then refused at its end (GLM, Solar)
        assert [call.name for call in reply.incomplete_calls] == [""]
        assert "missing_tool_name" in [d.code for d in reply.diagnostics]
    else:  # never announced: the grammar needs a name (Gemma), so its text is content
        assert "Paris" in (reply.content or "")
