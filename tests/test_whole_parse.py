"""``Codec.parse`` makes no events (nobody reads them), so it leaves the arguments' long fragments
unwritten (``ArgumentsEmitter(lazy=True)``): a string value's JSON escaping and the JSON of an
arguments object read at once are never built, only bounded. The message must still be exactly
what a streaming parser given the same text in one piece ends with — above all where a call
stops at ``max_argument_chars``, whose check needs the JSON length the lazy parse did not write
(it counts it, ``settle``, when the bound could pass the limit)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import codec
from codec.arguments import emitter
from support.parsing import ids

CODE = 'def f(x):\n    return {"x": x, "tab": "\\t"}  # “quoted” <b>\n' * 40  # quotes, newlines, escapes
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            },
        },
    }
]


def completion(fmt: str, content: str) -> str:
    """One ``write_file`` call whose ``content`` is ``content``, then a word of answer."""
    if fmt == "glm":
        arguments = "".join(
            f"<arg_key>{key}</arg_key><arg_value>{value}</arg_value>"
            for key, value in (("path", "a.py"), ("content", content))
        )
        call = f"<tool_call>write_file{arguments}</tool_call>"
        return f"R</think>{call}"
    if fmt == "gemma4":
        return f'<|tool_call>call:write_file{{content:<|"|>{content}<|"|>,path:<|"|>a.py<|"|>}}<tool_call|>'
    arguments = json.dumps({"path": "a.py", "content": content}, ensure_ascii=False)
    call = f"<|tool_call:begin|>c1<|tool_call:name|>write_file<|tool_call:args|>{arguments}<|tool_call:end|>"
    return f"<|think|>R<|end|><|begin|>assistant<|tool_calls|>{call}<|calls|>"


def streamed(fmt: str, text: str, limits: codec.Limits) -> codec.AssistantMessage:
    parser = codec.load(fmt).stream(tools=TOOLS, id_factory=ids, limits=limits)
    parser.feed(text)
    parser.close()
    return parser.message


def everything(reply: codec.AssistantMessage) -> tuple[Any, ...]:
    return reply, reply.finish_reason, reply.incomplete_calls, reply.truncated_call, reply.diagnostics


@pytest.mark.parametrize("fmt", ["glm", "gemma4", "solar-open"])
@pytest.mark.parametrize("limit", [20, 40, 200, 1_000, 2_600, 2_700, 3_000, 20_000, 8_000_000])
@pytest.mark.parametrize("cut", [False, True])
def test_a_whole_parse_stops_a_call_where_one_piece_streamed_does(fmt: str, limit: int, cut: bool) -> None:
    text = completion(fmt, CODE)
    if cut:  # cut off inside the long value: a truncated call
        text = text[: len(text) * 2 // 3]
    limits = codec.Limits(max_argument_chars=limit)
    whole = codec.load(fmt).parse(text, tools=TOOLS, id_factory=ids, limits=limits)
    assert everything(whole) == everything(streamed(fmt, text, limits))


@pytest.mark.parametrize("fmt", ["glm", "gemma4", "solar-open"])
def test_the_limits_above_split_the_calls_both_ways(fmt: str) -> None:
    """The limits of the test above include some the arguments pass and some they do not, so it
    compares stopped calls as well as finished ones."""
    sizes = {
        limit: codec.load(fmt).parse(completion(fmt, CODE), tools=TOOLS, limits=codec.Limits(max_argument_chars=limit))
        for limit in (200, 20_000)
    }
    assert [bool(reply.tool_calls) for reply in sizes.values()] == [False, True]
    assert "too_large" in [d.code for d in sizes[200].diagnostics]


def test_a_parse_makes_no_events_and_a_stream_does() -> None:
    text = completion("glm", "x")
    parser = codec.load("glm").stream(tools=TOOLS)
    assert parser.feed(text) != []
    assert codec.load("glm").parse(text, tools=TOOLS).tool_calls[0].arguments == {"path": "a.py", "content": "x"}


@pytest.mark.parametrize("fmt", ["glm", "gemma4", "solar-open"])
def test_a_whole_parse_never_writes_the_long_value_as_json(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the lazy emitter, counted: the JSON encoder never sees the long value in a
    whole parse, while a stream of the same text encodes it to send it out."""
    text = completion(fmt, CODE)
    seen: list[int] = []
    encode, dumps = emitter._ENCODE, emitter.dumps

    def counting_encode(text: str) -> str:
        seen.append(len(text))
        return encode(text)

    def counting_dumps(value: Any) -> str:
        written = dumps(value)
        seen.append(len(written))
        return written

    monkeypatch.setattr(emitter, "_ENCODE", counting_encode)
    monkeypatch.setattr(emitter, "dumps", counting_dumps)
    codec.load(fmt).parse(text, tools=TOOLS)
    assert max(seen, default=0) < len(CODE)
    streamed(fmt, text, codec.Limits())
    assert max(seen) >= len(CODE)
