"""Qwen3-Coder's quirks, one per test: values written as the template writes them (Python's
``str()``, JSON for containers) and typed back by the schema, the known mistakes of the model,
the tools listing read back from the prompt, and where the format is told from qwen3."""

from __future__ import annotations

from typing import Any

import pytest

import codec
from codec.constrain.check import matcher, tokens
from codec.registry import find

FMT = "qwen3-coder"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "description": "  Does things.\n",
            "parameters": {
                "type": "object",
                "properties": {
                    "s": {"type": "string", "description": " text "},
                    "n": {"type": ["integer", "null"], "nullable": True},
                    "b": {"type": "boolean"},
                    "o": {"type": "object"},
                },
                "required": ["s"],
            },
            "strict": True,
        },
    }
]


def call(**arguments: str) -> str:
    body = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in arguments.items())
    return f"<tool_call>\n<function=f>\n{body}</function>\n</tool_call>"


def parsed(text: str, tools: Any = TOOLS, **kwargs: Any) -> codec.AssistantMessage:
    return codec.load(FMT).parse(text, tools=tools, **kwargs)


def codes(message: codec.AssistantMessage) -> list[str]:
    return [diagnostic.code for diagnostic in message.diagnostics]


def test_values_are_read_as_the_template_writes_them() -> None:
    message = parsed(call(s="True", n="None", b="False", o='{"a": [1, 2]}'))
    assert message.tool_calls[0].arguments == {"s": "True", "n": None, "b": False, "o": {"a": [1, 2]}}
    assert codes(message) == []


def test_without_a_schema_only_the_exact_writing_of_another_value_is_that_value() -> None:
    message = parsed(call(s="True", n="3", b="true", o="1e5"), tools=None)
    assert message.tool_calls[0].arguments == {"s": True, "n": 3, "b": "true", "o": "1e5"}


def test_json_looking_text_of_a_string_parameter_stays_a_string_whole_and_streamed() -> None:
    text = call(s='{"a": 1}')
    assert parsed(text).tool_calls[0].arguments == {"s": '{"a": 1}'}
    stream = codec.load(FMT).stream(tools=TOOLS)
    for at in range(0, len(text), 3):
        stream.feed(text[at : at + 3])
    stream.close()
    assert stream.message.tool_calls[0].arguments == {"s": '{"a": 1}'}


def test_json_words_for_a_typed_parameter_are_typed_by_the_schema() -> None:
    assert parsed(call(b="true", n="7")).tool_calls[0].arguments == {"b": True, "n": 7}


def test_a_missing_parameter_close_is_inserted_and_the_value_keeps_no_new_line() -> None:
    text = "<tool_call>\n<function=f>\n<parameter=s>\nab\n<parameter=n>\n3\n</parameter>\n</function>\n</tool_call>"
    message = parsed(text)
    assert message.tool_calls[0].arguments == {"s": "ab", "n": 3}
    assert codes(message) == ["missing_marker"]


def test_a_parameter_close_inside_a_value_is_text_of_it() -> None:
    message = parsed(call(s="print('</parameter>') # done"))
    assert message.tool_calls[0].arguments == {"s": "print('</parameter>') # done"}
    assert codes(message) == ["marker_as_text"]


def test_a_missing_function_close_is_inserted() -> None:
    message = parsed("<tool_call>\n<function=f>\n<parameter=s>\nx\n</parameter>\n</tool_call>")
    assert message.tool_calls[0].arguments == {"s": "x"}
    assert codes(message) == ["missing_marker"]


@pytest.mark.parametrize(
    ("end", "finished"),
    [("</parameter>\n", False), ("</parameter>\n</function>", False), ("</parameter>\n</function>\n", True)],
)
def test_a_call_without_its_closer_is_finished_only_after_function_close_and_its_line(end: str, finished: bool) -> None:
    text = "<tool_call>\n<function=f>\n<parameter=s>\nx\n" + end
    message = parsed(text, finish_reason="stop")
    assert bool(message.tool_calls) is finished
    assert (message.truncated_call is None) is finished


def test_the_tools_listing_reads_back_as_written() -> None:
    c = codec.load(FMT)
    prompt = c.render([{"role": "user", "content": "hi"}], tools=TOOLS)
    conversation = c.parse_prompt(prompt)
    function = conversation.tools[0]["function"]
    assert function["description"] == "Does things."
    assert function["strict"] is True
    assert function["parameters"]["properties"]["n"] == {"type": ["integer", "null"], "nullable": True}
    assert function["parameters"]["properties"]["s"] == {"type": "string", "description": "text"}
    assert conversation == c.canonical([{"role": "user", "content": "hi"}], tools=TOOLS)


def test_the_default_system_text_comes_back_as_no_system_message() -> None:
    c = codec.load(FMT)
    default = "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks."
    messages = [{"role": "system", "content": default}, {"role": "user", "content": "hi"}]
    assert c.render(messages, tools=TOOLS) == c.render(messages[1:], tools=TOOLS)
    assert [m.role for m in c.parse_prompt(c.render(messages, tools=TOOLS)).messages] == ["user"]
    assert [m.role for m in c.parse_prompt(c.render(messages)).messages] == ["system", "user"]


def test_tool_results_that_come_first_have_no_user_header() -> None:
    c = codec.load(FMT)
    messages = [{"role": "tool", "tool_call_id": "x", "content": "r"}, {"role": "user", "content": "hi"}]
    prompt = c.render(messages, add_generation_prompt=False)
    assert prompt.startswith("<tool_response>\nr\n</tool_response>\n<|im_end|>\n")
    assert [m.role for m in c.parse_prompt(prompt).messages] == ["tool", "user"]


def test_model_ids_of_the_family_load_it_and_a_misspelt_name_does_not() -> None:
    assert find("Qwen/Qwen3-Coder-Next").name == FMT
    assert find("unsloth/Qwen3-Coder-30B-A3B-Instruct").name == FMT
    assert find("Qwen/Qwen3-8B").name == "qwen3"
    with pytest.raises(codec.UnknownFormatError):
        find("qwen3_coder")


def test_the_template_is_told_from_qwen3_by_its_own_markers() -> None:
    c = codec.load(FMT)
    template = c.spec.template
    from codec._resources import read_text

    edited = read_text("templates", template).replace("You are Qwen", "You are Q")
    assert codec.detect(edited).format == FMT
    assert codec.detect(read_text("templates", "qwen3.jinja").replace("Qwen", "Q")).format == "qwen3"
    # qwen3 has no marker of its own: its call opener alone says qwen3 only where no other
    # grammar's own marker is found
    assert codec.detect("<tool_call>").format == "qwen3"
    with pytest.raises(codec.UnknownFormatError):
        codec.detect("<tool_call><function=")


def test_the_constraint_writes_booleans_as_the_template_does() -> None:
    c = codec.load(FMT)
    grammar = c.constraint(tools=TOOLS, tool_choice="required")
    good = call(s="x", b="True") + "<|im_end|>"
    m = matcher(FMT, grammar)
    assert all(m.consume_token(token) for token in tokens(FMT, good))
    bad = call(s="x", b="true")
    m = matcher(FMT, grammar)
    assert not all(m.consume_token(token) for token in tokens(FMT, bad))
