"""Terminals that end by looking ahead (Gemma's bare string value, ``{q:Paris, France}``) wait in
a stream until what follows them has arrived: their body without the look-ahead
(``codec.engine.grammar._body``) is what tells the stream to wait. Pinned where the mutation run
of ``codec/engine/grammar.py`` found no test: every split of such a call reads as the whole."""

from __future__ import annotations

import pytest

import codec
from support.parsing import outcome

GEMMA = codec.load("gemma4")
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}},
        },
    }
]


@pytest.mark.parametrize(
    "arguments",
    [
        "{q:Paris, France}",
        "{q:Paris, France, n:3}",
        "{q:Paris , France ,n:3}",
        "{n:3, q:a, b}",
    ],
)
def test_a_bare_value_split_anywhere_reads_as_the_whole(arguments: str) -> None:
    text = f"<|tool_call>call:search{arguments}<tool_call|>"
    whole = GEMMA.parse(text, tools=TOOLS)
    assert whole.tool_calls, whole.diagnostics  # the bare value is read, not refused
    for split in range(1, len(text)):
        parser = GEMMA.stream(tools=TOOLS)
        parser.feed(text[:split])
        parser.feed(text[split:])
        parser.close()
        assert outcome(parser.message) == outcome(whole), split
