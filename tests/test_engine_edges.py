"""Engine behaviour the sampled mutation runs found unchecked (docs/mutation.md): the default
call id's shape, the argument-size limit at its boundary, the tool list reaching a repair, and
call indexes after a call stopped at a limit."""

from __future__ import annotations

import re

import pytest

import codec
from codec.engine.call import random_call_id, tool_names

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "get"}},
]


def test_the_default_call_id_is_call_and_24_hex_digits() -> None:
    ids = {random_call_id(0) for _ in range(50)}
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", found) for found in ids)
    assert len(ids) == 50


def test_tool_names_takes_functions_and_bare_tools_and_skips_the_nameless() -> None:
    tools = [*TOOLS, {"name": "bare"}, {"function": {"name": 3}}, {"type": "function", "function": "odd"}]
    assert tool_names(tools) == ["get_weather", "get", "bare"]


def glm_call(value: str) -> str:
    return f"Go.</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>{value}</arg_value></tool_call>"


@pytest.mark.parametrize("fmt", ["glm"])
def test_the_argument_size_limit_holds_at_its_boundary(fmt: str) -> None:
    """A call whose arguments JSON is exactly ``max_argument_chars`` long is a call; one
    character more stops it (``too_large``)."""
    glm = codec.load(fmt)
    size = len('{"city": "') + 20 + len('"}')
    exact = glm.parse(glm_call("x" * 20), tools=TOOLS, limits=codec.Limits(max_argument_chars=size))
    assert [call.arguments for call in exact.tool_calls] == [{"city": "x" * 20}]
    assert len(exact.tool_calls[0].arguments_json) == size
    over = glm.parse(glm_call("x" * 21), tools=TOOLS, limits=codec.Limits(max_argument_chars=size))
    assert over.tool_calls == () and "too_large" in [d.code for d in over.diagnostics]


def test_a_lost_key_opener_is_told_from_the_name_by_the_tool_list() -> None:
    """``<tool_call>get_weathercity</arg_key>``: the repair inserts ``<arg_key>``, and the
    longest offered name that the text starts with ends the name (``get`` is offered too)."""
    text = "Go.</think><tool_call>get_weathercity</arg_key><arg_value>Paris</arg_value></tool_call>"
    reply = codec.load("glm").parse(text, tools=TOOLS)
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("get_weather", {"city": "Paris"})]
    unknown = codec.load("glm").parse(text, tools=[])
    assert [call.name for call in unknown.tool_calls] == ["get_weathercity"]


def test_a_call_after_one_stopped_at_a_limit_gets_the_next_index() -> None:
    """Calls are numbered as they are announced, the stopped one included: the events of the
    second call say index 1, never reusing the stopped call's 0."""
    glm = codec.load("glm")
    text = glm_call("x" * 40) + "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value></tool_call>"
    parser = glm.stream(tools=TOOLS, limits=codec.Limits(max_argument_chars=30))
    events = parser.feed(text) + parser.close()
    starts = [event for event in events if isinstance(event, codec.ToolCallStart)]
    assert [start.index for start in starts] == [0, 1]
    assert [call.arguments for call in parser.message.tool_calls] == [{"city": "Rome"}]


def test_white_space_around_a_tool_name_is_reported() -> None:
    text = "Go.</think><tool_call> get_weather <arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
    reply = codec.load("glm").parse(text, tools=TOOLS)
    assert [call.name for call in reply.tool_calls] == ["get_weather"]
    assert "tool_name_whitespace" in [d.code for d in reply.diagnostics]
    clean = codec.load("glm").parse(glm_call("Paris"), tools=TOOLS)
    assert "tool_name_whitespace" not in [d.code for d in clean.diagnostics]
