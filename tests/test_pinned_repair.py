"""Repair decisions pinned by mutation testing (issue 12, "tests that bite"): how Gemma's call
head is recognised without its opening marker, and how a value closer followed by text it cannot
take is judged (``RepairSearch.ends_value``: the closer's score against reading it as text, ties
to the closer, and the output's end counted on both sides)."""

from __future__ import annotations

import pytest

import codec
from codec.events import ContentDelta
from support.parsing import chunked, outcome, stream_chunks

GEMMA = codec.load("gemma4")
GLM = codec.load("glm")


def codes(reply: codec.AssistantMessage) -> list[str]:
    return [d.code for d in reply.diagnostics]


@pytest.mark.parametrize(
    "text",
    [
        "call: later",  # no name right after the word
        "call:foo bar",  # a name, then no `{`
        "set{x}",  # a name and `{`, but not the word `call:` first
        "call:" + "a" * 600,  # a name that runs past the lookahead, still no `{`
    ],
)
def test_gemma_text_that_is_not_a_whole_call_head_stays_content(text: str) -> None:
    """Only ``call:NAME{`` implies the missing ``<|tool_call>``; anything short of it is content."""
    reply = GEMMA.parse(text)
    assert (reply.content, reply.tool_calls, codes(reply)) == (text, (), [])


def test_gemma_call_head_without_its_opener_is_a_call() -> None:
    reply = GEMMA.parse('call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>')
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert codes(reply) == ["missing_marker"]


@pytest.mark.parametrize(
    "chunk",
    [
        "Hi",  # shorter than `call:` and not its start
        "call:{x",  # the word, then no name
        "call:" + "a" * 507,  # exactly the lookahead's 512 characters, no `{` yet
        "call:" + "a" * 600,  # past it
    ],
)
def test_gemma_text_that_cannot_become_a_call_head_streams_at_once(chunk: str) -> None:
    """Text is held back only while more could still make it a call head."""
    parser = GEMMA.stream()
    assert parser.feed(chunk) == [ContentDelta(chunk)]


@pytest.mark.parametrize("chunk", ["ca", "call:get", "call:" + "a" * 506])
def test_gemma_text_that_may_still_become_a_call_head_waits(chunk: str) -> None:
    parser = GEMMA.stream()
    assert parser.feed(chunk) == []
    assert parser.close() == [ContentDelta(chunk)]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
def test_gemma_call_head_whose_name_holds_a_colon_reads_alike_in_any_chunks(size: int) -> None:
    """A name may hold colons (MCP's ``server:tool``): a chunk that ends right after the inner
    colon leaves a name that may go on, so the head waits (fuzz finding parse-gemma4-2)."""
    text = 'call:files:read{path:<|"|>a.txt<|"|>}<tool_call|>'
    whole = GEMMA.parse(text)
    assert [(call.name, call.arguments) for call in whole.tool_calls] == [("files:read", {"path": "a.txt"})]
    assert outcome(stream_chunks("gemma4", chunked(text, size), tools=[])[1]) == outcome(whole)


@pytest.mark.parametrize("chunk", ["call:files:", "call:get_weather:"])
def test_gemma_head_ending_in_a_name_colon_waits(chunk: str) -> None:
    parser = GEMMA.stream()
    assert parser.feed(chunk) == []
    assert parser.close() == [ContentDelta(chunk)]


def test_a_tied_closer_ends_the_key() -> None:
    """``</arg_key>b`` at the end: closing the key (then a missing ``<arg_value>``) and reading
    the closer as key text both cost two (each also ends early): the tie goes to the closer."""
    reply = GLM.parse("</think><tool_call>f<arg_key>a</arg_key>b")
    assert reply.truncated_call is not None
    assert (reply.truncated_call.name, reply.truncated_call.arguments) == ("f", {"a": "b"})
    assert codes(reply) == ["missing_marker", "truncated"]


def test_a_closer_that_leaves_the_output_unfinished_is_key_text() -> None:
    """``</arg_key>b</arg_key>`` at the end: read as text, the key closes at the second closer
    and only the early end costs (2); closed, ``b`` and the refused second closer and the early
    end cost 3."""
    reply = GLM.parse("</think><tool_call>f<arg_key>a</arg_key>b</arg_key>")
    assert reply.truncated_call is not None and reply.truncated_call.arguments == {}
    assert reply.content == "a</arg_key>b"
    assert codes(reply) == ["marker_as_text", "truncated"]


def test_a_value_closer_tied_with_an_unfinished_call_closes_the_value() -> None:
    """``</arg_value>y</arg_value>`` at the end: closing (then ``y`` outside the call and the
    second closer refused) costs 2; as value text the second closer fits but the call is left
    open at the end, also 2: the closer wins."""
    reply = GLM.parse("</think><tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value>y</arg_value>")
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("f", {"a": "x"})]
    assert reply.content == "y</arg_value>"
    assert codes(reply) == ["missing_marker", "unexpected_marker"]


def test_text_where_none_may_stand_is_scored_as_opening_free_text() -> None:
    """Solar, right after its header: ``<|endoftext|>Hi<|end|>``. Dropping the stray stop costs 1,
    and ``Hi`` one more (an inserted ``<|content|>`` opens the answer's free text, which
    ``<|end|>`` then closes): 2, under every insertion (3), so the stop is dropped."""
    reply = codec.load("solar-open").parse("<|endoftext|>Hi<|end|>")
    assert reply.content == "Hi"
    assert [(d.code, d.offset) for d in reply.diagnostics] == [("stray_marker", 0), ("missing_marker", 13)]


def test_a_refused_marker_is_decided_once_512_characters_follow() -> None:
    """The lookahead after a refused marker is complete at ``WINDOW_CHARS`` (512) characters of
    text: at 511 the marker and the text wait, the 512th releases both."""
    parser = GLM.stream()
    assert parser.feed("</think>Hi</arg_value>" + "a" * 511) == [ContentDelta("Hi")]
    assert parser.feed("a") == [ContentDelta("</arg_value>"), ContentDelta("a" * 511), ContentDelta("a")]


def test_a_refused_marker_is_decided_once_three_markers_follow() -> None:
    """... or at ``WINDOW`` (3) markers, whatever text lies between."""
    parser = GLM.stream()
    assert parser.feed("</think>Hi</arg_value>x<|image|>x<|image|>") == [ContentDelta("Hi")]
    assert parser.feed("x<|image|>") == [ContentDelta("</arg_value>"), ContentDelta("x")]


GLM_VALUE = "</think><tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value>y"
"""A value closer followed by text it cannot take: is it the closer, or text of the value?"""


def test_the_lookahead_holds_three_markers_and_no_more() -> None:
    """``y<arg_key>b</arg_key><arg_value>``: closing and reading as text both cost 4 over the
    three markers, so the closer wins; the fourth, ``</arg_value>``, which only the text reading
    accepts, is not part of the judgement."""
    reply = GLM.parse(GLM_VALUE + "<arg_key>b</arg_key><arg_value></arg_value></tool_call>")
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("f", {"a": "x"})]
    assert reply.content == "y<arg_key>b</arg_key><arg_value></arg_value></tool_call>"


def test_text_after_the_third_marker_is_not_judged() -> None:
    """``y<arg_key>b</arg_key></arg_value>z``: as text, the value ends at the third marker (3
    against 4); the ``z`` after it, which would cost the text reading one more, is left out."""
    reply = GLM.parse(GLM_VALUE + "<arg_key>b</arg_key></arg_value>z")
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [
        ("f", {"a": "x</arg_value>y<arg_key>b</arg_key>"})
    ]
    assert reply.content == "z"


GLM_CLOSED = "</think><tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value>"


def test_the_lookahead_ends_when_its_text_reaches_512_characters() -> None:
    """600 characters after the closer, then ``</arg_value>z<|user|>``: the window is full at
    the first 512 characters, so the ``</arg_value>`` after them is not judged (a stream decides
    there, before it arrives). On text alone the two readings tie and the closer wins: the call
    ends with ``x``, and the text is content."""
    text = GLM_CLOSED + "y" * 600 + "</arg_value>z<|user|>"
    reply = GLM.parse(text)
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("f", {"a": "x"})]
    assert reply.content == "y" * 600 + "</arg_value>z"
    assert outcome(stream_chunks("glm", chunked(text, 1), tools=[])[1]) == outcome(reply)


def test_text_up_to_512_characters_is_judged() -> None:
    """511 characters: the 512th of the window is the ``z``, so ``z<|user|>`` is judged too and
    the two readings tie at 2: the closer wins."""
    reply = GLM.parse(GLM_CLOSED + "y" * 511 + "</arg_value>z<|user|>")
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("f", {"a": "x"})]
    assert reply.content == "y" * 511 + "</arg_value>z"


def test_the_512_characters_are_counted_across_the_texts_of_the_window() -> None:
    """300 characters, ``<arg_key>``, 300 more, ``</arg_value>``: the window fills inside the
    second text, so the ``</arg_value>`` after it is not judged; the closer wins as above, and
    both markers inside the text are kept as text."""
    value = "y" * 300 + "<arg_key>" + "y" * 300
    text = GLM_CLOSED + value + "</arg_value>z<|user|>"
    reply = GLM.parse(text)
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("f", {"a": "x"})]
    assert reply.content == value + "</arg_value>z"
    assert outcome(stream_chunks("glm", chunked(text, 5), tools=[])[1]) == outcome(reply)


def test_a_closer_is_judged_alike_whole_and_one_character_at_a_time() -> None:
    """Gemma: ``<|"|>`` followed by ``12,b:``: the lookahead joins the text that arrived in many
    pieces before judging it (``12`` is one number, not ``1`` then a refused ``2``), so a
    character-by-character stream reads the closer as value text (the ``"`` it stands in for,
    issue 22), as the whole parse does."""
    text = '<|tool_call>call:f{a:<|"|>x<|"|>12,b:<|"|>z<|"|>}<tool_call|>'
    parser = GEMMA.stream()
    for char in text:
        parser.feed(char)
    parser.close()
    streamed = parser.message
    assert [(call.name, call.arguments) for call in streamed.tool_calls] == [("f", {"a": 'x"12,b:"z'})]
    assert codes(streamed) == ["marker_as_text", "marker_as_text"]
    whole = GEMMA.parse(text)
    assert [(call.name, call.arguments) for call in whole.tool_calls] == [("f", {"a": 'x"12,b:"z'})]


def test_a_closer_followed_by_text_that_fits_is_read_as_the_grammar_reads_it() -> None:
    """Gemma: ``<|"|>,b<|"|>}``: the ``,`` fits after the string's closer, so the closer is
    taken at once, without weighing the lookahead (whose broken ``b<|"|>}`` would favour reading
    the closer as text): ``a`` is ``x``, and the repairs come later, at ``b``."""
    reply = GEMMA.parse('<|tool_call>call:f{a:<|"|>x<|"|>,b<|"|>}<tool_call|>')
    assert [call.arguments["a"] for call in reply.tool_calls] == ["x"]
    assert [(d.code, d.offset) for d in reply.diagnostics] == [("missing_marker", 34), ("missing_marker", 40)]


def test_a_malformed_token_after_a_closer_does_not_count_as_fitting() -> None:
    """Gemma: ``x<|"|>)y<|"|>)``: the ``)`` after the first closer is only the malformed
    parenthesis (``BAD_PAREN_CLOSE``), so the lookahead decides: the first closer is text of the
    value (the ``"`` it stands in for), and the second one closes it."""
    reply = GEMMA.parse('<|tool_call>call:f(a:<|"|>x<|"|>)y<|"|>)<tool_call|>')
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("f", {"a": 'x")y'})]
    assert [(d.code, d.offset) for d in reply.diagnostics] == [
        ("malformed", 18),
        ("marker_as_text", 27),
        ("malformed", 39),
        ("malformed", 40),
    ]


def test_an_insertion_costs_one_per_inserted_marker() -> None:
    """Solar: ``Hi<|calls|>`` in the answer: reaching ``<|calls|>`` needs two inserted markers
    (``<|flush|><|tool_calls|>``, cost 2); keeping it as text of the answer costs 1 and wins."""
    reply = codec.load("solar-open").parse("Hi<|calls|>")
    assert reply.content == "Hi<|calls|>"
    assert [(d.code, d.offset) for d in reply.diagnostics] == [("missing_marker", 0), ("unexpected_marker", 2)]


def test_a_marker_read_only_by_closing_a_call_whose_name_never_came_leaves_it_content() -> None:
    """GLM: ``</think>`` right after ``<tool_call>`` fits only by closing the call
    (``</tool_call><think>``): a call is never finished so when its name may not be complete.
    It is content, and ``</think>``, read anew after it, gets its ``<think>``."""
    reply = GLM.parse("</think><tool_call></think>")
    assert [(d.code, d.offset) for d in reply.diagnostics] == [("unfinished_call", 19), ("missing_marker", 19)]
    assert "inserted <think> before </think>" in reply.diagnostics[1].message
    assert (reply.content, reply.tool_calls, reply.incomplete_calls) == ("<tool_call>", (), ())


AFTER_TOOL_RESULT = [
    {"role": "user", "content": "Go."},
    {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": {}}}]},
    {"role": "tool", "tool_call_id": "a", "content": "ok"},
]
"""Gemma goes on after a tool result with no header: the completion may still open with ``<|turn>``."""


def test_keeping_a_marker_as_content_is_scored_from_inside_the_content() -> None:
    """``<tool_call|><|turn>Hi<|channel>…``, where ``<|turn>`` may still open the turn: kept as
    content, ``<tool_call|>`` puts the parser in the content, where ``<|turn>`` is refused but
    ``Hi`` and the channel fit (2); dropped, ``<|turn>`` fits and all that follows does not (5)."""
    reply = GEMMA.parse("<tool_call|><|turn>Hi<|channel>thought\nx<channel|>", history=AFTER_TOOL_RESULT)
    assert (reply.content, reply.reasoning) == ("<tool_call|><|turn>Hi", "x")
    assert [(d.code, d.offset) for d in reply.diagnostics] == [("unexpected_marker", 0), ("unexpected_marker", 12)]


def test_ending_early_costs_one() -> None:
    """Solar: ``<|endoftext|><|think|>Hmm``: dropping the stray stop leaves the reasoning open at
    the end (1 + 1), against 3 for each insertion before it: dropped, the reasoning is kept and
    the output is cut off."""
    reply = codec.load("solar-open").parse("<|endoftext|><|think|>Hmm")
    assert (reply.content, reply.reasoning, reply.finish_reason) == (None, "Hmm", "length")
    assert [(d.code, d.offset) for d in reply.diagnostics] == [("stray_marker", 0), ("truncated", 25)]


def test_a_repair_inserts_no_malformed_token() -> None:
    """Gemma: ``call:f(a:1<tool_call|>``: only the malformed ``)`` would close these arguments,
    and a ``BAD_*`` token is never inserted: the closer is dropped and the call is cut off."""
    reply = GEMMA.parse("<|tool_call>call:f(a:1<tool_call|>")
    assert reply.tool_calls == () and reply.truncated_call is not None
    assert reply.truncated_call.arguments == {"a": 1}
    assert [(d.code, d.offset) for d in reply.diagnostics] == [
        ("malformed", 18),
        ("stray_marker", 22),
        ("truncated", 34),
    ]


def test_a_repair_invents_no_value() -> None:
    """Gemma: ``call:f{a:<tool_call|>``: a value word (``true``, ``null``) or a number would make
    the closer fit, but a repair never invents an argument: the closer is dropped."""
    reply = GEMMA.parse("<|tool_call>call:f{a:<tool_call|>")
    assert reply.tool_calls == () and reply.truncated_call is not None
    assert reply.truncated_call.arguments == {}
    assert [(d.code, d.offset) for d in reply.diagnostics] == [("stray_marker", 21), ("truncated", 33)]


def test_a_repair_completes_a_call_with_literal_punctuation() -> None:
    """Gemma: ``call:f<tool_call|>``: inserting the literal ``{`` and ``}`` closes the call."""
    reply = GEMMA.parse("<|tool_call>call:f<tool_call|>")
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("f", {})]
    assert [(d.code, d.offset, d.message) for d in reply.diagnostics] == [
        ("missing_marker", 18, "inserted {} before <tool_call|> ('<tool_call|>')")
    ]


@pytest.mark.parametrize("spaces", range(505, 516))
def test_a_repair_decided_at_the_lookahead_limit_does_not_depend_on_the_chunks(spaces: int) -> None:
    """A refused string closer followed by text near ``WINDOW_CHARS`` long, then another marker:
    the whole parse used to look at that marker when the text filled the window exactly (a
    stream decides as soon as the window is full, before the marker arrives), so the whole and
    the streamed reading parted for 510 and 511 spaces."""
    text = '<|tool_call>call:run_code{code:<|"|>say <|"|>' + " " * spaces + 'hi<|"|>}<tool_call|>'
    whole = outcome(GEMMA.parse(text))
    for size in (1, 7, 64):
        assert outcome(stream_chunks("gemma4", chunked(text, size), tools=[])[1]) == whole, size


@pytest.mark.parametrize("space", [" ", "\n", "  \n "])
@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("<tool_call>f<arg_key>a</arg_key><arg_value>v</arg_key>", "<arg_value></arg_value></tool_call>z"),
        ("<tool_call>f<arg_key>a</arg_key><arg_value>v</arg_value>", "<arg_value>w</arg_value></tool_call>z"),
        ("<tool_call>f<arg_key>a</arg_key>", "</arg_key><arg_value>v</arg_value></tool_call>"),
    ],
)
def test_white_space_between_markers_does_not_change_a_repair(space: str, before: str, after: str) -> None:
    # Layout is not content: in GLM, where no text may stand between two markers, white space
    # weighs nothing in the choice of a repair, so the reading is the one without it.
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]

    def reading(text: str) -> tuple[object, ...]:
        message = GLM.parse("</think>" + text, tools=tools, id_factory=lambda index: "c")
        codes = [d.code for d in message.diagnostics]
        return (message.content, message.tool_calls, message.incomplete_calls, codes)

    assert reading(before + space + after) == reading(before + after)
