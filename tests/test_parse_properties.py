"""Hypothesis properties of parsing, for every format of the registry (docs/architecture.md, invariants 3, 4, 5, 8).

(a) Completion round trip: for a generated assistant message and template options, the
    completion the model would write is what the format's own template adds when the message is
    rendered after the generation prompt; parsing it gives the message's canonical form back.
(b) Chunking invariance: any split of a completion gives the same message, the same repairs and
    the same event sequence up to how text deltas are split; argument fragments join to the
    final JSON.
(c) Totality: parsing any text returns (lenient) or raises ParseError (strict), nothing else;
    chunked or whole, the message and the repairs are the same; and lenient parsing drops no
    text — stated exactly in ``test_lenient_parse_keeps_every_word``.

What differs between formats comes from the registry: the grammar's markers and headers, the
template's options (``FormatSpec.test_options``) and what the format keeps (``canonical``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import codec
from codec import strategies
from codec.engine.grammar import compiled
from codec.events import Event
from codec.registry import FORMATS
from support.parsing import TOOLS, WORD, delta_signature, fold, header_words, ids
from test_prompt_roundtrip import completion_after, expected_reply, made_up_id, with_ids_of

NOW = datetime(2026, 11, 30)
HISTORY = [{"role": "user", "content": "Go."}]
QUICK = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _markers(fmt: str) -> tuple[str, ...]:
    """The markers and every other token read as one (Llama 3's ``<|eom_id|>`` as ``<|eot_id|>``)."""
    grammar = compiled(FORMATS[fmt].grammar)
    return tuple(dict.fromkeys([*grammar.markers, *grammar.special_tokens]))


def _free_of_markers(fmt: str) -> st.SearchStrategy[str]:
    markers = _markers(fmt)
    alphabet = st.characters(blacklist_categories=("Cs",), max_codepoint=0x2FFF)
    text = st.text(alphabet, min_size=1, max_size=30) | st.sampled_from(
        ["a < b", "x\n\ny", "<tags>", '{"k": [1]}', "naïve “q”", " spaced ", "tab\tbed", "'''", '"""']
    )
    return text.filter(lambda t: not any(m.strip() in t for m in markers))


def _arguments(fmt: str, name: str) -> st.SearchStrategy[dict[str, Any]]:
    text = _free_of_markers(fmt)
    by_tool: dict[str, dict[str, st.SearchStrategy[Any]]] = {
        "get_weather": {"city": text, "days": st.integers(-5, 10**6), "units": st.sampled_from(["C", "F"])},
        "run_code": {"code": text, "timeout": st.none() | st.integers(0, 99) | st.floats(0.001, 1e6)},
        "search": {
            "query": text,
            "exact": st.booleans(),
            "filters": st.fixed_dictionaries({"tags": st.lists(text, max_size=3), "limit": st.integers(0, 50)}),
        },
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
        calls.append(
            {
                "id": strategies.call_id(fmt, f"{call_id[:9]}{index}", name, index),
                "type": "function",
                "function": {"name": name, "arguments": draw(_arguments(fmt, name))},
            }
        )
    return calls


@st.composite
def assistant_messages(draw: st.DrawFn, fmt: str) -> dict[str, Any]:
    """An assistant message with reasoning, content and calls, each there or not; what the
    format keeps of it is ``canonical``'s business."""
    message: dict[str, Any] = {"role": "assistant"}
    for key in ("reasoning_content", "content"):
        text = draw(st.none() | _free_of_markers(fmt))
        if text is not None:
            message[key] = text
    calls = draw(_tool_calls(fmt))
    if calls:
        message["tool_calls"] = calls
    return message


@dataclass(frozen=True)
class Completion:
    """A completion in a format's syntax, the options it was written under, and its parse."""

    text: str
    options: dict[str, Any]
    expected: codec.AssistantMessage


@st.composite
def completions(draw: st.DrawFn, fmt: str) -> Completion:
    """What the format's template writes for a drawn message after the generation prompt, with
    options drawn from the values the registry lists for the template."""
    c = codec.load(fmt)
    options = draw(strategies.options(fmt))
    message = draw(assistant_messages(fmt))
    text = completion_after(c, HISTORY, message, TOOLS, NOW, options)
    assume(text is not None)
    assert text is not None
    return Completion(text, options, expected_reply(c, [*HISTORY, message], TOOLS, NOW, options))


def stream(fmt: str, chunks: Iterable[str], options: dict[str, Any]) -> tuple[list[Event], codec.StreamParser]:
    """Feed ``chunks`` one by one; the events and the closed parser."""
    parser = codec.load(fmt).stream(tools=TOOLS, id_factory=ids, **options)
    events: list[Event] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.close()
    return events, parser


def repairs(parser: codec.StreamParser) -> list[tuple[str, int]]:
    """What was repaired, and where (a diagnostic's message may quote the chunk it was found in)."""
    return [(diagnostic.code, diagnostic.offset) for diagnostic in parser.diagnostics]


def chunked(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


@pytest.mark.parametrize("fmt", codec.formats())
def test_completion_round_trip(fmt: str) -> None:
    @QUICK
    @given(case=completions(fmt))
    def check(case: Completion) -> None:
        reply = codec.load(fmt).parse(case.text, tools=TOOLS, strict=True, id_factory=made_up_id, **case.options)
        assert with_ids_of(reply, case.expected, case.text, fmt) == case.expected

    check()


@pytest.mark.parametrize("fmt", codec.formats())
def test_chunking_invariance(fmt: str) -> None:
    @QUICK
    @given(case=completions(fmt), cuts=st.lists(st.integers(0, 10**6), max_size=12), single=st.booleans())
    def check(case: Completion, cuts: list[int], single: bool) -> None:
        whole_events, whole = stream(fmt, [case.text], case.options)
        events, parser = stream(fmt, list(case.text) if single else split(case.text, cuts), case.options)
        assert parser.message == whole.message
        assert repairs(parser) == repairs(whole)
        assert delta_signature(events) == delta_signature(whole_events)
        assert fold(events) == whole.message.to_openai()

    check()


def _noise(fmt: str) -> st.SearchStrategy[str]:
    pieces = (
        st.sampled_from([m.strip() or m for m in _markers(fmt)])
        | st.text(max_size=8)
        | st.sampled_from(
            [
                "call:",
                "{",
                "}",
                ":",
                ",",
                "[",
                "]",
                "(",
                ")",
                "'",
                '"',
                "\n",
                "x",
                "1e-5",
                "true",
                "null",
                "<",
                "<|",
                "</",
            ]
        )
    )
    return st.lists(pieces, max_size=40).map("".join)


@st.composite
def _mutated(draw: st.DrawFn, fmt: str) -> tuple[str, dict[str, Any]]:
    case = draw(completions(fmt))
    text = case.text
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
    return text, case.options


def _texts(fmt: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """Noise of markers and punctuation, or a mutated completion; with options to parse it under."""
    return st.tuples(_noise(fmt), strategies.options(fmt)) | _mutated(fmt)


@pytest.mark.parametrize("fmt", codec.formats())
def test_totality(fmt: str) -> None:
    @QUICK
    @given(case=_texts(fmt), chunk=st.integers(1, 9))
    def check(case: tuple[str, dict[str, Any]], chunk: int) -> None:
        text, options = case
        c = codec.load(fmt)
        lenient = c.parse(text, tools=TOOLS, id_factory=ids, **options)
        _, streamed = stream(fmt, chunked(text, chunk), options)
        assert streamed.message == lenient
        try:
            strict = c.parse(text, tools=TOOLS, strict=True, id_factory=ids, **options)
        except codec.ParseError as error:
            assert 0 <= error.offset <= len(text)
            assert error.line >= 1 and error.column >= 1
        else:
            assert strict == lenient
            assert not streamed.diagnostics, "a strict parse that succeeds needed no repair"

    check()


@pytest.mark.parametrize("fmt", codec.formats())
def test_repairs_depend_on_text_not_on_chunks(fmt: str) -> None:
    """The repairs (what and where) of any text are the same whole and chunked (invariant 8)."""

    @QUICK
    @given(case=_texts(fmt), chunk=st.integers(1, 9))
    def check(case: tuple[str, dict[str, Any]], chunk: int) -> None:
        text, options = case
        _, streamed = stream(fmt, chunked(text, chunk), options)
        _, whole = stream(fmt, [text], options)
        assert repairs(streamed) == repairs(whole)

    check()


def kept_text(message: codec.AssistantMessage) -> str:
    """Everything a message holds, as text: reasoning, content, ids, names and arguments of its
    calls and of the calls kept apart from ``tool_calls`` as not to run (``incomplete_calls``:
    the one the output cut off, one stopped at a limit, one without a tool name)."""
    parts = [message.reasoning or "", codec.models.content_text(message.content)]
    for call in (*message.tool_calls, *message.incomplete_calls):
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


def _alternation(texts: Iterable[str]) -> re.Pattern[str]:
    """Any of ``texts``, the longest first; a pattern that matches nothing when there are none."""
    return re.compile("|".join(re.escape(text) for text in sorted(texts, key=len, reverse=True)) or "(?!)")


@pytest.mark.parametrize("fmt", codec.formats())
def test_lenient_parse_keeps_every_word(fmt: str) -> None:
    """No text is dropped: every word (a run of 2+ letters) of the input outside the markers,
    other than the words of the fixed headers the grammar reads as structure (``header_words``),
    is somewhere in the parsed message — in reasoning, content, an id, a tool name, an argument
    key or value — or, for a duplicated argument (which JSON cannot hold twice), in the
    diagnostic that reports it."""
    markers = _alternation(_markers(fmt))
    headers = _alternation(header_words(fmt))
    # A call id written where a stream cannot read it is left out (FormatSpec.unread_call_id).
    unread = re.compile(FORMATS[fmt].unread_call_id or "(?!)")

    @QUICK
    @given(case=_texts(fmt))
    def check(case: tuple[str, dict[str, Any]]) -> None:
        text, options = case
        _, parser = stream(fmt, [text], options)
        kept = kept_text(parser.message) + " ".join(d.message for d in parser.diagnostics).lower()
        for word in WORD.findall(headers.sub(" ", markers.sub(" ", unread.sub(" ", text)))):
            assert word.lower() in kept, word

    check()


def test_header_words_come_from_the_grammar() -> None:
    """The words ``test_lenient_parse_keeps_every_word`` may not find are few and structural."""
    words = {fmt: header_words(fmt) for fmt in ("glm", "solar-open", "gemma4")}
    assert words["glm"] == frozenset()
    assert words["solar-open"] == {"assistant"}
    assert words["gemma4"] == {"model", "thought", "call", "true", "false", "null", "inf", "nan"}
