"""Terminals that end by looking ahead (Gemma's bare string value, ``{q:Paris, France}``) wait in
a stream until what follows them has arrived: their body without the look-ahead
(``codec.engine.grammar._body``) is what tells the stream to wait. Pinned where the mutation run
of ``codec/engine/grammar.py`` found no test: every split of such a call reads as the whole."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lark.lexer import TerminalDef
from lark.load_grammar import load_grammar

import codec
from codec.engine.grammar import compiled, is_marker, pattern_of
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


def _terminal(definition: str) -> TerminalDef:
    """The terminal ``T`` of a one-rule Lark grammar, compiled as ``compiled`` compiles terminals."""
    grammar, _ = load_grammar(f"start: T\nX: /b(?=c)/\nT: {definition}\n", "test", [], False)
    terminals, _, _ = grammar.compile(["start"], {"T", "X"})
    return next(term for term in terminals if term.name == "T")


@pytest.mark.parametrize(
    ("definition", "before_look_ahead", "beyond"),
    [
        (r"/[a-z ]+?/ /(?=\s*,)/", "ab c", "ab,"),
        ('("a" | "q") X', "qb", "q"),  # Lark writes `(?:a|q)b(?=c)`: the first group is not the end's
        ('"a"? X', "b", "ab c"),  # `(?:a)?b(?=c)`
        (r"/[x,]+(?<![,\s])(?=z)/", "x,", "x,z"),  # a look-behind right before the look-ahead goes too
        (r"/\((?=x)/", "(", "(x"),  # an escaped parenthesis is no group
        (r"/[)]+(?=x)/", "))", ")x"),  # nor one inside a class
        (r"/[]a]+(?=x)/", "]a", "]x"),  # a `]` first in a class is a character of it
        (r"/[^]a]+(?=x)/", "bc", "b]"),
        (r"/[\]]+(?=x)/", "]]", "]x"),
        (r"/a(?=\))/", "a", "a)"),  # an escaped parenthesis does not close the look-ahead
        (r"/a(?=[b)])/", "a", "ab"),  # nor does one in a class
        (r"/a(?=[^]b)])/", "a", "ab"),  # nor one after a `]` that opens a negated class
        (r"/a(?=[]b)])/", "a", "a]"),
        (r"/(?:a|b(?=x))/", "a", "ax"),  # a group that ends the regex is looked into
        (r"/(?i:ab(?=x))/", "AB", "ABX"),
        (r"/((a)(?=x))/", "a", "ax"),
    ],
)
def test_a_terminal_that_ends_by_looking_ahead_has_its_body(
    definition: str, before_look_ahead: str, beyond: str
) -> None:
    body = pattern_of(_terminal(definition)).body
    assert body is not None
    assert body.fullmatch(before_look_ahead)
    assert not body.fullmatch(beyond)


@pytest.mark.parametrize(
    "definition",
    [r"/a(?=b)b/", r"/(ab)/", r"/a(?!b)/", r"/(?:a(?=b))+/", r"/(?:a(?!b))/", r'"(?=x)"', r"/a(?<!b)/"],
)
def test_a_terminal_without_a_look_ahead_at_its_end_has_no_body(definition: str) -> None:
    assert pattern_of(_terminal(definition)).body is None


def test_a_literal_terminal_has_its_text_and_a_regex_none() -> None:
    assert pattern_of(_terminal('"{"')).literal == "{"
    assert pattern_of(_terminal(r"/-?[0-9]+/")).literal is None  # a regex is no text to wait for


@pytest.mark.parametrize(
    ("definition", "marker"),
    [('"<a>"', True), ('"[gMASK]"', True), ('"\\n<x>"', True), ('"<a"', False), ('"[x"', False), ('"abc"', False)],
)
def test_a_marker_is_a_literal_of_three_or_more_characters_opening_with_a_bracket(
    definition: str, marker: bool
) -> None:
    assert is_marker(_terminal(definition)) is marker


@pytest.mark.parametrize(
    ("definition", "first"),
    [
        ('"{"', r"\{"),
        ('"call:"', "c"),
        (r"/[^<\s]/", r"[^<\s]"),
        (r"/[]a]+b/", "[]a]"),  # a `]` first in a class is one of its characters
        (r"/[\]x]y/", r"[\]x]"),
        (r"/\(a/", r"\("),
        (r"/-?[0-9]+/", None),  # an optional first item: any character may begin it
        (r"/a*b/", None),
        (r"/a{0,2}b/", None),
        (r"/a|b/", None),  # an alternation at the top: the first item is not the only start
        (r"/[a|]b/", "[a|]"),  # a `|` in a class is a character
        (r"/(a|b)c/", None),  # a group: not looked into
        (r"/\d+/", None),  # a class escape
        (r"/.x/", None),
    ],
)
def test_a_pattern_knows_the_character_every_match_starts_with(definition: str, first: str | None) -> None:
    found = pattern_of(_terminal(definition)).first
    assert (found.pattern if found else None) == first


_CHARACTERS = [*"ab 5-.eE+:,{}[]()<>\"'\\\n\ttrufalsenNcl_|é", "<|", "|>", "call:"]
_TEXT = st.lists(st.sampled_from(_CHARACTERS), max_size=12).map("".join)


@pytest.mark.parametrize("fmt", ["glm", "solar-open", "gemma4"])
@given(text=_TEXT)
def test_every_match_of_a_pattern_starts_with_its_first_character(fmt: str, text: str) -> None:
    """The lexer skips a pattern whose ``first`` the next character does not match: sound only
    if no match of the pattern starts otherwise. Checked on every pattern of each grammar."""
    grammar = compiled(codec.load(fmt).spec.grammar)
    for pattern in grammar.patterns.values():
        found = pattern.regex.match(text)
        if found and found.end() > 0 and pattern.first is not None:
            assert pattern.first.match(text[0]), (pattern.name, text)
