"""A cut-off call is never runnable (issue 21), for every format, whole and streamed.

The completion is what each format's own template writes for a reply with two calls
(``test_prompt_roundtrip.completion_after``). It is cut at every offset, and read with nothing
after the cut under each engine finish reason, and with each of the format's stop tokens after
it. For every reading:

- a call whose closing marker arrived is in ``tool_calls``, with its whole arguments;
- a call whose closing marker did not arrive is in ``tool_calls`` only when the model ended the
  output itself (a stop token, or the engine's ``finish_reason="stop"``), and then only with
  arguments that are whole: every argument it has is the one the model wrote, and it has all of
  them only if nothing but the closing marker was missing;
- a call begun and not finished makes ``finish_reason`` ``"length"``;
- streamed one character at a time and three at a time, the events fold to the same message,
  and the fragments of an unfinished call never join into JSON (``support.parsing.fold``).
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

import codec
from codec.chunks import ChunkStream
from codec.engine.grammar import CompiledGrammar, compiled
from codec.registry import FORMATS
from codec.strategies import call_id
from support.calls import HISTORY, NOW, call_ends, tool
from support.parsing import fold, ids, is_json
from test_prompt_roundtrip import completion_after

TOOLS = [
    tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}),
    tool("run_code", {"code": {"type": "string"}, "options": {"type": "object"}}),
]
ARGUMENTS = [{"city": "Paris", "days": 3}, {"code": "print(1)", "options": {"fast": True}}]
REASONS = (None, "length", "stop")


def _message(fmt: str, arguments: list[dict[str, Any]]) -> dict[str, Any]:
    calls = [
        {
            "id": call_id(fmt, f"abcdefghi{i}", tool["function"]["name"], i),
            "type": "function",
            "function": {"name": tool["function"]["name"], "arguments": a},
        }
        for i, (tool, a) in enumerate(zip(TOOLS, arguments, strict=True))
    ]
    return {"role": "assistant", "tool_calls": calls}


def two_calls(fmt: str, arguments: list[dict[str, Any]] = ARGUMENTS) -> str:
    """The reply with two calls as the template writes it. Where it writes one call per message
    (``FormatSpec.calls_per_message``, gpt-oss), the reply is two messages, the second after the
    generation prompt that follows the first; a template that refuses two calls in one message
    (Llama 3's: ``This model only supports single tool-calls at once!``) is skipped, once it is
    seen to refuse them (tests/test_llama3.py cuts its one call at every offset)."""
    c, message = codec.load(fmt), _message(fmt, arguments)
    if FORMATS[fmt].calls_per_message is None:
        text = completion_after(c, HISTORY, message, TOOLS, NOW, {})
        if text is None:
            with pytest.raises(codec.RenderError):
                c.render([*HISTORY, message], tools=TOOLS, now=NOW)
            pytest.skip(f"{fmt}'s template writes one call per message")
        return text
    first, second = ({**message, "tool_calls": [call]} for call in message["tool_calls"])
    one = completion_after(c, HISTORY, first, TOOLS, NOW, {})
    two = completion_after(c, [*HISTORY, first], second, TOOLS, NOW, {})
    assert one is not None and two is not None
    prompt = c.render([*HISTORY, first], tools=TOOLS, now=NOW)
    bare = c.render([*HISTORY, first], tools=TOOLS, now=NOW, add_generation_prompt=False)
    return one + prompt[len(bare) :] + two


def closers(fmt: str, text: str) -> list[tuple[int, int]]:
    """Where each call's closing marker starts and ends in ``text`` (``support.calls.call_ends``)."""
    return call_ends(fmt, text)


def _streamed(fmt: str, text: str, size: int, reason: str | None) -> tuple[codec.AssistantMessage, dict[str, Any]]:
    parser = codec.load(fmt).stream(tools=TOOLS, id_factory=ids)
    events = [event for i in range(0, len(text), size) for event in parser.feed(text[i : i + size])]
    events += parser.close(reason)
    return parser.message, fold(events)


def spelled_closers(fmt: str, text: str) -> list[tuple[int, int]]:
    """``closers``, each start moved back over the white space of the longest spelling the
    grammar gives the closing marker there (GLM-4.5's ``\n</tool_call>``: cut before its new line,
    only the closing marker is missing). An implied closer (Mistral's) is written nowhere: its span
    stays as ``closers`` gives it."""
    grammar = compiled(FORMATS[fmt].grammar)
    spellings = [spelling for spelling, name in grammar.scanned.items() if name == "CALL_CLOSE"]
    return [
        (min((end - len(s) for s in spellings if text.startswith(s, end - len(s))), default=start), end)
        for start, end in closers(fmt, text)
    ]


def _judge(fmt: str, cut: int, reply: codec.AssistantMessage, model_stopped: bool) -> None:
    spans = spelled_closers(fmt, two_calls(fmt))
    for index, (_, end) in enumerate(spans):
        if cut >= end:
            assert len(reply.tool_calls) > index, f"call {index} closed before the cut at {cut} is not a call"
    for index, call in enumerate(reply.tool_calls):
        start, end = spans[index]
        whole = ARGUMENTS[index]
        assert call.name == TOOLS[index]["function"]["name"]
        if cut >= end:
            assert call.arguments == whole
            continue
        assert model_stopped, f"cut at {cut}: call {index} was not closed, the engine did not say stop"
        assert all(whole.get(key, object()) == value for key, value in call.arguments.items()), (cut, call)
        if cut < start:  # more than the closing marker was missing: not every argument came
            assert len(call.arguments) < len(whole), (cut, call)
    if reply.incomplete_calls:
        assert reply.finish_reason == "length"


@pytest.mark.parametrize("fmt", codec.formats())
def test_no_unfinished_call_is_ever_a_call_to_run(fmt: str) -> None:
    text = two_calls(fmt)
    c = codec.load(fmt)
    for cut in range(len(text) + 1):
        readings = [(text[:cut], reason, reason == "stop") for reason in REASONS]
        readings += [(text[:cut] + stop, None, True) for stop in c.stop_tokens]
        for completion, reason, model_stopped in readings:
            reply = c.parse(completion, tools=TOOLS, id_factory=ids, finish_reason=reason)
            _judge(fmt, cut, reply, model_stopped)


@pytest.mark.parametrize("fmt", codec.formats())
@pytest.mark.parametrize("size", [1, 3])
def test_streamed_unfinished_calls_are_never_complete_json(fmt: str, size: int) -> None:
    text = two_calls(fmt)
    c = codec.load(fmt)
    for cut in range(len(text) + 1):
        readings = [(text[:cut], reason) for reason in REASONS] + [(text[:cut] + s, None) for s in c.stop_tokens]
        for completion, reason in readings:
            whole = c.parse(completion, tools=TOOLS, id_factory=ids, finish_reason=reason)
            message, folded = _streamed(fmt, completion, size, reason)  # fold checks the fragments
            assert (message, message.incomplete_calls, message.finish_reason) == (
                whole,
                whole.incomplete_calls,
                whole.finish_reason,
            )
            assert folded == message.to_openai()


def _inside_first_value(fmt: str, text: str) -> int:
    """An offset inside the first call's string value (``Par|is``)."""
    return text.index("Paris") + 3


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_stop_token_inside_an_unfinished_call_leaves_it_unfinished(fmt: str) -> None:
    text = two_calls(fmt)
    cut = _inside_first_value(fmt, text)
    for stop in codec.load(fmt).stop_tokens:
        reply = codec.load(fmt).parse(text[:cut] + stop, tools=TOOLS, id_factory=ids, finish_reason="stop")
        assert reply.tool_calls == () and reply.finish_reason == "length", stop
        assert reply.truncated_call is not None and reply.truncated_call.arguments == {"city": "Par"}, stop


@pytest.mark.parametrize("fmt", codec.formats())
def test_another_calls_opener_inside_an_unfinished_call_leaves_it_unfinished(fmt: str) -> None:
    """The first call is cut inside its value and the second call follows whole: the first is
    kept apart, the second is a call."""
    if "CALL_OPEN" in compiled(FORMATS[fmt].grammar).patterns:
        pytest.skip("a call opens with a pattern (a `{`): inside an unfinished value it is text, and ends nothing")
    text = two_calls(fmt)
    opener = compiled(FORMATS[fmt].grammar).display("CALL_OPEN")
    second = text.rindex(opener)
    reply = codec.load(fmt).parse(text[: _inside_first_value(fmt, text)] + text[second:], tools=TOOLS, id_factory=ids)
    assert [call.arguments for call in reply.tool_calls] == [ARGUMENTS[1]]
    assert [call.arguments for call in reply.incomplete_calls] == [{"city": "Par"}]
    assert "unfinished_call" in [d.code for d in reply.diagnostics]
    assert reply.finish_reason == "length"


@pytest.mark.parametrize("fmt", codec.formats())
def test_the_engines_finish_reason_decides_a_call_missing_only_its_closer(fmt: str) -> None:
    """Cut right before the last call's closing marker: its arguments are whole. The model
    ending there (``stop``) makes it a call, with a diagnostic; the engine cutting it
    (``length``), or not saying, keeps it apart."""
    if "CALL_CLOSE" in compiled(FORMATS[fmt].grammar).implied:
        pytest.skip("no closing marker to miss: a call ends with its arguments (tests/test_implied_closer.py)")
    text = two_calls(fmt)
    start, _ = closers(fmt, text)[-1]
    c = codec.load(fmt)
    stopped = c.parse(text[:start], tools=TOOLS, id_factory=ids, finish_reason="stop")
    assert [call.arguments for call in stopped.tool_calls] == ARGUMENTS
    assert stopped.finish_reason == "tool_calls" and "missing_marker" in [d.code for d in stopped.diagnostics]
    for reason in ("length", None, "abort"):
        cut = c.parse(text[:start], tools=TOOLS, id_factory=ids, finish_reason=reason)
        assert [call.arguments for call in cut.tool_calls] == ARGUMENTS[:1], reason
        assert cut.truncated_call is not None and cut.truncated_call.arguments == ARGUMENTS[1]
        assert cut.finish_reason == "length"
    turn = c.prepare(HISTORY, tools=TOOLS, now=NOW)  # the serving path reads the reason too
    for reason, calls, finish in (("stop", 2, "tool_calls"), ("length", 1, "length")):
        [choice] = turn.completion(text[:start], model="m", finish_reason=reason)["choices"]
        assert (len(choice["message"]["tool_calls"]), choice["finish_reason"]) == (calls, finish)


@pytest.mark.parametrize("fmt", codec.formats())
def test_chunks_of_a_cut_call_carry_no_runnable_call(fmt: str) -> None:
    """The serving envelope: the arguments a client joins from the chunks of a call cut off by
    the engine are not JSON, and the last chunk says ``length``, whatever the engine said."""
    text = two_calls(fmt)
    cut = _inside_first_value(fmt, text)
    for reason in ("stop", "length", None):
        stream = ChunkStream(codec.load(fmt).stream(tools=TOOLS, id_factory=ids), model="m")
        chunks = [chunk for char in text[:cut] for chunk in stream.feed(char)]
        chunks += stream.close(upstream_finish_reason=reason)
        joined = "".join(
            call["function"].get("arguments", "")
            for chunk in chunks
            for choice in chunk["choices"]
            for call in choice["delta"].get("tool_calls", [])
        )
        assert joined.startswith("{") and not is_json(joined), joined
        assert chunks[-1]["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_call_stopped_at_a_limit_ends_the_reply_with_length(fmt: str) -> None:
    text = two_calls(fmt, [ARGUMENTS[0], {"code": "x", "options": {"deep": {"deeper": [1]}}}])
    for limits in (codec.Limits(max_argument_chars=12), codec.Limits(max_depth=1)):
        reply = codec.load(fmt).parse(text, tools=TOOLS, limits=limits, finish_reason="stop")
        assert reply.incomplete_calls and reply.finish_reason == "length", limits
        stream = ChunkStream(codec.load(fmt).stream(tools=TOOLS, limits=limits), model="m")
        chunks = stream.feed(text) + stream.close(upstream_finish_reason="stop")
        assert chunks[-1]["choices"][0]["finish_reason"] == "length"


LONG = 'Here is a "quoted" line,\twith a tab\nand a newline. ' * 4


@pytest.mark.parametrize("fmt", codec.formats())
def test_the_size_limit_stops_a_call_at_the_same_character_however_chunked(fmt: str) -> None:
    """``max_argument_chars``: the call stops after the character (of a string) or the value
    (of anything else) that takes its JSON past the limit; whole, one character at a time and
    at random cuts, the same message, stopped calls, diagnostics and content."""
    text = two_calls(fmt, [{"city": LONG, "days": 123456789}, ARGUMENTS[1]])
    c = codec.load(fmt)

    def reading(reply: codec.AssistantMessage) -> tuple[Any, ...]:
        codes = [(d.code, d.offset, d.message) for d in reply.diagnostics]
        return reply, reply.incomplete_calls, codes, reply.finish_reason

    rng = random.Random(fmt)
    for limit in [*range(8, 40, 3), *range(180, 330, 7)]:
        limits = codec.Limits(max_argument_chars=limit)
        whole = reading(c.parse(text, tools=TOOLS, id_factory=ids, limits=limits))
        cuts = sorted(rng.sample(range(1, len(text)), 30))
        for pieces in ([*text], [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]):
            parser = c.stream(tools=TOOLS, id_factory=ids, limits=limits)
            for piece in pieces:
                parser.feed(piece)
            parser.close()
            assert reading(parser.message) == whole, (limit, pieces[:3])


def _seconds_for_white_space(fmt: str, size: int) -> float:
    """Best of five: ``size`` spaces fed one at a time where the completion's first call
    would start (content could start there too), then a letter. CPU time of this process, not
    wall time: on a busy machine a run longer than the scheduler's time slice is preempted and a
    short one is not, which made linear growth look quadratic under two test workers."""
    text = two_calls(fmt)
    grammar = compiled(FORMATS[fmt].grammar)
    before = text[: _first_call(grammar, text)]
    best = float("inf")
    for _ in range(5):
        parser = codec.load(fmt).stream()
        start = time.process_time()
        parser.feed(before)
        for _ in range(size):
            parser.feed(" ")
        parser.feed("x")
        parser.close()
        best = min(best, time.process_time() - start)
    return best


def _first_call(grammar: CompiledGrammar, text: str) -> int:
    """Where the first call starts in ``text``: its opening marker; where a call opens with a
    pattern, the marker that opens the list it stands in (Mistral v0.3's ``CALLS_OPEN``), or
    where the grammar has none (Llama 4's calls, one after the other), the pattern's first match."""
    if "CALL_OPEN" not in grammar.patterns:
        return text.index(grammar.display("CALL_OPEN"))
    if "CALLS_OPEN" in grammar.markers.values():
        return text.index(grammar.display("CALLS_OPEN"))
    found = grammar.patterns["CALL_OPEN"].regex.search(text)
    assert found is not None, text
    return found.start()


@pytest.mark.scale
@pytest.mark.parametrize("fmt", codec.formats())
def test_white_space_fed_a_character_at_a_time_costs_linear_time(fmt: str) -> None:
    """Sixteen times the white space costs about sixteen times as long (quadratic: 256 times),
    compared in one run with a wide margin (four times linear, a quarter of quadratic). The
    white space waits where content could start, to see whether a marker follows it (layout) or
    text (content)."""
    small, large = _seconds_for_white_space(fmt, 2_500), _seconds_for_white_space(fmt, 40_000)
    assert large < 64 * small, (small, large)


@pytest.mark.parametrize("fmt", codec.formats())
def test_diagnostics_are_capped(fmt: str) -> None:
    """Untrusted output cannot make one diagnostic per character: past ``max_diagnostics`` one
    more says so, and the rest are repaired the same, unlisted; no text is lost. The marker is
    one no reply may start with: a call's closing marker, or where the format writes none (an
    implied closer), the one that opens a call's arguments."""
    grammar = compiled(FORMATS[fmt].grammar)
    name = "CALL_ARGS" if "CALL_CLOSE" in grammar.implied else "CALL_CLOSE"
    if name in grammar.patterns:  # a call closes with a pattern (Mistral v0.3's `}`): a turn's marker
        name = FORMATS[fmt].turn_terminals[0]
    closer = grammar.display(name)
    text = (closer + "x") * 3_000
    reply = codec.load(fmt).parse(text, limits=codec.Limits(max_diagnostics=50))
    assert len(reply.diagnostics) == 51
    assert reply.diagnostics[-1].code == "too_many_diagnostics"
    assert ((reply.reasoning or "") + (reply.content or "")).count("x") == 3_000
    assert len(codec.load(fmt).parse(text).diagnostics) == 1_001


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_chunk_starting_with_the_space_before_a_value_stops_the_call_where_a_whole_parse_does(fmt: str) -> None:
    """The room a size limit leaves counts what goes before the next value (a named key, ``, ``):
    a chunk that begins with the white space before an object (`` {"fast"``) stops the call at
    the same offset as the whole text, whatever the limit."""
    text = two_calls(fmt)
    cut = text.find(' {"fast"')
    if cut < 0:
        pytest.skip("the format writes no JSON object after a space")
    c = codec.load(fmt)
    for limit in range(8, 80):
        limits = codec.Limits(max_argument_chars=limit)
        whole = c.parse(text, tools=TOOLS, id_factory=ids, limits=limits)
        parser = c.stream(tools=TOOLS, id_factory=ids, limits=limits)
        for piece in (text[:cut], text[cut : cut + 4], text[cut + 4 :]):
            parser.feed(piece)
        parser.close()
        offsets = [(d.code, d.offset) for d in parser.message.diagnostics]
        assert offsets == [(d.code, d.offset) for d in whole.diagnostics], limit
