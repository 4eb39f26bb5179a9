"""Mistral's quirks, one per test: calls that end with their arguments (no closing marker), the
ids Mistral-Small-3.2 writes, the thought of the reasoning models, the default system prompt
and joined turns the template writes, and what its models write wrong (the mistakes vLLM's,
SGLang's and llama.cpp's Mistral parsers were fixed for)."""

from __future__ import annotations

import re
from typing import Any

import pytest

import codec
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
MISTRAL = codec.load("mistral")


def _parse(text: str, **options: Any) -> codec.AssistantMessage:
    return MISTRAL.parse(text, id_factory=ids, tools=TOOLS, **options)


def _calls(reply: codec.AssistantMessage) -> list[tuple[str | None, str, dict[str, Any]]]:
    return [(call.id, call.name, call.arguments) for call in reply.tool_calls]


def test_each_call_opens_with_its_own_marker_and_ends_with_its_object() -> None:
    text = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_weather[ARGS]{"city": "Rome", "days": 2}'
    reply = _parse(text, strict=True)
    assert [args for _, _, args in _calls(reply)] == [{"city": "Paris"}, {"city": "Rome", "days": 2}]
    assert reply.finish_reason == "tool_calls" and reply.diagnostics == ()


def test_a_streamed_call_ends_when_the_next_one_opens_and_folds_like_a_whole_parse() -> None:
    text = 'Sure.[TOOL_CALLS]get_weather[ARGS]{"city": "Par\\u00eds"}[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}</s>'
    whole = _parse(text)
    for size in (1, 3, 8):
        parser = MISTRAL.stream(tools=TOOLS, id_factory=ids)
        events: list[Any] = []
        ended_at = []
        for start in range(0, len(text), size):
            events += parser.feed(text[start : start + size])
            if any(isinstance(e, codec.ToolCallEnd) and e.index == 0 for e in events) and not ended_at:
                ended_at.append(start + size)
        events += parser.close()
        assert fold(events) == whole.to_openai()
        assert ended_at and ended_at[0] > text.index("[TOOL_CALLS]", 10)  # not before the next opener


def test_the_id_mistral_small_3_2_writes_is_kept() -> None:
    reply = _parse('[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}</s>', strict=True)
    assert _calls(reply) == [("a1B2c3D4e", "get_weather", {"city": "Paris"})]


def test_an_id_that_is_not_nine_letters_or_digits_is_kept_leniently() -> None:
    reply = _parse('[TOOL_CALLS]get_weather[CALL_ID]call_1[ARGS]{"city": "Paris"}</s>')
    assert _calls(reply) == [("call_1", "get_weather", {"city": "Paris"})]
    assert [d.code for d in reply.diagnostics] == ["malformed"]
    with pytest.raises(codec.ParseError):
        _parse('[TOOL_CALLS]get_weather[CALL_ID]call_1[ARGS]{"city": "Paris"}</s>', strict=True)


def test_the_thought_is_reasoning_and_white_space_after_it_is_content() -> None:
    reply = _parse('[THINK]Paris.[/THINK]\nOn it.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', strict=True)
    assert (reply.reasoning, reply.content) == ("Paris.", "\nOn it.")


def test_arguments_cut_off_are_no_call_even_when_the_next_call_opens() -> None:
    """A cut-off `[ARGS]` JSON (a known mistake): the call is kept apart, the next one runs."""
    reply = _parse('[TOOL_CALLS]get_weather[ARGS]{"city": "Par[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}</s>')
    assert [args for _, _, args in _calls(reply)] == [{"city": "Rome"}]
    assert reply.finish_reason == "length"
    assert [call.arguments for call in reply.incomplete_calls] == [{"city": "Par"}]


def test_double_encoded_arguments_are_read_again() -> None:
    reply = _parse('[TOOL_CALLS]get_weather[ARGS]"{\\"city\\": \\"Paris\\", \\"days\\": 3}"</s>')
    assert [args for _, _, args in _calls(reply)] == [{"city": "Paris", "days": 3}]
    assert "arguments_repaired" in [d.code for d in reply.diagnostics]


def test_the_old_list_form_is_content_not_a_call() -> None:
    """Mistral 7B v0.3 and Nemo write `[TOOL_CALLS][{"name": …, "arguments": …}]`: not read as
    a call by this format (the name would be the whole list); its text stays visible."""
    text = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]</s>'
    reply = _parse(text)
    assert reply.tool_calls == () and reply.content == text.removesuffix("</s>")


def test_a_second_call_without_its_marker_keeps_the_first_and_shows_the_rest() -> None:
    reply = _parse('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}get_weather[ARGS]{"city": "Rome"}</s>')
    assert [args for _, _, args in _calls(reply)] == [{"city": "Paris"}]
    assert reply.content == 'get_weather[ARGS]{"city": "Rome"}'


def test_the_default_system_prompt_reads_back_as_no_message() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    prompt = MISTRAL.render(messages)
    assert prompt.startswith("<s>[SYSTEM_PROMPT]# HOW YOU SHOULD THINK AND ANSWER")
    assert "[THINK]Your thoughts" in prompt  # the default prompt quotes the markers as text
    assert MISTRAL.parse_prompt(prompt).messages == (codec.UserMessage(content="Hi"),)


def test_consecutive_turns_are_joined_and_a_later_thought_stays_in_the_content() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "assistant", "content": "x", "reasoning_content": "r1"},
        {"role": "assistant", "content": "y", "reasoning_content": "r2"},
    ]
    prompt = MISTRAL.render(messages)
    assert prompt.endswith("[INST]a\n\nb[/INST][THINK]r1[/THINK]x[THINK]r2[/THINK]y</s>")
    canonical = MISTRAL.canonical(messages)
    assert MISTRAL.parse_prompt(prompt) == canonical
    assert canonical.messages[1] == codec.AssistantMessage(content="x[THINK]r2[/THINK]y", reasoning="r1")


def test_results_take_the_ids_of_the_calls_at_their_places() -> None:
    call = {"id": "k", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    messages = [
        {"role": "user", "content": "?"},
        {"role": "assistant", "tool_calls": [call, {**call, "id": "m"}]},
        {"role": "tool", "tool_call_id": "m", "content": "sun"},
        {"role": "tool", "tool_call_id": "k", "content": "rain"},
    ]
    read = MISTRAL.parse_prompt(MISTRAL.render(messages, tools=TOOLS))
    assert [(m.tool_call_id, m.content) for m in read.messages if isinstance(m, codec.ToolMessage)] == [
        ("call_0", "sun"),
        ("call_1", "rain"),
    ]


def test_orders_the_template_refuses_stay_refused() -> None:
    with pytest.raises(codec.RenderError):
        MISTRAL.render([{"role": "assistant", "content": "first"}])
    with pytest.raises(codec.RenderError):
        MISTRAL.render([{"role": "user", "content": "?"}, {"role": "tool", "tool_call_id": "x", "content": "r"}])


def test_text_after_a_closed_object_is_content_and_the_call_stands() -> None:
    """No closer: the object's `}` ended the call, whatever follows it in the same run of text."""
    reply = _parse('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"} {"extra": </s>')
    assert [args for _, _, args in _calls(reply)] == [{"city": "Paris"}]
    assert reply.content == ' {"extra": '
    assert reply.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("text", "content"),
    [(" </s>", " "), ('[THINK]r[/THINK] [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', " ")],
)
def test_white_space_the_model_starts_its_answer_with_is_content(text: str, content: str) -> None:
    """The template writes the answer right after `[/INST]` (no generation prompt) and after
    `[/THINK]`: white space there is the answer's own, not layout."""
    assert _parse(text, strict=True).content == content


def test_ids_made_for_calls_are_nine_letters_or_digits_unless_the_caller_gives_a_factory() -> None:
    """Mistral-Small-3.2's template refuses any other id: an id codec made must render back."""
    reply = MISTRAL.parse('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}' * 2, tools=TOOLS)
    made = [call.id or "" for call in reply.tool_calls]
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", made_id) for made_id in made) and made[0] != made[1]
    assert [call.id for call in _parse('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}').tool_calls] == ["call_0"]


def test_the_instruct_templates_drop_reasoning_and_the_reasoning_one_keeps_it() -> None:
    """``FormatSpec.writes_reasoning``: the Instruct-2512 templates never read
    ``reasoning_content``; canonical says so, and the prompt reads back without it."""
    messages = [{"role": "user", "content": "?"}, {"role": "assistant", "content": "a", "reasoning_content": "r"}]
    for name, kept in (("mistral", "r"), ("ministral-3-instruct", None), ("devstral-small-2", None)):
        c = codec.load(name)
        prompt = c.render(messages)
        assert ("[THINK]r[/THINK]a</s>" in prompt) == (kept is not None)
        assert c.parse_prompt(prompt) == c.canonical(messages)
        assert c.canonical(messages).messages[-1].reasoning == kept
