"""``parse_prompt``'s strict reading (``codec.engine.whole_prompt``): each way a prompt can leave
the grammar gives a ``ParseError`` whose every field is pinned — code, position, the text found,
what the grammar would have taken, and the message built from them."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import codec
from codec.engine import grammar, whole_prompt
from codec.engine.whole_prompt import MAX_PROMPT_STACK, prompt_tree

GEMMA_ASKED = "<bos><|turn>user\nHi<turn|>\n<|turn>model\n"
GLM_ASKED = "[gMASK]<sop><|user|>hi<|assistant|>"


def error_of(fmt: str, prompt: str) -> codec.ParseError:
    with pytest.raises(codec.ParseError) as raised:
        codec.load(fmt).parse_prompt(prompt)
    return raised.value


def fields(error: codec.ParseError) -> tuple[Any, ...]:
    return error.code, error.offset, error.line, error.column, error.found, error.expected


@pytest.mark.parametrize(
    ("fmt", "prompt", "expected", "message"),
    [
        ("glm", "", ("[gMASK]",), "truncated at line 1, column 1 (offset 0): found '', expected [gMASK]."),
        (
            "solar-open",
            "<|begin|>user<|content|>x",
            ("<|end|>", "CONTENT"),
            "truncated at line 1, column 26 (offset 25): found '', expected <|end|>, CONTENT.",
        ),
        (
            "gemma4",
            "<bos><|turn>user\nHi<turn|>\n<|turn>",
            ("ROLE", "SYSTEM_ROLE", "USER_ROLE"),
            "truncated at line 3, column 8 (offset 34): found '', expected ROLE, SYSTEM_ROLE, USER_ROLE.",
        ),
    ],
)
def test_a_prompt_that_stops_early_is_truncated_at_its_end(
    fmt: str, prompt: str, expected: tuple[str, ...], message: str
) -> None:
    """Nothing was found at the end; ``expected`` is what would have gone on."""
    error = error_of(fmt, prompt)
    lines = prompt.split("\n")
    assert fields(error) == ("truncated", len(prompt), len(lines), len(lines[-1]) + 1, "", expected)
    assert str(error) == message + " (a prompt is read strictly)"


def test_unexpected_text_names_the_first_character_that_does_not_fit() -> None:
    error = error_of("glm", "[gMAS")
    assert fields(error) == ("unexpected_text", 0, 1, 1, "[", ("[gMASK]",))
    assert str(error) == "unexpected_text at line 1, column 1 (offset 0): found '[', expected [gMASK]. " + (
        "(a prompt is read strictly)"
    )


def test_a_malformed_value_is_found_whole_after_skipped_white_space() -> None:
    """Gemma's call bodies skip white space (``%ignore``): it still counts toward the position."""
    prompt = GEMMA_ASKED + "<|tool_call>call:f{\n  city:Paris}<tool_call|>"
    error = error_of("gemma4", prompt)
    assert fields(error)[:5] == ("malformed", prompt.index("Paris"), 5, 8, "Paris")
    assert error.expected[:2] == ('<|"|>', "BAD_BARE_VALUE")
    assert str(error).endswith(
        "found 'Paris', expected <|\"|>, BAD_BARE_VALUE, BAD_JSON_STRING, "
        + (
            "BAD_PY_STRING, BAD_SQUOTE, BAD_UNOPENED, FALSE, LBRACE, LBRACKET, NULL, NUMBER, TRUE. "
            "(a prompt is read strictly)"
        )
    )


def test_an_out_of_place_marker_is_found_as_written() -> None:
    prompt = GEMMA_ASKED + "<|channel>thought\n<channel|>Hi<eos>"
    error = error_of("gemma4", prompt)
    assert fields(error)[:5] == ("unexpected_marker", prompt.index("<eos>"), 5, 13, "<eos>")
    assert "<eos>" not in error.expected and "<turn|>" in error.expected
    assert str(error).endswith(". (a prompt is read strictly)")


@pytest.mark.parametrize(
    ("fmt", "prompt", "found", "expected", "missing"),
    [
        ("glm", GLM_ASKED + "</think>", "</think>", ("<think>", "end of output"), "<think>"),
        # The grammar's other choice (REASONING, CONTENT) sorts before the marker that is missing.
        ("glm", GLM_ASKED + "<think>x<|user|>", "<|user|>", ("</think>", "REASONING"), "</think>"),
        ("solar-open", "<|begin|>user<|content|>x<|begin|>", "<|begin|>", ("<|end|>", "CONTENT"), "<|end|>"),
        ("solar-open", "<|begin|>user<|end|>", "<|end|>", ("<|content|>",), "<|content|>"),
    ],
)
def test_a_marker_that_needs_another_before_it_names_the_missing_one(
    fmt: str, prompt: str, found: str, expected: tuple[str, ...], missing: str
) -> None:
    error = error_of(fmt, prompt)
    offset = prompt.rindex(found)
    assert fields(error) == ("missing_marker", offset, 1, offset + 1, found, expected)
    assert str(error) == (
        f"missing_marker at line 1, column {offset + 1} (offset {offset}): found {found!r}, "
        f"expected {', '.join(expected)}. ({missing} is missing before it)"
    )


def gemma_nested_call(depth: int) -> str:
    """A Gemma call whose argument is ``depth`` arrays, one inside the other."""
    return GEMMA_ASKED + "<|tool_call>call:f{a:" + "[" * depth + "1" + "]" * depth + "}<tool_call|>"


# The prompt up to the first `[` leaves 13 parser states: with 1011 arrays the stack reaches
# MAX_PROMPT_STACK exactly, one more goes past it.
DEEPEST = 1011


def test_a_prompt_nested_exactly_to_the_limit_fits_the_grammar() -> None:
    tree = prompt_tree("gemma4.lark", gemma_nested_call(DEEPEST))
    assert tree.data == "conversation"


def test_a_prompt_nested_past_the_limit_is_too_deep() -> None:
    prompt = gemma_nested_call(DEEPEST + 1)
    with pytest.raises(codec.ParseError) as raised:
        prompt_tree("gemma4.lark", prompt)
    offset = prompt.index("1]") + 2  # the second `]`: reducing the innermost arrays deepens the stack
    assert fields(raised.value) == ("too_deep", offset, 4, offset - prompt.rindex("\n"), "]", ())
    assert str(raised.value).endswith(
        f"found ']', expected nothing more. (nested deeper than a prompt can ({MAX_PROMPT_STACK} parser states))"
    )


def test_a_prompt_ending_in_a_marker_prefix_keeps_it_as_text() -> None:
    """The scanner holds back a trailing ``<`` until the end: it joins the text before it."""
    conversation = codec.load("gemma4").parse_prompt(GEMMA_ASKED + "ok <")
    assert conversation.messages[-1].content == "ok <"


def test_prompts_of_every_format_read_back_one_after_the_other() -> None:
    """Parser states are numbered per grammar: what one grammar accepts in a state is not what
    another accepts in the state of the same number."""
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    for fmt in codec.formats() * 2:
        c = codec.load(fmt)
        assert c.render_conversation(c.parse_prompt(c.render(messages))) == c.render(messages)


def test_a_grammar_without_a_conversation_rule_cannot_read_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new format may ship a completion grammar only: ``parse_prompt`` says so by name."""
    glm = grammar.compiled("glm.lark")
    completions_only = dataclasses.replace(glm, starts=(grammar.COMPLETION_START,))
    monkeypatch.setattr(whole_prompt, "compiled", lambda name: completions_only)
    with pytest.raises(codec.CodecError) as raised:
        prompt_tree("glm.lark", "[gMASK]<sop>")
    assert str(raised.value) == "glm.lark has no conversation rule: this format cannot read prompts back"
