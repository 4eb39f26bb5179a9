"""A grammar whose calls have no closing marker declares ``CALL_CLOSE`` (an implied closer,
``codec/engine/grammar.py``): the model ends a call by finishing its arguments. Every format
whose grammar does so is checked here, from its registry entry: the closer is supplied where the
next call, the stop token or the end of output follows whole arguments — silently, even in a
strict parse — and a call cut off inside its arguments is still a cut-off call."""

from __future__ import annotations

import pytest

import codec
from codec.engine.grammar import compiled
from codec.registry import FORMATS

IMPLIED = [name for name, spec in FORMATS.items() if compiled(spec.grammar).implied]

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
    },
    {"type": "function", "function": {"name": "run_code", "parameters": {"type": "object"}}},
]


def _without_stop(c: codec.Codec, completion: str) -> str:
    for token in c.stop_tokens:
        completion = completion.removesuffix(token)
    return completion


def test_an_implied_closer_is_no_free_text() -> None:
    for spec in FORMATS.values():
        grammar = compiled(spec.grammar)
        assert grammar.implied <= {"CALL_CLOSE"}
        assert not grammar.implied & grammar.free_text
        assert not grammar.implied & set(grammar.markers.values())


@pytest.mark.parametrize("fmt", IMPLIED)
@pytest.mark.parametrize("stopped", [True, False])
def test_calls_end_with_their_arguments(fmt: str, stopped: bool) -> None:
    c = codec.load(fmt)
    completion = c.spec.examples.two_calls
    completion = completion if stopped else _without_stop(c, completion)
    reply = c.parse(completion, tools=TOOLS, strict=True)
    assert [call.arguments for call in reply.tool_calls] == [{"city": "Paris"}, {"city": "Rome"}]
    assert reply.diagnostics == ()
    assert reply.finish_reason == "tool_calls"


@pytest.mark.parametrize("fmt", IMPLIED)
def test_the_last_call_ends_when_streamed_too(fmt: str) -> None:
    c = codec.load(fmt)
    parser = c.stream(tools=TOOLS, strict=True)
    events = [event for char in _without_stop(c, c.spec.examples.one_call) for event in parser.feed(char)]
    assert not any(isinstance(event, codec.ToolCallEnd) for event in events)  # more may come
    ended = [event for event in parser.close() if isinstance(event, codec.ToolCallEnd)]
    assert [event.call.arguments for event in ended] == [{"city": "Paris"}]


@pytest.mark.parametrize("fmt", IMPLIED)
def test_arguments_cut_off_are_no_call(fmt: str) -> None:
    c = codec.load(fmt)
    reply = c.parse(c.spec.examples.code_head + "print(1)", tools=TOOLS)
    assert reply.tool_calls == ()
    assert reply.truncated_call is not None and reply.truncated_call.name == "run_code"
    assert reply.finish_reason == "length"
    assert "truncated" in {d.code for d in reply.diagnostics}
