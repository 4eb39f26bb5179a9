"""Hypothesis properties of parsing, per format (DESIGN invariants 3, 4 and 5).

(a) Completion round trip: for a generated assistant message, the completion the model would
    write is what the format's own template adds when the message is rendered after the
    generation prompt; parsing it gives the message back.
(b) Chunking invariance: any split of a completion gives the same message and the same event
    sequence up to how text deltas are split; argument fragments join to the final JSON.
(c) Totality: parsing any text returns (lenient) or raises ParseError (strict), nothing else;
    and lenient parsing drops no text — stated exactly in ``test_lenient_parse_keeps_every_word``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec
from codec.engine.grammar import compiled
from parse_support import TOOLS, delta_signature, fold, ids, stream_chunks

FORMATS = ["glm", "glm-effort", "solar-open", "gemma4"]
NOW = datetime(2026, 11, 30)
QUICK = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _markers(fmt: str) -> tuple[str, ...]:
    return tuple(compiled(codec.load(fmt).spec.grammar).markers)


def _free_of_markers(fmt: str) -> st.SearchStrategy[str]:
    markers = _markers(fmt)
    alphabet = st.characters(blacklist_categories=("Cs",), max_codepoint=0x2FFF)
    text = st.text(alphabet, min_size=1, max_size=30) | st.sampled_from(
        ["a < b", "x\n\ny", "<tags>", "{\"k\": [1]}", "naïve “q”", " spaced ", "tab\tbed", "'''", '"""']
    )
    return text.filter(lambda t: not any(m.strip() in t for m in markers))


def _stripped(fmt: str) -> st.SearchStrategy[str]:
    return _free_of_markers(fmt).map(str.strip).filter(bool)


def _arguments(fmt: str, name: str) -> st.SearchStrategy[dict[str, Any]]:
    text = _free_of_markers(fmt)
    by_tool: dict[str, dict[str, st.SearchStrategy[Any]]] = {
        "get_weather": {"city": text, "days": st.integers(-5, 10**6), "units": st.sampled_from(["C", "F"])},
        "run_code": {"code": text, "timeout": st.none() | st.integers(0, 99) | st.floats(0.001, 1e6)},
        "search": {"query": text, "exact": st.booleans(),
                   "filters": st.fixed_dictionaries({"tags": st.lists(text, max_size=3), "limit": st.integers(0, 50)})},
        # "null" as a string and null are one text in GLM's raw values: a loss, not a parse bug.
        "set_flag": {"value": st.none() | text.filter(lambda t: t != "null")},
    }
    fields = by_tool[name]
    return st.fixed_dictionaries({}, optional=fields)


@st.composite
def _tool_calls(draw: st.DrawFn, fmt: str) -> list[dict[str, Any]]:
    calls = []
    for index in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(["get_weather", "run_code", "search", "set_flag"]))
        call_id = draw(st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=10, max_size=10))
        calls.append({"id": f"{call_id[:9]}{index}", "type": "function",
                      "function": {"name": name, "arguments": draw(_arguments(fmt, name))}})
    return calls


@st.composite
def assistant_messages(draw: st.DrawFn, fmt: str) -> dict[str, Any]:
    """An assistant message in the form the format can carry (see each format's canonical rules:
    GLM and Gemma strip content, Solar drops content beside tool calls)."""
    calls = draw(_tool_calls(fmt))
    message: dict[str, Any] = {"role": "assistant"}
    reasoning = draw(st.none() | _free_of_markers(fmt))
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    content = None if (fmt == "solar-open" and calls) else draw(st.none() | _stripped(fmt))
    if fmt == "solar-open" and not calls and content is None:
        content = draw(_stripped(fmt))
    if content is not None:
        message["content"] = content
    if calls:
        message["tool_calls"] = calls
    return message


def _options(fmt: str) -> dict[str, Any]:
    return {"enable_thinking": True} if fmt == "gemma4" else {}


def completion_of(fmt: str, message: dict[str, Any]) -> str:
    """What the template adds for ``message`` after the generation prompt, minus the new line
    Gemma writes after its end-of-turn marker (it separates turns; the model stops before it)."""
    c, history = codec.load(fmt), [{"role": "user", "content": "Go."}]
    prompt = c.render(history, tools=TOOLS, now=NOW, **_options(fmt))
    full = c.render(history + [message], tools=TOOLS, now=NOW, add_generation_prompt=False, **_options(fmt))
    assert full.startswith(prompt)
    completion = full[len(prompt):]
    return completion.removesuffix("\n") if fmt == "gemma4" else completion


def expected_message(fmt: str, message: dict[str, Any]) -> codec.AssistantMessage:
    """``message`` as parsing returns it: ids the format does not carry are generated."""
    expected = codec.AssistantMessage.model_validate(message)
    if fmt != "solar-open":
        calls = [call.model_copy(update={"id": ids(i)}) for i, call in enumerate(expected.tool_calls)]
        expected = expected.model_copy(update={"tool_calls": tuple(calls)})
    return expected


@st.composite
def format_and_message(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    fmt = draw(st.sampled_from(FORMATS))
    return fmt, draw(assistant_messages(fmt))


@pytest.mark.parametrize("fmt", FORMATS)
def test_completion_round_trip(fmt: str) -> None:
    @QUICK
    @given(message=assistant_messages(fmt))
    def check(message: dict[str, Any]) -> None:
        completion = completion_of(fmt, message)
        reply = codec.load(fmt).parse(completion, tools=TOOLS, strict=True, id_factory=ids, **_options(fmt))
        assert reply == expected_message(fmt, message)

    check()


@pytest.mark.parametrize("fmt", FORMATS)
def test_chunking_invariance(fmt: str) -> None:
    @QUICK
    @given(message=assistant_messages(fmt), cuts=st.lists(st.integers(0, 10**6), max_size=12),
           single=st.booleans())
    def check(message: dict[str, Any], cuts: list[int], single: bool) -> None:
        completion = completion_of(fmt, message)
        whole_events, whole, _ = stream_chunks(fmt, [completion], **_options(fmt))
        if single:
            chunks = list(completion)
        else:
            points = sorted({cut % (len(completion) + 1) for cut in cuts})
            chunks = [completion[a:b] for a, b in zip([0, *points], [*points, len(completion)])]
        events, split, _ = stream_chunks(fmt, chunks, **_options(fmt))
        assert split == whole
        assert delta_signature(events) == delta_signature(whole_events)
        assert fold(events) == whole.to_openai()

    check()


def _noise(fmt: str) -> st.SearchStrategy[str]:
    pieces = st.sampled_from([m.strip() or m for m in _markers(fmt)]) | st.text(max_size=8) | st.sampled_from(
        ["call:", "{", "}", ":", ",", "[", "]", "(", ")", "'", '"', "\n", "x", "1e-5", "true", "null", "<", "<|", "</"]
    )
    return st.lists(pieces, max_size=40).map("".join)


@st.composite
def _mutated(draw: st.DrawFn, fmt: str) -> str:
    text = completion_of(fmt, draw(assistant_messages(fmt)))
    for _ in range(draw(st.integers(1, 4))):
        a = draw(st.integers(0, len(text)))
        b = draw(st.integers(a, min(len(text), a + 30)))
        action = draw(st.sampled_from(["delete", "duplicate", "insert"]))
        if action == "delete":
            text = text[:a] + text[b:]
        elif action == "duplicate":
            text = text[:b] + text[a:b] + text[b:]
        else:
            text = text[:a] + draw(_noise(fmt)) + text[a:]
    return text


@pytest.mark.parametrize("fmt", FORMATS)
def test_totality(fmt: str) -> None:
    @QUICK
    @given(text=_noise(fmt) | _mutated(fmt), chunk=st.integers(1, 9))
    def check(text: str, chunk: int) -> None:
        c = codec.load(fmt)
        lenient = c.parse(text, tools=TOOLS, id_factory=ids, **_options(fmt))
        _, streamed, _ = stream_chunks(fmt, [text[i:i + chunk] for i in range(0, len(text), chunk)], **_options(fmt))
        assert streamed == lenient
        try:
            strict = c.parse(text, tools=TOOLS, strict=True, id_factory=ids, **_options(fmt))
        except codec.ParseError as error:
            assert 0 <= error.offset <= len(text)
            assert error.line >= 1 and error.column >= 1
        else:
            assert strict == lenient

    check()


_WORD = re.compile(r"[^\W\d_]{2,}")


def kept_text(message: codec.AssistantMessage) -> str:
    """Everything a message holds, as text: reasoning, content, ids, names and arguments."""
    parts = [message.reasoning or "", codec.models.content_text(message.content)]
    for call in message.tool_calls:
        parts += [call.id or "", call.name, call.arguments_json, json.dumps(call.arguments, ensure_ascii=False)]
        parts += [call.name + key for key in call.arguments]  # a key glued to the name, split by repair
        parts += [str(value) for value in _leaves(call.arguments)]
    return "\n".join(parts).lower()


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [*value.keys(), *(leaf for item in value.values() for leaf in _leaves(item))]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


@pytest.mark.parametrize("fmt", FORMATS)
def test_lenient_parse_keeps_every_word(fmt: str) -> None:
    """No text is dropped: every word (a run of 2+ letters) of the input outside the markers,
    other than the words of the fixed headers that follow some of them (Solar's ``assistant``
    role, Gemma's ``model``, ``thought`` and ``call``, which the grammar reads as structure
    wherever it expects them), is somewhere in the parsed message — in reasoning, content, an id, a tool name, an argument
    key or value — or, for a duplicated argument (which JSON cannot hold twice), in the
    diagnostic that reports it."""
    markers = re.compile("|".join(re.escape(m) for m in sorted(_markers(fmt), key=len, reverse=True)))
    headers = re.compile(r"assistant|model|thought|call")

    @QUICK
    @given(text=_noise(fmt) | _mutated(fmt))
    def check(text: str) -> None:
        parser = codec.load(fmt).stream(tools=TOOLS, id_factory=ids, **_options(fmt))
        parser.feed(text)
        parser.close()
        kept = kept_text(parser.message) + " ".join(d.message for d in parser.diagnostics).lower()
        for word in _WORD.findall(headers.sub(" ", markers.sub(" ", text))):
            assert word.lower() in kept, word

    check()
