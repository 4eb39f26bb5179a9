"""Constrained decoding (codec/constrain, docs/constraint.md) checked with llguidance's own
matcher over a tokenizer of bytes plus each format's special tokens (nothing downloaded).

- Round trip: for random tools and an assistant reply whose arguments follow the tools'
  schemas, the completion the format's template writes is accepted token by token, may end
  where it ends (stop token or EOS allowed there), and parses back (strict) to the reply.
- Rejections: each wrong completion is refused at exactly the first token that goes wrong.
"""

from __future__ import annotations

import json
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
from codec.errors import CodecError
from codec.registry import FORMATS
from test_prompt_roundtrip import completion_after, expected_reply, made_up_id, with_ids_of

NOW = datetime(2026, 11, 30)
HISTORY = [{"role": "user", "content": "Go."}]
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
"""No ``max_examples``: the profile's (tests/conftest.py; ``ci`` runs 300)."""

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
        call_id = draw(st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=9, max_size=9)) + str(index)
        calls.append(
            {"id": call_id, "type": "function", "function": {"name": function["name"], "arguments": arguments}}
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


@pytest.mark.parametrize("fmt", codec.formats())
def test_template_completions_are_accepted_and_parse_back(fmt: str) -> None:
    c = codec.load(fmt)

    @PROPERTY
    @given(case=replies(fmt))
    def check(case: tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]) -> None:
        tools, message, options = case
        text = completion_after(c, HISTORY, message, tools, NOW, options)
        assume(text is not None)
        assert text is not None
        expected = expected_reply(c, [*HISTORY, message], tools, NOW, options)
        built = build(c, tools=tools, **options)
        m = matcher(fmt, built.grammar)
        for index, token in enumerate(tokens(fmt, text)):
            assert m.consume_token(token), f"refused token {index} of {text!r}: {m.get_error()[:400]}"
        _ends_well(fmt, m, text)
        reply = c.parse(text, tools=tools, strict=True, id_factory=made_up_id, **options)
        assert with_ids_of(reply, expected, text) == expected

    check()


# ---- rejections: the first wrong token is refused --------------------------------------------

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "units": {"enum": ["C", "F"]}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}},
]

# Each format's writing of: an opening before calls, a call with (city, extra members) and the
# ending after calls; the strings are the format's own syntax.
GLM = {
    "open": "</think>",
    "call": "<tool_call>get_weather<arg_key>city</arg_key><arg_value>{city}</arg_value>{more}</tool_call>",
    "days": "<arg_key>days</arg_key><arg_value>{v}</arg_value>",
    "units": "<arg_key>units</arg_key><arg_value>{v}</arg_value>",
    "country": "<arg_key>country</arg_key><arg_value>{v}</arg_value>",
    "end": "<|observation|>",
}
SOLAR = {
    "open": "<|tool_calls|>",
    "call": "<|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather<|tool_call:args|>"
    '{{"city": "{city}"{more}}}<|tool_call:end|>',
    "days": ', "days": {v}',
    "units": ', "units": {v}',
    "country": ', "country": {v}',
    "end": "<|calls|>",
}
GEMMA = {
    "open": "",
    "call": '<|tool_call>call:get_weather{{city:<|"|>{city}<|"|>{more}}}<tool_call|>',
    "days": ",days:{v}",
    "units": ",units:{v}",
    "country": ",country:{v}",
    "end": "<turn|>",
}
SYNTAX = {"glm": GLM, "glm-effort": GLM, "solar-open": SOLAR, "gemma4": GEMMA}
STRING = {"glm": "{}", "glm-effort": "{}", "solar-open": '"{}"', "gemma4": '<|"|>{}<|"|>'}


def _call(fmt: str, city: str = "Paris", **more: str) -> str:
    syntax = SYNTAX[fmt]
    extra = "".join(syntax[key].format(v=value) for key, value in more.items())
    return syntax["call"].format(city=city, more=extra)


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


FORMATS_UNDER_TEST = codec.formats()


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_well_formed_calls_are_accepted(fmt: str) -> None:
    syntax = SYNTAX[fmt]
    text = syntax["open"] + _call(fmt, days="3", units=STRING[fmt].format("C")) + syntax["end"]
    m = accepted(fmt, text)
    assert m.is_accepting()
    c = codec.load(fmt)
    [call] = c.parse(text, tools=TOOLS, strict=True).tool_calls
    assert call.arguments == {"city": "Paris", "days": 3, "units": "C"}


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_wrong_type_is_refused(fmt: str) -> None:
    good, bad = _split(SYNTAX[fmt]["open"] + _call(fmt, days=STRING[fmt].format("x")), "days")
    value_start = {"glm": "x", "glm-effort": "x", "solar-open": '"x"', "gemma4": '<|"|>'}[fmt]
    good2, bad2 = _split(bad, value_start)
    refused_at(fmt, good + good2, bad2)


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_missing_required_argument_is_refused(fmt: str) -> None:
    text = SYNTAX[fmt]["open"] + _call(fmt)
    # the call without its only required member: cut where the member starts, refuse the close
    member = {"glm": "<arg_key>city", "glm-effort": "<arg_key>city", "solar-open": '"city"', "gemma4": "city"}[fmt]
    good, _ = _split(text, member)
    close = {"glm": "</tool_call>", "glm-effort": "</tool_call>", "solar-open": "}", "gemma4": "}"}[fmt]
    refused_at(fmt, good, close)


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_unknown_key_is_refused_when_additional_properties_is_false(fmt: str) -> None:
    text = SYNTAX[fmt]["open"] + _call(fmt, country=STRING[fmt].format("FR"))
    good, bad = _split(text, "country")
    refused_at(fmt, good, bad)  # after city only days and units may follow
    unknown = text.replace("country", "uk")
    good, bad = _split(unknown, "uk")
    refused_at(fmt, good + "u", bad[1:])  # "u" may begin "units"; "k" cannot


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_enum_miss_is_refused(fmt: str) -> None:
    text = SYNTAX[fmt]["open"] + _call(fmt, units=STRING[fmt].format("K"))
    good, bad = _split(text, "K")
    refused_at(fmt, good, bad)


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_unknown_tool_name_is_refused(fmt: str) -> None:
    text = SYNTAX[fmt]["open"] + _call(fmt).replace("get_weather", "get_wxather")
    good, bad = _split(text, "xather")
    refused_at(fmt, good, bad)


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_no_call_under_tool_choice_none(fmt: str) -> None:
    text = SYNTAX[fmt]["open"] + _call(fmt)
    first = {
        "glm": "<tool_call>",
        "glm-effort": "<tool_call>",
        "solar-open": "<|tool_call:begin|>",
        "gemma4": "<|tool_call>",
    }
    good, bad = _split(text, first[fmt])
    refused_at(fmt, good, bad, tool_choice="none")
    accepted(fmt, good, tool_choice="auto")


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_ending_without_a_call_is_refused_under_required(fmt: str) -> None:
    answer = {
        "glm": "</think>Sure.",
        "glm-effort": "</think>Sure.",
        "solar-open": "<|content|>Sure.",
        "gemma4": "Sure.",
    }
    stop = {"glm": "<|user|>", "glm-effort": "<|user|>", "solar-open": "<|flush|>", "gemma4": "<turn|>"}
    for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
        refused_at(fmt, answer[fmt], stop[fmt], tool_choice=choice)
        m = accepted(fmt, answer[fmt], tool_choice=choice)
        assert not m.is_accepting()
        assert m.compute_logit_bias()[tokenizer(fmt).eos_token] == 0
    m = accepted(fmt, answer[fmt] + stop[fmt])  # "auto" may end there
    assert m.is_accepting()


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_named_tool_choice_refuses_other_tools(fmt: str) -> None:
    text = SYNTAX[fmt]["open"] + _call(fmt).replace("get_weather", "ping")
    good, bad = _split(text, "ping")
    refused_at(fmt, good, bad, tool_choice={"type": "function", "function": {"name": "get_weather"}})


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_second_call_refused_without_parallel_calls(fmt: str) -> None:
    one = SYNTAX[fmt]["open"] + _call(fmt)
    second = {
        "glm": "<tool_call>",
        "glm-effort": "<tool_call>",
        "solar-open": "<|tool_call:begin|>",
        "gemma4": "<|tool_call>",
    }
    refused_at(fmt, one, second[fmt], parallel_tool_calls=False)
    accepted(fmt, one + _call(fmt), parallel_tool_calls=True)


MALFORMED = {
    # GLM: the value not closed before the next key (the lenient parser inserts </arg_value>)
    "glm": ("</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris", "<arg_key>"),
    # GLM: a missing <arg_value> opener
    "glm-effort": ("</think><tool_call>get_weather<arg_key>city</arg_key>", "Paris</arg_value>"),
    # Solar: arguments that are not JSON
    "solar-open": (
        "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather<|tool_call:args|>{",
        "'city': 'Paris'}",
    ),
    # Gemma: a JSON-quoted string instead of <|"|>
    "gemma4": ("<|tool_call>call:get_weather{city:", '"Paris"}'),
}
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


@pytest.mark.parametrize("fmt", FORMATS_UNDER_TEST)
def test_malformed_variants_the_parser_repairs_are_refused(fmt: str) -> None:
    good, bad = MALFORMED[fmt]
    refused_at(fmt, good, bad)


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
    opening = {"glm": "</think>", "glm-effort": "</think>", "solar-open": "<|content|>", "gemma4": ""}[fmt]
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
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer", "minimum": 3}, "s": {"type": "string", "pattern": "^a+$"}},
                },
            },
        }
    ]
    for fmt in ("glm", "solar-open", "gemma4"):
        built = build(codec.load(fmt), tools=tools)
        assert {(note.code, note.path) for note in built.notes} >= {
            ("unenforced_keyword", "/properties/n/minimum"),
            ("unenforced_keyword", "/properties/s/pattern"),
        }, built.notes
        syntax = SYNTAX[fmt]
        n_value = {"glm": "1", "glm-effort": "1", "solar-open": "1", "gemma4": "1"}[fmt]
        call = {
            "glm": f"<tool_call>f<arg_key>n</arg_key><arg_value>{n_value}</arg_value></tool_call>",
            "solar-open": "<|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>f<|tool_call:args|>"
            f'{{"n": {n_value}}}<|tool_call:end|>',
            "gemma4": f"<|tool_call>call:f{{n:{n_value}}}<tool_call|>",
        }[fmt]
        accepted(fmt, syntax["open"] + call, tools=tools)  # looser, never wrong: 1 < minimum is let through


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
