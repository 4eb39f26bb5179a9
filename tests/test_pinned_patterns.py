"""How long a stream holds back a pattern token (Gemma's call bodies) before it is released.

``codec.engine.patterns`` takes a match once ``_PATIENCE`` characters follow it, and holds it
while more text could still change it (white space inside a key, a literal still growing).
Holding too long is invisible in the final message but delays every delta; deciding too early
changes the message. Pinned where the mutation run of ``codec/engine/patterns.py`` found no
test: the exact bound, and the waits that must not end early."""

from __future__ import annotations

from typing import Any

import pytest

import codec
from codec.engine.patterns import _PATIENCE
from codec.events import ToolCallDelta
from support.parsing import outcome, stream_chunks

GEMMA = codec.load("gemma4")
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"a": {}, "b": {}, "my        key": {}}},
        },
    }
]
OPEN = "<|tool_call>call:f{"
FOLLOWING = ",b:2345678901234567890"


def released_arguments(text: str) -> str:
    """The argument text a stream has released after being fed ``text`` in one piece."""
    parser = GEMMA.stream(tools=TOOLS)
    return "".join(event.arguments for event in parser.feed(text) if isinstance(event, ToolCallDelta))


@pytest.mark.parametrize(
    ("value", "as_json"),
    [("1", "1"), ('"x"', '"x"'), ("true", "true"), ("[1, 2]", "[1, 2]")],
)
def test_a_token_is_held_until_patience_characters_follow_it_and_no_longer(value: str, as_json: str) -> None:
    released = f'{{"a": {as_json}'
    held = released_arguments(OPEN + "a:" + value + FOLLOWING[: _PATIENCE - 1])
    assert not held.startswith(released), held
    assert released_arguments(OPEN + "a:" + value + FOLLOWING[:_PATIENCE]).startswith(released)


@pytest.mark.parametrize(("value", "as_json"), [('"x"', '"x"'), ("[1, 2]", "[1, 2]"), ("nullable", '"nullable"')])
def test_a_finished_token_is_released_long_before_the_call_ends(value: str, as_json: str) -> None:
    # Well past the bound, whatever the value began with (a quote, a bracket, a letter that
    # begins a literal too), the value is out: nothing waits for the call's end.
    assert released_arguments(OPEN + "a:" + value + FOLLOWING).startswith(f'{{"a": {as_json}')


def test_white_space_inside_a_key_longer_than_the_bound_does_not_split_it() -> None:
    text = OPEN + "my        key:1}<tool_call|>"
    whole = GEMMA.parse(text, tools=TOOLS)
    assert whole.tool_calls[0].arguments == {"my        key": 1}
    for split in range(len(OPEN), len(text)):
        streamed = stream_chunks("gemma4", [text[:split], text[split:]], tools=TOOLS)[1]
        assert outcome(streamed) == outcome(whole), split


@pytest.mark.parametrize("opening", ['"abc', "'abc"])
def test_an_unclosed_quote_streams_without_error_and_waits(opening: str) -> None:
    text = OPEN + "a:" + opening
    assert released_arguments(text) == ""
    streamed = stream_chunks("gemma4", list(text), tools=TOOLS)[1]
    assert outcome(streamed) == outcome(GEMMA.parse(text, tools=TOOLS))


def test_text_after_a_call_body_without_its_close_marker_ends_the_call_at_the_bound() -> None:
    # Nothing the grammar accepts after `}` matches `@@@…`: once `_PATIENCE` such characters
    # arrived the call is over and they are content, not held until the output ends.
    def events(stray: str) -> list[str]:
        parser = GEMMA.stream(tools=TOOLS, id_factory=lambda index: f"call_{index}")
        return [type(event).__name__ for event in parser.feed(OPEN + "a:1}" + stray)]

    assert "ToolCallEnd" not in events("@" * (_PATIENCE - 1))
    decided = events("@" * _PATIENCE)
    assert "ToolCallEnd" in decided and decided[-1] == "ContentDelta", decided


@pytest.mark.parametrize(
    "body",
    [
        "e:t,l\nodAxx:",  # the key after a bare value spans a line (fuzz finding parse-gemma4-3)
        "e:t,long\nkey:1}",
        "e:t,\n\n\n\n\n\n\n\n\nkey:1}",  # white space past the bound before the next key
    ],
)
def test_a_bare_value_waits_while_its_look_ahead_may_still_hold(body: str) -> None:
    """A bare value ends at the comma before the next ``key:``; the key may hold a newline the
    value cannot, so the look-ahead reaches past where the value's own text stops. Until the
    look-ahead decides, the value waits: every split reads as the whole does."""
    text = OPEN + body
    whole = GEMMA.parse(text, tools=TOOLS)
    for split in range(len(OPEN), len(text)):
        streamed = stream_chunks("gemma4", [text[:split], text[split:]], tools=TOOLS)[1]
        assert outcome(streamed) == outcome(whole), split
