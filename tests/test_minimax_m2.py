"""MiniMax-M2's quirks, one per test: the thought the generation prompt opens, every call of a
turn in one block, values as the template writes them, the history reasoning it drops, the
revisions told apart by their default system text, and what its models write wrong (the
mistakes vLLM's and SGLang's minimax_m2 parsers were fixed for)."""

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
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "detail": {"type": "boolean"},
                    "nickname": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                },
            },
        },
    }
]
THOUGHT_END = "\n</think>\n\n"


def _invoke(name: str = '"get_weather"', parameters: str = '<parameter name="city">Paris</parameter>\n') -> str:
    return f"<invoke name={name}>\n{parameters}</invoke>\n"


def _block(*invokes: str) -> str:
    return "<minimax:tool_call>\n" + "".join(invokes or (_invoke(),)) + "</minimax:tool_call>"


def _parse(text: str, fmt: str = "minimax-m2", **options: Any) -> codec.AssistantMessage:
    return codec.load(fmt).parse(text, tools=TOOLS, id_factory=ids, **options)


def _arguments(reply: codec.AssistantMessage) -> list[dict[str, Any]]:
    return [call.arguments for call in reply.tool_calls]


def _codes(reply: codec.AssistantMessage) -> list[str]:
    return [d.code for d in reply.diagnostics]


def test_the_completion_starts_inside_the_thought_the_prompt_opened() -> None:
    assert codec.load("minimax-m2").render([{"role": "user", "content": "Hi"}]).endswith("]~b]ai\n<think>\n")
    reply = _parse("Paris, then.\n</think>\n\nChecking.\n" + _block(), strict=True)
    assert (reply.reasoning, reply.content, _arguments(reply)) == ("Paris, then.", "Checking.", [{"city": "Paris"}])


def test_parallel_calls_share_one_block_and_stream_like_a_whole_parse() -> None:
    days = '<parameter name="city">Rome</parameter>\n<parameter name="days">3</parameter>\n'
    text = "Two." + THOUGHT_END + _block(_invoke(), _invoke(parameters=days))
    whole = _parse(text, strict=True)
    assert _arguments(whole) == [{"city": "Paris"}, {"city": "Rome", "days": 3}]
    for size in (1, 3, 8):
        parser = codec.load("minimax-m2").stream(tools=TOOLS, id_factory=ids)
        events = [event for i in range(0, len(text), size) for event in parser.feed(text[i : i + size])]
        events += parser.close()
        assert parser.message == whole
        assert fold(events) == whole.to_openai()


def test_markers_without_new_lines_read_the_same() -> None:
    """vLLM's and SGLang's tests write the block with no new line between the markers."""
    text = (
        '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Paris</parameter></invoke>'
        "</minimax:tool_call>"
    )
    assert _arguments(_parse("x" + THOUGHT_END + text, strict=True)) == [{"city": "Paris"}]


@pytest.mark.parametrize(
    ("written", "value"),
    [("3", 3), ("true", True), ("null", None), ("Alice", "Alice"), ("007", "007")],
    ids=["integer", "boolean", "null", "string-or-null", "string"],
)
def test_values_are_typed_by_the_schema_as_the_template_writes_them(written: str, value: Any) -> None:
    key = {3: "days", True: "detail", None: "nickname", "Alice": "nickname", "007": "city"}[value]
    reply = _parse("x" + THOUGHT_END + _block(_invoke(parameters=f'<parameter name="{key}">{written}</parameter>\n')))
    assert _arguments(reply) == [{key: value}]


def test_a_value_is_raw_text_up_to_its_close_new_lines_included() -> None:
    code = '<parameter name="city">\nline one\n  line two\n</parameter>\n'
    assert _arguments(_parse("x" + THOUGHT_END + _block(_invoke(parameters=code)))) == [
        {"city": "\nline one\n  line two\n"}
    ]


@pytest.mark.parametrize("name", ["get_weather", "'get_weather'"], ids=["no-quotes", "single-quotes"])
def test_a_name_without_double_quotes_is_read_and_reported(name: str) -> None:
    reply = _parse("x" + THOUGHT_END + _block(_invoke(name=name)))
    assert [call.name for call in reply.tool_calls] == ["get_weather"]
    assert _codes(reply) == ["unquoted_name"]


def test_a_call_inside_the_unclosed_thought_is_a_call() -> None:
    reply = _parse("I will look it up.\n" + _block())
    assert (reply.reasoning, _arguments(reply)) == ("I will look it up.", [{"city": "Paris"}])
    assert "malformed" in _codes(reply)


def test_a_missing_parameter_close_is_inserted() -> None:
    text = '<parameter name="city">Paris\n<parameter name="days">3</parameter>\n'
    reply = _parse("x" + THOUGHT_END + _block(_invoke(parameters=text)))
    assert _arguments(reply) == [{"city": "Paris", "days": 3}]  # the new line is the next opener's
    assert _codes(reply) == ["missing_marker"]


def test_a_parameter_close_inside_a_value_followed_by_more_of_it_is_text() -> None:
    text = '<parameter name="city">a </parameter> b</parameter>\n'
    reply = _parse("x" + THOUGHT_END + _block(_invoke(parameters=text)))
    assert _arguments(reply) == [{"city": "a </parameter> b"}]


@pytest.mark.parametrize(
    ("end", "finished"),
    [
        ('<parameter name="city">Paris</parameter>\n', True),  # the line ended: only </invoke> is missing
        ('<parameter name="city">Paris</parameter>\n</minimax:tool_call>', True),
        ('<parameter name="city">Paris</parameter>', False),  # another argument may have followed
        ('<parameter name="city">Paris</parameter></minimax:tool_call>', False),  # not the template's layout
        ('<parameter name="city">Par', False),
    ],
    ids=["after-its-line", "block-closed-after-its-line", "right-after-the-close", "block-closed-at-once", "in-value"],
)
def test_a_call_without_its_invoke_close_is_finished_only_after_a_whole_argument_line(end: str, finished: bool) -> None:
    reply = _parse("x" + THOUGHT_END + '<minimax:tool_call>\n<invoke name="get_weather">\n' + end, finish_reason="stop")
    assert (len(reply.tool_calls), reply.truncated_call is not None) == (int(finished), not finished)


def test_a_block_the_output_ends_in_keeps_its_finished_calls() -> None:
    reply = _parse("x" + THOUGHT_END + _block()[: -len("</minimax:tool_call>")])
    assert (_arguments(reply), reply.finish_reason) == ([{"city": "Paris"}], "tool_calls")


def test_history_reasoning_is_dropped_and_explained_and_the_last_turns_kept() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello.", "reasoning_content": "greet"},
        {"role": "user", "content": "Bye"},
        {"role": "assistant", "content": "Bye.", "reasoning_content": "farewell"},
    ]
    c = codec.load("minimax-m2")
    kept = c.parse_prompt(c.render(messages, add_generation_prompt=False)).messages
    assert [getattr(m, "reasoning", None) for m in kept] == [None, None, None, "farewell"]
    assert [loss.rule for loss in c.explain_losses(messages)] == ["history_reasoning_dropped"]


def test_think_tags_in_content_become_reasoning() -> None:
    c = codec.load("minimax-m2")
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "<think>\nhm\n</think>\n\nHello."}]
    reply = c.parse_prompt(c.render(messages, add_generation_prompt=False)).messages[-1]
    assert (reply.reasoning, reply.content) == ("hm", "Hello.")


@pytest.mark.parametrize("fmt", ["minimax-m2", "minimax-m2-1", "minimax-m2-5", "minimax-m2-7"])
def test_each_revisions_default_system_text_reads_back_as_no_system_message(fmt: str) -> None:
    c = codec.load(fmt)
    prompt = c.render([{"role": "user", "content": "Hi"}])
    default = prompt.split("]~b]system\n", 1)[1].split("[e~[", 1)[0]
    assert fmt.removeprefix("minimax-").upper().replace("-", ".") in default.upper()
    own = [{"role": "system", "content": default}, {"role": "user", "content": "Hi"}]
    assert c.render(own) == prompt
    assert [m.role for m in c.parse_prompt(prompt).messages] == ["user"]


@pytest.mark.parametrize("fmt", ["minimax-m2", "minimax-m2-1", "minimax-m2-5", "minimax-m2-7"])
def test_each_revision_is_told_by_its_hash_and_an_edited_copy_by_its_text(fmt: str) -> None:
    text = read_text("templates", codec.load(fmt).spec.template)
    assert codec.detect(text).format == fmt
    edited = codec.detect("{# edited #}" + text)
    assert (edited.format, edited.how) == (fmt, "tokens")
    assert "model_identity" in edited.evidence[-1]  # the line that told it apart


def test_model_ids_of_each_revision_load_it() -> None:
    assert codec.load("MiniMaxAI/MiniMax-M2").name == "minimax-m2"
    assert codec.load("MiniMaxAI/MiniMax-M2.5").name == "minimax-m2-5"
    assert codec.load("someone/MiniMax-M2.7-GGUF").name == "minimax-m2-7"


def test_constraint_is_refused_for_want_of_a_call_syntax() -> None:
    with pytest.raises(codec.CodecError, match="no call syntax"):
        codec.load("minimax-m2").constraint(tools=TOOLS)
