"""Llama 4's quirks, one per test: the models' Python list of calls (keyword arguments, Python
literals, sometimes between <|python_start|> and <|python_end|>), the template's JSON calls
written one after the other, and what the models write wrong (the cases vLLM's llama4_pythonic
and pythonic parsers handle)."""

from __future__ import annotations

from typing import Any

import codec
from support.parsing import ids

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "exact": {"type": "boolean"}},
            },
        },
    }
]
EOT = "<|eot|>"


def _parse(text: str, **options: Any) -> codec.AssistantMessage:
    return codec.load("llama-4").parse(text, tools=TOOLS, id_factory=ids, **options)


def _calls(message: codec.AssistantMessage) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in message.tool_calls]


def test_python_values_are_typed_by_the_schema() -> None:
    reply = _parse("[get_weather(city=123, days=3, exact=False, extra=None)]" + EOT)
    assert _calls(reply) == [("get_weather", {"city": "123", "days": 3, "exact": False, "extra": None})]


def test_escapes_of_both_quotes_are_read() -> None:
    reply = _parse(r"""[get_weather(city='Martha\'s Vineyard', days=1), get_weather(city="a\"b\n\u00e9")]""")
    assert _calls(reply) == [
        ("get_weather", {"city": "Martha's Vineyard", "days": 1}),
        ("get_weather", {"city": 'a"b\né'}),
    ]


def test_brackets_commas_and_parentheses_inside_strings_are_text() -> None:
    reply = _parse("[get_weather(city='a), b=(2', days=3)]" + EOT)
    assert _calls(reply) == [("get_weather", {"city": "a), b=(2", "days": 3})]


def test_the_templates_json_calls_follow_each_other_with_nothing_between() -> None:
    text = '<|python_start|>Both.<|python_end|>{"name": "get_weather", "parameters": {"city": "Paris"}}'
    reply = _parse(text + '{"name": "get_weather", "parameters": {"city": "Rome"}}' + EOT, strict=True)
    assert reply.content == "Both."
    assert _calls(reply) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]


def test_a_list_between_python_tags_ending_in_eom_is_calls() -> None:
    reply = _parse("<|python_start|>[get_weather(city='Paris')]<|python_end|><|eom|>", strict=True)
    assert _calls(reply) == [("get_weather", {"city": "Paris"})]
    assert "<|eom|>" in codec.load("llama-4").stop_tokens


def test_text_before_the_list_keeps_the_reply_text() -> None:
    """vLLM's parser reads a list only at the start of the reply: a call after text is not run."""
    text = "Sure. [get_weather(city='Paris')]"
    reply = _parse(text + EOT)
    assert reply.content == text and not reply.tool_calls


def test_a_list_cut_off_runs_only_the_calls_it_closed() -> None:
    reply = _parse("[get_weather(city='Paris'), get_weather(city='Ro")
    assert _calls(reply) == [("get_weather", {"city": "Paris"})]
    assert reply.truncated_call is not None and reply.truncated_call.arguments == {"city": "Ro"}
    assert reply.finish_reason == "length"


def test_a_keyword_call_missing_its_parenthesis_is_never_run() -> None:
    for reason in ("stop", "length", None):
        reply = _parse("[get_weather(city='Paris'", finish_reason=reason)
        assert not reply.tool_calls and reply.finish_reason == "length", reason


def test_positional_arguments_take_the_names_of_the_parameters_in_order() -> None:
    reply = _parse("[get_weather('Paris', 3, True, 4)]" + EOT)
    assert _calls(reply) == [("get_weather", {"city": "Paris", "days": 3, "exact": True, "3": 4})]
    assert [d.code for d in reply.diagnostics] == ["malformed"] * 4
    assert not codec.load("llama-4").parse("[get_weather(city='Paris')]", tools=TOOLS, strict=True).diagnostics


def test_a_reply_that_begins_with_another_bracket_is_content() -> None:
    for text in ("[1, 2, 3]", "(see below)", "[link](http://x)", "{}"):
        reply = _parse(text + EOT)
        assert reply.content == text and not reply.tool_calls, text


def test_the_template_writes_content_beside_calls_inside_python_tags() -> None:
    calls = [{"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Checking.", "tool_calls": calls}]
    prompt = codec.load("llama-4").render(messages, add_generation_prompt=False)
    assert prompt.endswith(
        '<|python_start|>Checking.<|python_end|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot|>'
    )
