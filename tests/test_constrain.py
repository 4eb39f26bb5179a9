"""Constrained decoding (codec/constrain, docs/constraint.md) checked with llguidance's own
matcher over a tokenizer of bytes plus each format's special tokens (nothing downloaded).

- Round trip: for random tools and an assistant reply whose arguments follow the tools'
  schemas, the completion the format's template writes is accepted token by token, may end
  where it ends (stop token or EOS allowed there), and parses back (strict) to the reply.
- Rejections: each wrong completion is refused at exactly the first token that goes wrong.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import pytest

pytest.importorskip("llguidance")

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import codec
from codec import strategies
from codec.constrain import build, constraint
from codec.constrain.check import matcher, token_id, tokenizer, tokens
from codec.engine.grammar import compiled
from codec.errors import CodecError
from codec.registry import FORMATS
from support import goldens
from support.parsing import TOOLS as PARSE_TOOLS
from support.parsing import load_golden
from test_prompt_roundtrip import completion_after, expected_reply, made_up_id, with_ids_of

NOW = datetime(2026, 11, 30)
HISTORY = [{"role": "user", "content": "Go."}]
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
"""No ``max_examples``: the profile's (tests/conftest.py; ``ci`` runs 100)."""

_PYTHON_WORDS = {"True", "False", "None"}


def _plain(text: str) -> bool:
    """Text a union with ``string`` keeps as a string when written raw (GLM)."""
    written = text.strip()
    if written[:1] in ("[", "{", '"', "'", "\\") or written in _PYTHON_WORDS:
        return False
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def _types(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else list(declared or [])
    return names + (["null"] if schema.get("nullable") else [])


@st.composite
def values(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    """A value ``schema`` admits (the schemas ``codec.strategies.tools`` draws)."""
    kinds = _types(schema)
    if "enum" in schema:
        # an enum string a union would read as JSON ("0" in string|null) is codec's canonical
        # business (test_prompt_roundtrip), not the constraint's
        options = [o for o in schema["enum"] if kinds == ["string"] or _plain(o)]
        assume(options)
        return draw(st.sampled_from(options))
    kind = draw(st.sampled_from(kinds))
    if kind == "string":
        text = strategies.texts(max_size=6)
        return draw(text if kinds == ["string"] else text.filter(_plain))
    if kind == "integer":
        return draw(st.integers(-(10**9), 10**9))
    if kind == "number":
        return draw(st.integers(-999, 999) | st.floats(allow_nan=False, allow_infinity=False))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "null":
        return None
    if kind == "array":
        return draw(st.lists(values(schema["items"]), max_size=3))
    return draw(objects(schema))


@st.composite
def objects(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    """An object of ``schema``'s properties, in the schema's order, the required ones always."""
    required = set(schema.get("required", ()))
    found: dict[str, Any] = {}
    for key, sub in schema.get("properties", {}).items():
        if key in required or draw(st.booleans()):
            found[key] = draw(values(sub))
    return found


@st.composite
def replies(draw: st.DrawFn, fmt: str) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """Tools, an assistant reply calling some of them, and template options."""
    tools = draw(st.lists(strategies.tools(), min_size=1, max_size=3, unique_by=lambda t: t["function"]["name"]))
    for tool in tools:  # a deferred tool is left out of GLM's prompt, and so is its schema
        tool["function"].pop("defer_loading", None)
    message: dict[str, Any] = {"role": "assistant"}
    for key in ("reasoning_content", "content"):
        if draw(st.booleans()):
            message[key] = draw(strategies.texts())
    calls = []
    for index in range(draw(st.integers(0, 3))):
        function = draw(st.sampled_from(tools))["function"]
        arguments = draw(objects(function["parameters"]))
        drawn = draw(st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=9, max_size=9)) + str(index)
        written_id = strategies.call_id(fmt, drawn, function["name"], index)
        calls.append(
            {"id": written_id, "type": "function", "function": {"name": function["name"], "arguments": arguments}}
        )
    if calls:
        message["tool_calls"] = calls
    return tools, message, draw(strategies.options(fmt))


def _ends_well(fmt: str, m: Any, text: str) -> None:
    """The matcher may stop here: stopped after a stop token, else EOS and a stop token allowed."""
    stops = FORMATS[fmt].stop_tokens
    if any(text.endswith(stop) for stop in stops):
        assert m.is_accepting()
        return
    assert m.is_accepting()
    allowed = m.compute_logit_bias()
    assert allowed[tokenizer(fmt).eos_token] > 0
    assert any(allowed[token_id(fmt, stop)] > 0 for stop in stops)


# The formats whose family has a call syntax for constraint() (a registry fact: ``Family.constraint``).
FORMATS_UNDER_TEST = [fmt for fmt in codec.formats() if codec.registry.FORMATS[fmt].family.constraint is not None]


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_template_completions_are_accepted_and_parse_back(fmt: str) -> None:
    c = codec.load(fmt)

    @PROPERTY
    @given(case=replies(fmt))
    def check(case: tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]) -> None:
        tools, message, options = case
        text = completion_after(c, HISTORY, message, tools, NOW, options)
        assume(text is not None)
        assert text is not None
        # A known limit where a call opens with no marker (Llama 3's bare object, docs/formats.md):
        # the constraint leaves text that begins as a call opens (`{`) to calls, so a reply of
        # text that starts so is one it never generates.
        opener = compiled(FORMATS[fmt].grammar).patterns.get("CALL_OPEN")
        assume(message.get("tool_calls") or opener is None or opener.first is None or not opener.first.match(text))
        expected = expected_reply(c, [*HISTORY, message], tools, NOW, options)
        built = build(c, tools=tools, **options)
        m = matcher(fmt, built.grammar)
        for index, token in enumerate(tokens(fmt, text)):
            assert m.consume_token(token), f"refused token {index} of {text!r}: {m.get_error()[:400]}"
        _ends_well(fmt, m, text)
        reply = c.parse(text, tools=tools, strict=True, id_factory=made_up_id, **options)
        assert with_ids_of(reply, expected, text, fmt) == expected

    check()


# ---- rejections: the first wrong token is refused --------------------------------------------

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather.",  # gpt-oss's template writes no tool without one
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "units": {"enum": ["C", "F"]}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {"name": "ping", "description": "Ping.", "parameters": {"type": "object", "properties": {}}},
    },
]


def written(fmt: str, message: dict[str, Any], tools: list[dict[str, Any]] = TOOLS) -> str:
    """What the format's model writes for ``message`` — its own template's writing, after the
    history's generation prompt — without the stop string the engine leaves out."""
    c = codec.load(fmt)
    text = completion_after(c, HISTORY, message, tools, NOW, {})
    assert text is not None, fmt
    for stop in c.stop_tokens:
        text = text.removesuffix(stop)
    return text


def _call(fmt: str, arguments: dict[str, Any] | None = None, name: str = "get_weather") -> str:
    """The reply with one call (``{"city": "Paris"}`` by default), opening included."""
    call_id = strategies.call_id(fmt, "abcdefghi0", name, 0)
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    if arguments is None:
        call["function"]["arguments"] = {"city": "Paris"}
    return written(fmt, {"role": "assistant", "tool_calls": [call]})


def _differing(fmt: str, one: str, other: str) -> tuple[str, str]:
    """``one`` cut where it first differs from ``other``, a special token being one piece."""
    specials = "|".join(
        re.escape(token) for token in sorted(codec.load(fmt).spec.stop_tokens + _markers(fmt), key=len, reverse=True)
    )
    pieces, others = re.findall(f"{specials}|.", one, re.S), re.findall(f"{specials}|.", other, re.S)
    same = next(
        (i for i, (a, b) in enumerate(zip(pieces, others, strict=False)) if a != b), min(len(pieces), len(others))
    )
    at = sum(map(len, pieces[:same]))
    return one[:at], one[at:]


def _markers(fmt: str) -> tuple[str, ...]:
    return tuple(compiled(FORMATS[fmt].grammar).markers)


def _answer(fmt: str) -> tuple[str, str]:
    """The format's answer with no call (its family's ``content_only`` parse golden: a variant
    such as glm-effort shares its family's), and the stop marker it ends with."""
    family = FORMATS[fmt].family
    written_by = [
        name for name in goldens.formats_in(goldens.ROOT / "parse" / "content_only") if FORMATS[name].family is family
    ]
    text, _ = load_golden("content_only", fmt if fmt in written_by else written_by[0])
    for stop in codec.load(fmt).stop_tokens:
        if text.endswith(stop):
            return text.removesuffix(stop), stop
    return text, _ending(fmt, text)


def _content_then_call(fmt: str, answer: str) -> bool:
    """Whether the format reads a call after text (its one-call example after ``answer``). Asked
    only of a call that opens with a pattern (Llama 3's bare object, which only a whole reply
    can be); a marker or a header opens a call anywhere (gpt-oss's after its own message end)."""
    if "CALL_OPEN" not in compiled(FORMATS[fmt].grammar).patterns:
        return True
    try:  # as the template writes it: strict (a lenient parse may read a call the template never writes)
        return bool(codec.load(fmt).parse(answer + FORMATS[fmt].examples.one_call, tools=TOOLS, strict=True).tool_calls)
    except codec.ParseError:
        return False


def _opener(fmt: str) -> str:
    """The text a call opens with: the head the template writes before it
    (``FormatSpec.call_head``), its opening marker, or where the call opens with no marker
    (Llama 3's bare object, ``CALL_OPEN`` a pattern) the character its pattern starts with."""
    if FORMATS[fmt].call_head:
        return FORMATS[fmt].call_head
    grammar = compiled(FORMATS[fmt].grammar)
    pattern = grammar.patterns.get("CALL_OPEN")
    if pattern is not None and pattern.first is not None:
        return pattern.first.pattern.lstrip("\\")
    return grammar.display("CALL_OPEN")


def _ending(fmt: str, text: str) -> str:
    """A stop marker the reply ``text`` may end with (the first of the format's that fits)."""
    c = codec.load(fmt)
    for stop in c.stop_tokens:
        try:
            c.parse(text + stop, tools=TOOLS, strict=True)
        except codec.ParseError:
            continue
        return stop
    raise AssertionError(f"{fmt}: no stop marker ends {text!r}")


def refused_at(fmt: str, good: str, bad: str, **kwargs: Any) -> None:
    """``good`` is accepted token by token, and the first token of ``bad`` after it is not."""
    grammar = constraint(codec.load(fmt), tools=kwargs.pop("tools", TOOLS), **kwargs)
    m = matcher(fmt, grammar)
    for index, token in enumerate(tokens(fmt, good)):
        assert m.consume_token(token), f"refused token {index} of the good prefix {good!r}: {m.get_error()[:300]}"
    wrong = tokens(fmt, bad)[0]
    assert m.compute_logit_bias()[wrong] == 0, f"{bad!r} allowed after {good!r}"
    assert m.validate_tokens([wrong]) == 0


def accepted(fmt: str, text: str, **kwargs: Any) -> Any:
    grammar = constraint(codec.load(fmt), tools=kwargs.pop("tools", TOOLS), **kwargs)
    m = matcher(fmt, grammar)
    for index, token in enumerate(tokens(fmt, text)):
        assert m.consume_token(token), f"refused token {index} of {text!r}: {m.get_error()[:300]}"
    return m


def _split(text: str, at: str) -> tuple[str, str]:
    """``text`` cut before the first ``at``."""
    index = text.index(at)
    return text[:index], text[index:]


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_well_formed_calls_are_accepted(fmt: str) -> None:
    arguments = {"city": "Paris", "days": 3, "units": "C"}
    text = _call(fmt, arguments)
    ended = text + _ending(fmt, text)  # where the stop closes the call too (gpt-oss), it is its end
    m = accepted(fmt, ended)
    assert m.is_accepting()
    [call] = codec.load(fmt).parse(ended, tools=TOOLS, strict=True).tool_calls
    assert call.arguments == arguments


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_wrong_type_is_refused(fmt: str) -> None:
    good, bad = _differing(fmt, _call(fmt, {"city": "Paris", "days": "x"}), _call(fmt, {"city": "Paris", "days": 3}))
    refused_at(fmt, good, bad)


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_missing_required_argument_is_refused(fmt: str) -> None:
    # the call without its only required member: cut where the member starts, refuse the close
    good, close = _differing(fmt, _call(fmt, {}), _call(fmt))
    refused_at(fmt, good, close)


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_unknown_key_is_refused_when_additional_properties_is_false(fmt: str) -> None:
    text = _call(fmt, {"city": "Paris", "country": "FR"})
    good, bad = _split(text, "country")
    refused_at(fmt, good, bad)  # after city only days and units may follow
    unknown = text.replace("country", "uk")
    good, bad = _split(unknown, "uk")
    refused_at(fmt, good + "u", bad[1:])  # "u" may begin "units"; "k" cannot


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_enum_miss_is_refused(fmt: str) -> None:
    text = _call(fmt, {"city": "Paris", "units": "K"})
    good, bad = _split(text, "K")
    refused_at(fmt, good, bad)


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_unknown_tool_name_is_refused(fmt: str) -> None:
    text = _call(fmt).replace("get_weather", "get_wxather")
    good, bad = _split(text, "xather")
    refused_at(fmt, good, bad)


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_no_call_under_tool_choice_none(fmt: str) -> None:
    good, bad = _split(_call(fmt), _opener(fmt))
    refused_at(fmt, good, bad, tool_choice="none")
    accepted(fmt, good, tool_choice="auto")


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_ending_without_a_call_is_refused_under_required(fmt: str) -> None:
    answer, stop = _answer(fmt)
    for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
        if not _content_then_call(fmt, answer):  # a reply is text or a call (Llama 3): no text then
            refused_at(fmt, "", answer, tool_choice=choice)
            continue
        refused_at(fmt, answer, stop, tool_choice=choice)
        m = accepted(fmt, answer, tool_choice=choice)
        assert not m.is_accepting()
        assert m.compute_logit_bias()[tokenizer(fmt).eos_token] == 0
    m = accepted(fmt, answer + stop)  # "auto" may end there
    assert m.is_accepting()


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_named_tool_choice_refuses_other_tools(fmt: str) -> None:
    text = _call(fmt, {}, name="ping")
    good, bad = _split(text, "ping")
    refused_at(fmt, good, bad, tool_choice={"type": "function", "function": {"name": "get_weather"}})


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_second_call_refused_without_parallel_calls(fmt: str) -> None:
    if "CALL_CLOSE" in FORMATS[fmt].stop_terminals:
        pytest.skip("a call's closer stops generation (gpt-oss's <|call|>): a completion holds one call")
    one = _call(fmt)
    refused_at(fmt, one, _opener(fmt), parallel_tool_calls=False)
    twice = one + one[one.index(_opener(fmt)) :]
    # Where a call ends only with the turn (Llama 3's object, then <|eot_id|>), a second call
    # cannot follow the first in one reply: the format reads the two as one call and text.
    if len(codec.load(fmt).parse(twice, tools=TOOLS).tool_calls) == 2:
        accepted(fmt, twice, parallel_tool_calls=True)


MORE_MALFORMED = [
    ("gemma4", "<|tool_call>", ":get_weather{}"),  # no `call` prefix
    ("gemma4", "<|tool_call>call:get_weather", "(city:"),  # parentheses
    ("gemma4", "<|tool_call>call:get_weather{", '<|"|>city<|"|>:'),  # a quoted key
    ("solar-open", "<|tool_calls|><|tool_call:begin|>a1b2c", "<|tool_call:name|>"),  # a short id
    (
        "solar-open",
        '<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather<|tool_call:args|>{"city": "Paris"',
        ",}",
    ),
    ("glm", "</think><tool_call>get_weather", "\n<arg_key>"),  # a newline after the name
    ("glm", "", "<tool_call>"),  # a call inside the reasoning
]


MALFORMED_GOLDENS = [
    (case, fmt)
    for case, fmt in goldens.entries("parse")
    if case.startswith("malformed_")
    and load_golden(case, fmt)[1]["diagnostics"]  # repaired, not a trap
    and fmt in FORMATS_UNDER_TEST
]


@pytest.mark.parametrize(("case", "fmt"), MALFORMED_GOLDENS)
def test_malformed_variants_the_parser_repairs_are_refused(case: str, fmt: str) -> None:
    """What models write wrong and the lenient parser repairs — each family's ``malformed_*``
    parse goldens — is never admitted whole: one of its tokens is refused, or it cannot end."""
    completion, expected = load_golden(case, fmt)
    tools = PARSE_TOOLS if expected["tools"] else None
    m = matcher(fmt, constraint(codec.load(fmt), tools=tools, **expected["options"]))
    taken = all(m.consume_token(token) for token in tokens(fmt, completion))
    assert not (taken and m.is_accepting()), f"{case} admitted whole"


@pytest.mark.parametrize(("fmt", "good", "bad"), MORE_MALFORMED)
def test_more_malformed_variants_are_refused(fmt: str, good: str, bad: str) -> None:
    if bad == ",}":
        refused_at(fmt, good + ",", "}")
    else:
        refused_at(fmt, good, bad)


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_marker_text_spelled_in_bytes_is_refused_in_free_text(fmt: str) -> None:
    """The parser reads a marker wherever its characters appear: free text never holds them."""
    marker = FORMATS[fmt].stop_tokens[0]
    answer, _ = _answer(fmt)
    opening = answer[: answer.index("Hello")]  # what opens the content
    grammar = constraint(codec.load(fmt), tools=TOOLS)
    m = matcher(fmt, grammar)
    spelled = tokens(fmt, opening) + list(("say " + marker).encode())
    consumed = m.try_consume_tokens(spelled)
    assert consumed == len(spelled) - 1  # all but the marker's last character


def test_options_move_the_start() -> None:
    """The grammar starts where the generation prompt under the options leaves the model."""
    refused_at("glm-effort", "", "</think>", regular=True)  # regular mode: no reasoning is open
    accepted("glm-effort", "</think>", regular=False)  # thinking: the completion starts in it
    accepted("gemma4", "<|channel>thought\nhm<channel|>Hi", enable_thinking=True)
    refused_at("gemma4", "Hi", "<eos>", tool_choice="required", enable_thinking=False)


def test_tool_choice_errors() -> None:
    c = codec.load("glm")
    with pytest.raises(CodecError):
        constraint(c, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "nope"}})
    with pytest.raises(CodecError):
        constraint(c, tools=None, tool_choice="required")
    with pytest.raises(CodecError):
        constraint(c, tools=TOOLS, tool_choice=3)  # type: ignore[arg-type]


def test_unenforced_schema_features_are_reported_and_loosened() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "description": "A tool.",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer", "minimum": 3}, "s": {"type": "string", "pattern": "^a+$"}},
                },
            },
        }
    ]
    for fmt in FORMATS_UNDER_TEST:
        built = build(codec.load(fmt), tools=tools)
        assert {(note.code, note.path) for note in built.notes} >= {
            ("unenforced_keyword", "/properties/n/minimum"),
            ("unenforced_keyword", "/properties/s/pattern"),
        }, built.notes
        call_id = strategies.call_id(fmt, "abcdefghi0", "f", 0)
        call = {"id": call_id, "type": "function", "function": {"name": "f", "arguments": {"n": 1}}}
        text = written(fmt, {"role": "assistant", "tool_calls": [call]}, tools)
        accepted(fmt, text, tools=tools)  # looser, never wrong: 1 < minimum is let through


def test_a_turn_constrains_from_where_its_prompt_left_the_model() -> None:
    """Gemma 4 after a tool result goes on inside a thought channel: the options alone do not
    say so, the prepared turn does. Its constraint admits the reply there and refuses the
    same reply written as if a new turn had begun."""
    from codec.formats._demo_scenario import HISTORY, NOW
    from codec.formats._demo_scenario import TOOLS as DEMO_TOOLS

    gemma = codec.load("gemma4")
    first = gemma.prepare(HISTORY, tools=DEMO_TOOLS, now=NOW, enable_thinking=True)
    reply = first.parse(gemma.spec.demo.completion)
    second = first.follow_up(reply, {call.id: "ok" for call in reply.tool_calls})
    grammar = second.constraint()
    text = "Both answers are in.<channel|>Here is what I found."
    m = matcher("gemma4", grammar)
    for token in tokens("gemma4", text):
        assert m.consume_token(token), m.get_error()[:300]
    assert second.parse(text).reasoning == "Both answers are in."
    fresh = matcher("gemma4", grammar)
    opening = tokens("gemma4", "<|channel>")[0]  # a new thought channel: the prompt opened it already
    assert fresh.compute_logit_bias()[opening] == 0
    assert grammar != gemma.constraint(tools=DEMO_TOOLS, enable_thinking=True)


@pytest.mark.parametrize("fmt", [fmt for fmt in codec.formats() if fmt not in FORMATS_UNDER_TEST] or [None])
def test_a_format_without_a_call_syntax_is_refused(fmt: str | None) -> None:
    """A family with no call syntax (``Family.constraint is None``) makes no grammar: it says so."""
    if fmt is None:
        pytest.skip("every registered family has a call syntax")
    with pytest.raises(codec.CodecError, match="no call syntax"):
        codec.load(fmt).constraint(tools=TOOLS)


def test_a_special_token_in_square_brackets_is_named_in_angle_brackets() -> None:
    """llguidance names special tokens in angle brackets only: Mistral's ``[TOOL_CALLS]`` is
    ``<TOOL_CALLS>``, as mistral-common's llguidance tokenizer names it; others stay as written."""
    from codec.constrain.lark import special_token

    assert special_token("[TOOL_CALLS]") == "<TOOL_CALLS>"
    assert special_token("<|im_end|>") == "<|im_end|>"
    with pytest.raises(ValueError):
        special_token("[")
