"""Qwen3's quirks, one per test: the layout its template writes around tokens (marker
spellings), the name inside the call object, and what its models write wrong."""

from __future__ import annotations

from typing import Any

import codec
from codec._resources import read_text
from codec.engine.grammar import compiled
from codec.engine.scanner import MarkerScanner
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
THOUGHT = "<think>\nLook it up.\n</think>\n\n"


def _streamed(text: str, size: int = 1, **options: Any) -> tuple[codec.AssistantMessage, dict[str, object]]:
    parser = codec.load("qwen3").stream(tools=TOOLS, id_factory=ids, **options)
    events = [event for i in range(0, len(text), size) for event in parser.feed(text[i : i + size])]
    events += parser.close()
    return parser.message, fold(events)


def test_a_marker_that_may_grow_into_a_longer_spelling_waits_for_it() -> None:
    scanner = MarkerScanner(compiled("qwen3.lark").scanned)
    pieces = [piece for chunk in ("R", "\n</think>", "\n", "\nHi") for piece in scanner.feed(chunk)]
    assert pieces + scanner.close() == [(None, "R"), ("THINK_CLOSE", "\n</think>\n\n"), (None, "Hi")]


def test_the_layout_around_tokens_is_no_part_of_the_text() -> None:
    text = THOUGHT + 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    reply = codec.load("qwen3").parse(text, tools=TOOLS)
    assert (reply.reasoning, reply.content) == ("Look it up.", "Checking.")
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_white_space_after_the_pre_filled_thought_is_content_on_every_parse() -> None:
    c = codec.load("qwen3")
    assert [c.parse(" <|im_end|>", enable_thinking=False).content for _ in range(2)] == [" ", " "]


def test_the_call_is_announced_once_its_name_is_read_and_streams_like_a_whole_parse() -> None:
    text = (
        THOUGHT + '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par\\u00eds", "days": 3}}\n</tool_call>'
    )
    whole = codec.load("qwen3").parse(text, tools=TOOLS, id_factory=ids)
    for size in (1, 2, 7):
        message, folded = _streamed(text, size)
        assert message == whole and folded == whole.to_openai()
    assert whole.tool_calls[0].arguments == {"city": "París", "days": 3}


def test_arguments_refused_after_a_streamed_string_are_read_again_with_all_its_text() -> None:
    """A trailing comma after a long string value: the string streamed piece by piece (the run
    sink), then the JSON reader refused the comma; the lenient second reading needs every
    piece of the string, however the text was cut."""
    text = (
        THOUGHT + '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris, the capital of France", '
        '"days": 3,}}\n</tool_call>'
    )
    whole = codec.load("qwen3").parse(text, tools=TOOLS, id_factory=ids)
    assert whole.tool_calls[0].arguments == {"city": "Paris, the capital of France", "days": 3}
    assert [d.code for d in whole.diagnostics] == ["invalid_arguments", "arguments_repaired"]
    for size in (1, 3, 8):
        message, folded = _streamed(text, size)
        assert message == whole and folded == whole.to_openai()


def test_double_encoded_arguments_are_read_leniently() -> None:
    text = THOUGHT + '<tool_call>\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}\n</tool_call>'
    reply = codec.load("qwen3").parse(text, tools=TOOLS, id_factory=ids)
    assert reply.tool_calls[0].arguments == {"city": "Paris"}
    assert [d.code for d in reply.diagnostics] == ["invalid_arguments", "arguments_repaired"]
    assert _streamed(text)[0] == reply


def test_text_after_the_arguments_of_an_object_read_whole_is_kept() -> None:
    """The fuzz finding of 2026-12-05: with the name last, the object is read whole and its
    arguments read as a string, ``{"city": "Paris"}true``; reading that string again dropped the
    ``true``. The call stays, and the object is kept as content, as for other members."""
    body = '{"arguments": {"city": "Paris"}true, "name": "get_weather"}'
    text = THOUGHT + f"<tool_call>\n{body}\n</tool_call>"
    reply = codec.load("qwen3").parse(text, tools=TOOLS, id_factory=ids)
    assert reply.tool_calls[0].arguments == {"city": "Paris"}
    assert reply.content is not None and body in reply.content
    assert [d.code for d in reply.diagnostics] == ["invalid_arguments", "arguments_repaired"]
    for size in (1, 5):
        assert _streamed(text, size)[0] == reply


def test_a_call_inside_an_unclosed_thought_is_a_call() -> None:
    text = '<think>\nI will look it up.\n<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>'
    reply = codec.load("qwen3").parse(text, tools=TOOLS)
    assert reply.reasoning == "I will look it up." and [call.name for call in reply.tool_calls] == ["get_weather"]
    assert [d.code for d in reply.diagnostics] == ["malformed"]


def test_a_call_whose_line_did_not_end_is_not_finished_for_a_model_that_stopped() -> None:
    head = THOUGHT + '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}'
    c = codec.load("qwen3")
    assert c.parse(head, tools=TOOLS, finish_reason="stop").tool_calls == ()
    assert len(c.parse(head + "\n", tools=TOOLS, finish_reason="stop").tool_calls) == 1


def test_an_assistant_message_without_content_renders_and_comes_back_empty() -> None:
    call = {"id": "x", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    messages = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": None, "tool_calls": [call]}]
    c = codec.load("qwen3")
    conversation = c.parse_prompt(c.render(messages, tools=TOOLS))
    assert conversation.messages[1].content == "" and conversation == c.canonical(messages, tools=TOOLS)


def test_the_bundled_template_is_told_by_its_hash_and_an_edited_copy_by_its_tokens() -> None:
    text = read_text("templates", "qwen3.jinja")
    assert codec.detect(text).how == "hash"
    found = codec.detect(text + "\n")
    assert (found.format, found.how) == ("qwen3", "tokens") and "<tool_call>" in found.evidence
