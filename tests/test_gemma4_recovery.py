"""What Gemma 4 is seen to write, recovered (issue 22): each mistake as a small completion,
parsed whole and one character at a time, with the engine saying the model stopped.

The mistakes are read by general means — the grammar's ``BAD_*`` terminals and ``bad_*`` rules,
the repair search and the argument reader — so each case here is one instance of a kind that
``tests/test_corruption.py`` also applies at random, several per example.
"""

from __future__ import annotations

from typing import Any

import pytest

import codec

Q = '<|"|>'
OPEN, CLOSE = "<|tool_call>", "<tool_call|>"
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {key: {"type": kind} for key, kind in properties.items()}},
        },
    }
    for name, properties in {
        "get_weather": {"city": "string", "units": "string", "days": "integer"},
        "bash": {"command": "string"},
        "write": {"path": "string", "code": "string"},
    }.items()
]


def _ids(index: int) -> str:
    return f"call_{index}"


def _parse(text: str) -> codec.AssistantMessage:
    return codec.load("gemma4").parse(text, tools=TOOLS, id_factory=_ids, finish_reason="stop")


def _streamed(text: str) -> codec.AssistantMessage:
    parser = codec.load("gemma4").stream(tools=TOOLS, id_factory=_ids)
    for char in text:
        parser.feed(char)
    parser.close("stop")
    return parser.message


def _calls(message: codec.AssistantMessage) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in message.tool_calls]


CASES: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]] = {
    "python call syntax": (
        f'{OPEN}call:get_weather(city="New York, NY", units="imperial"){CLOSE}',
        [("get_weather", {"city": "New York, NY", "units": "imperial"})],
    ),
    "python call syntax, gemma strings and a number": (
        f"{OPEN}call:get_weather(city={Q}Paris{Q}, days=3){CLOSE}",
        [("get_weather", {"city": "Paris", "days": 3})],
    ),
    "python call syntax, bare values, no final close": (
        f"{OPEN}call:get_weather(city=Paris, units=metric)",
        [("get_weather", {"city": "Paris", "units": "metric"})],
    ),
    "two calls in one block": (
        f"{OPEN}call:bash{{command:{Q}ls{Q}}}call:bash{{command:{Q}pwd{Q}}}{CLOSE}",
        [("bash", {"command": "ls"}), ("bash", {"command": "pwd"})],
    ),
    "three calls in one block, a newline between, no final close": (
        f"{OPEN}call:bash{{command:{Q}ls{Q}}}\ncall:get_weather{{city:{Q}Paris{Q}}}call:bash{{command:{Q}pwd{Q}}}",
        [("bash", {"command": "ls"}), ("get_weather", {"city": "Paris"}), ("bash", {"command": "pwd"})],
    ),
    "a string left open before the call's closing brace": (
        f"{OPEN}call:bash{{command:{Q}ls}}{CLOSE}",
        [("bash", {"command": "ls"})],
    ),
    "a string left open before the brace, after a closed one": (
        f"{OPEN}call:write{{path:{Q}a.py{Q},code:{Q}x = {{1: 2}}}}{CLOSE}",
        [("write", {"path": "a.py", "code": "x = {1: 2}"})],
    ),
    "a literal quote written as the quote token": (
        f"{OPEN}call:write{{code:{Q}print({Q}hi{Q}){Q},path:{Q}a.py{Q}}}{CLOSE}",
        [("write", {"code": 'print("hi")', "path": "a.py"})],
    ),
    "python triple quotes as three quote tokens each": (
        f"{OPEN}call:write{{code:{Q}def f():\n    {Q}{Q}{Q}Doc.{Q}{Q}{Q}\n    return 1{Q},path:{Q}a.py{Q}}}{CLOSE}",
        [("write", {"code": 'def f():\n    """Doc."""\n    return 1', "path": "a.py"})],
    ),
    "an empty string literal as two quote tokens": (
        f"{OPEN}call:write{{code:{Q}x = {Q}{Q}{Q},path:{Q}a.py{Q}}}{CLOSE}",
        [("write", {"code": 'x = ""', "path": "a.py"})],
    ),
    "a string left open before the brace, and no final close": (
        f"<|channel>thought\nList it.<channel|>call:bash{{command:{Q}ls -la}}",
        [("bash", {"command": "ls -la"})],
    ),
    "a stray colon, a string left open, no final close": (
        f"{OPEN}:call:bash{{command:{Q}pwd}}",
        [("bash", {"command": "pwd"})],
    ),
    "a string left open before the brace, the next call with no opener": (
        f"{OPEN}call:get_weather{{city:{Q}New York, NY}}{CLOSE}call:bash{{command:{Q}ls{Q}}}{CLOSE}",
        [("get_weather", {"city": "New York, NY"}), ("bash", {"command": "ls"})],
    ),
    "python call syntax with no opener after the thought": (
        f"<|channel>thought\nCheck.<channel|>call:get_weather(city={Q}Paris{Q}){CLOSE}",
        [("get_weather", {"city": "Paris"})],
    ),
    "python call syntax, then the next call in the same block": (
        f"{OPEN}call:get_weather(city={Q}New York, NY{Q})call:bash{{command:{Q}ls{Q}}}{CLOSE}",
        [("get_weather", {"city": "New York, NY"}), ("bash", {"command": "ls"})],
    ),
    "a string left open before the brace, then two calls with no markers between": (
        f"{OPEN}call:get_weather{{city:{Q}Oslo}}{CLOSE}call:bash{{}}call:bash{{command:{Q}ls{Q}}}{CLOSE}<|tool_response>",
        [("get_weather", {"city": "Oslo"}), ("bash", {}), ("bash", {"command": "ls"})],
    ),
    "a string left open before the brace, the next call in python call syntax": (
        f"{OPEN}call:get_weather{{city:{Q}Oslo}}{CLOSE}{OPEN}call:get_weather(city=Bergen, days=2){CLOSE}",
        [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Bergen", "days": 2})],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_what_gemma_writes_is_recovered_whole_and_streamed(name: str) -> None:
    text, calls = CASES[name]
    whole = _parse(text)
    assert _calls(whole) == calls
    assert whole.content is None and whole.truncated_call is None
    streamed = _streamed(text)
    assert streamed == whole
    assert [(d.code, d.offset) for d in streamed.diagnostics] == [(d.code, d.offset) for d in whole.diagnostics]


@pytest.mark.parametrize("finish_reason", [None, "length"])
def test_a_string_left_open_at_the_end_is_cut_off_unless_the_model_stopped(finish_reason: str | None) -> None:
    """``{command:<|"|>ls}`` at the end of output is a call only when the engine says the model
    stopped; cut by the engine (or not known), it is held apart, never a call to run."""
    text = f"{OPEN}call:bash{{command:{Q}ls}}"
    message = codec.load("gemma4").parse(text, tools=TOOLS, finish_reason=finish_reason)
    assert message.tool_calls == ()
    assert message.truncated_call is not None and message.truncated_call.name == "bash"
    assert message.finish_reason == "length"
