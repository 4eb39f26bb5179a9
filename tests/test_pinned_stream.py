"""The stream parser's repairs, pinned by their exact diagnostics: a call stopped at a limit,
inserted markers, a call opened without its marker, and malformed variants the grammar accepts
(survivors of the mutation run of codec/engine/stream.py)."""

from __future__ import annotations

import pytest

import codec
from codec.engine.repair import WINDOW_CHARS
from support.parsing import TOOLS, outcome, stream_chunks


def diagnostics(reply: codec.AssistantMessage) -> list[tuple[str, int, str]]:
    return [(d.code, d.offset, d.message) for d in reply.diagnostics]


SOLAR_CALLS = "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>get_weather<|tool_call:args|>"
STOPPED = "the call stops here, the rest is content"


def test_a_call_stopped_inside_its_arguments_reports_where_it_stopped() -> None:
    """Solar, nested too deep: the stop is reported where the refused text starts (not where
    the arguments piece starts), the reader's own report at its end too, and a later call's
    report at its own place (the stop's shift does not outlive the stop)."""
    text = (
        SOLAR_CALLS + '{"city": [[[1]]]}<|tool_call:end|>'
        "<|tool_call:begin|>a1b2c3d4e6<|tool_call:name|>get_weather<|tool_call:args|>"
        '{"city": "P", "city": "Q"}<|tool_call:end|><|calls|>'
    )
    reply = codec.load("solar-open").parse(text, tools=TOOLS, limits=codec.Limits(max_depth=2))
    refused = text.index("[1]]]")
    assert diagnostics(reply) == [
        ("too_deep", refused, f"arguments nested deeper than 2; {STOPPED}"),
        ("incomplete_arguments", refused, "the arguments JSON was cut short"),
        ("stray_marker", refused + len("[1]]]}"), "dropped ('<|tool_call:end|>')"),
        ("duplicate_key", text.index(', "city": "Q"'), "an argument given twice; the first is kept"),
    ]
    assert [call.arguments for call in reply.tool_calls] == [{"city": "P"}]
    assert [call.arguments for call in reply.incomplete_calls] == [{"city": [[]]}]


def test_strict_parsing_raises_at_the_limit_with_nothing_found() -> None:
    """A limit is not a piece of text: the error's ``found`` is empty and nothing is expected."""
    text = SOLAR_CALLS + '{"city": [[[1]]]}<|tool_call:end|><|calls|>'
    with pytest.raises(codec.ParseError) as raised:
        codec.load("solar-open").parse(text, tools=TOOLS, strict=True, limits=codec.Limits(max_depth=2))
    error = raised.value
    assert (error.code, error.offset, error.found, error.expected) == ("too_deep", text.index("[1]]]"), "", ())
    assert "found ''" in str(error)


def test_text_after_a_stopped_call_is_content_without_a_second_diagnostic() -> None:
    """Solar, past the size limit: the call stops after the character whose JSON passes it (the
    value's closing quote), however the text was chunked; the parser is back before the call,
    where no free text fits, and the rest of the arguments text and what follows are kept as
    content whole, reported once."""
    text = SOLAR_CALLS + '{"city": "Paris"}<|tool_call:end|> tail<|calls|>'
    reply = codec.load("solar-open").parse(text, tools=TOOLS, limits=codec.Limits(max_argument_chars=15))
    assert reply.content == "} tail"
    passing = text.index('"}')  # '{"city": "Paris' is 15 characters: the quote after it passes
    assert diagnostics(reply) == [
        ("too_large", passing, f"arguments longer than 15 characters; {STOPPED}"),
        ("incomplete_arguments", passing, "the arguments JSON was cut short"),
        ("stray_marker", text.index("<|tool_call:end|>"), "dropped ('<|tool_call:end|>')"),
    ]


GLM_CALL = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>"


def test_an_inserted_closer_that_passes_the_size_limit_stops_a_second_call_too() -> None:
    """GLM: the first call stops at the character that passes the limit (the 21st ``x``: ten
    characters of ``{"city": "`` before it); the rest of its value, and the markers amid that
    text, are content. In the second call the ``</arg_value>`` the repair inserts closes the
    string one character past the limit, and the marker it was inserted for is then read anew
    (dropped)."""
    first = GLM_CALL + "x" * 40 + "</arg_value></tool_call>"
    second = GLM_CALL + "y" * 20 + "</tool_call>"
    text = "Go.</think>" + first + second + " after"
    reply = codec.load("glm").parse(text, tools=TOOLS, limits=codec.Limits(max_argument_chars=30))
    too_large = f"arguments longer than 30 characters; {STOPPED}"
    cut = text.rindex("</tool_call>")
    assert diagnostics(reply) == [
        ("too_large", text.index("x") + 20, too_large),
        ("unexpected_marker", text.index("</arg_value>"), "kept as text ('</arg_value>')"),
        ("unexpected_marker", text.index("</tool_call>"), "kept as text ('</tool_call>')"),
        ("missing_marker", cut, "inserted </arg_value> before </tool_call> ('</tool_call>')"),
        ("too_large", cut, too_large),
        ("stray_marker", cut, "dropped ('</tool_call>')"),
    ]
    assert reply.content == "x" * 19 + "</arg_value></tool_call> after" and reply.tool_calls == ()
    assert [call.arguments for call in reply.incomplete_calls] == [{"city": "x" * 21}, {"city": "y" * 20}]


def test_an_opener_inside_an_unfinished_call_cuts_it_and_opens_the_next_call() -> None:
    """GLM: ``<tool_call>`` where the open value's ``</arg_value></tool_call>`` are missing: the
    first call is kept apart unfinished (never run, never closed by an insertion) and the
    opener, read anew before it, opens the next call. The closing fragments the first call is
    never sent pass no size limit."""
    text = "Go.</think>" + GLM_CALL + "y" * 20 + GLM_CALL + "Rome</arg_value></tool_call>"
    reply = codec.load("glm").parse(text, tools=TOOLS, limits=codec.Limits(max_argument_chars=30))
    cut = text.rindex("<tool_call>")
    assert diagnostics(reply) == [
        ("unfinished_call", cut, "the call before it was not finished: kept apart, not run ('<tool_call>')"),
    ]
    assert [call.arguments for call in reply.tool_calls] == [{"city": "Rome"}]
    assert [call.arguments for call in reply.incomplete_calls] == [{"city": "y" * 20}]
    assert reply.truncated_call == reply.incomplete_calls[0] and reply.finish_reason == "length"


GEMMA_CALL = "<|tool_call>call:get_weather{city:"


def test_inserted_pattern_terminals_are_shown_by_their_text() -> None:
    """Gemma: a string's closing quote and the object's ``}`` inserted before ``<tool_call|>``
    read ``<|"|>}``, the marker's text and the pattern's literal, side by side."""
    text = GEMMA_CALL + '<|"|>Paris<tool_call|>'
    reply = codec.load("gemma4").parse(text, tools=TOOLS)
    assert diagnostics(reply) == [
        ("missing_marker", text.index("<tool_call|>"), "inserted <|\"|>} before <tool_call|> ('<tool_call|>')"),
    ]
    assert [call.arguments for call in reply.tool_calls] == [{"city": "Paris"}]


def test_a_value_that_starts_like_a_marker_gets_its_string_opener() -> None:
    """Gemma: ``<`` cannot start a bare value; of the openers the grammar allows there, the
    marker ``<|"|>`` (not a malformed variant's terminal) is inserted, and the value is a string;
    left open, it ends before the ``}`` that closes the call's arguments (issue 22)."""
    text = GEMMA_CALL + "<b>}<tool_call|>"
    reply = codec.load("gemma4").parse(text, tools=TOOLS)
    assert diagnostics(reply) == [
        ("missing_marker", text.index("<b>"), "inserted <|\"|> ('<')"),
        ("missing_marker", text.index("<tool_call|>"), "inserted <|\"|>} before <tool_call|> ('<tool_call|>')"),
    ]
    assert [call.arguments for call in reply.tool_calls] == [{"city": "<b>"}]


def test_a_call_written_without_its_opener_is_opened_after_its_layout() -> None:
    """Gemma: ``call:NAME{`` where content could start implies ``<|tool_call>``; the white
    space before it is layout, the inserted opener takes no text, the diagnostic shows the
    first 20 characters of the call, and a channel opened without its name is reported as the
    malformed rule it is."""
    text = '<channel|> call:get_weather{city:<|"|>Paris<|"|><tool_call|>'
    reply = codec.load("gemma4").parse(text, tools=TOOLS)
    start = text.index("call:")
    assert diagnostics(reply) == [
        ("missing_marker", 0, "inserted <|channel> before <channel|> ('<channel|>')"),
        ("missing_marker", start, "inserted <|tool_call>: the text opens a call ('call:get_weather{cit')"),
        ("malformed", start, "bad_unnamed_thought accepted ('bad_unnamed_thought')"),
        ("missing_marker", text.index("<tool_call|>"), "inserted } before <tool_call|> ('<tool_call|>')"),
    ]
    assert reply.content is None
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_stray_text_is_reported_once_until_the_parser_moves_on() -> None:
    """Solar: text between calls has no place; the first stray run is reported (its leading
    white space is layout), a later one after a dropped marker is kept whole, unreported."""
    text = "<|tool_calls|> a <|tool_call:end|> b <|calls|>"
    reply = codec.load("solar-open").parse(text, tools=TOOLS)
    assert reply.content == "a  b "
    assert diagnostics(reply) == [
        ("unexpected_text", text.index(" a ") + 1, "kept as content ('a ')"),
        ("stray_marker", text.index("<|tool_call:end|>"), "dropped ('<|tool_call:end|>')"),
    ]


def test_a_deviation_the_builder_finds_raises_in_strict_mode_with_nothing_found() -> None:
    """A call to a tool that was not offered is no piece of text: ``found`` is empty, nothing
    is expected, and the offset is where the name ended."""
    text = "Go.</think><tool_call>nope<arg_key>city</arg_key><arg_value>P</arg_value></tool_call>"
    with pytest.raises(codec.ParseError) as raised:
        codec.load("glm").parse(text, tools=TOOLS, strict=True)
    error = raised.value
    assert (error.code, error.offset, error.found, error.expected) == ("unknown_tool", text.index("<arg_key>"), "", ())
    assert error.partial is not None and error.partial.reasoning == "Go."
    assert str(error) == (
        f"unknown_tool at line 1, column {text.index('<arg_key>') + 1} (offset {text.index('<arg_key>')}): "
        "found '', expected nothing more. (lenient parsing would have: call to 'nope', a tool that was not offered)"
    )


def test_the_event_list_a_feed_returns_belongs_to_the_caller() -> None:
    """An empty list returned by one ``feed`` is not filled by a later one."""
    parser = codec.load("glm").stream()
    first = parser.feed("")
    later = parser.feed("Hmm.</think>Hello")
    assert first == []
    assert [type(event).__name__ for event in later] == ["ReasoningDelta", "ContentDelta"]


def test_a_closed_parser_says_how_to_go_on() -> None:
    parser = codec.load("glm").stream()
    parser.close()
    with pytest.raises(codec.CodecError) as raised:
        parser.feed("more")
    assert str(raised.value) == "this StreamParser is closed; start a new one with Codec.stream()"


def test_an_inserted_content_opener_is_taken_back_for_a_marker_it_made_unacceptable() -> None:
    """Solar: stray text first gets ``<|content|>``; ``<|think|>`` then fits only without it,
    so the insertion is undone and the text stays content."""
    text = "Hello<|think|>R<|end|><|begin|>assistant<|content|>Hi"
    reply = codec.load("solar-open").parse(text, tools=TOOLS)
    assert (reply.content, reply.reasoning) == ("HelloHi", "R")
    assert diagnostics(reply) == [
        ("missing_marker", 0, "inserted <|content|> ('Hello')"),
        ("insertion_undone", len("Hello"), "the marker inserted before the text taken back ('<|think|>')"),
    ]


def test_a_call_refused_before_its_name_is_complete_is_kept_as_content() -> None:
    """Solar: ``<|content|>`` where the call's name marker belongs: the call so far becomes
    content, the marker is then dropped, and the text after it is stray content."""
    text = "<|tool_calls|><|tool_call:begin|>abc<|content|>x"
    reply = codec.load("solar-open").parse(text, tools=TOOLS)
    assert reply.content == "<|tool_call:begin|>abcx"
    at = text.index("<|content|>")
    assert diagnostics(reply) == [
        ("malformed", text.index("abc"), "BAD_CALL_ID repaired ('abc')"),
        ("unparsable_call", at, "the call so far is kept as content ('<|content|>')"),
        ("stray_marker", at, "dropped ('<|content|>')"),
        ("unexpected_text", text.index("x"), "kept as content ('x')"),
    ]


def test_a_call_head_gone_wrong_is_kept_as_content_with_its_white_space() -> None:
    """Gemma: ``call:get weather`` cannot be a name; the call's text, the skipped space
    included, is content."""
    text = "<|tool_call>call:get weather{}<tool_call|>"
    reply = codec.load("gemma4").parse(text, tools=TOOLS)
    assert reply.content == text and reply.tool_calls == ()
    assert diagnostics(reply) == [
        ("unparsable_call", text.index("w"), "the call so far is kept as content ('w')"),
        ("unexpected_marker", text.index("<tool_call|>"), "kept as text ('<tool_call|>')"),
    ]


def test_strict_parsing_of_a_call_head_gone_wrong_says_what_could_follow_the_opener() -> None:
    with pytest.raises(codec.ParseError) as raised:
        codec.load("gemma4").parse("<|tool_call>hello there<tool_call|>", strict=True)
    error = raised.value
    assert (error.code, error.offset, error.found) == ("unparsable_call", len("<|tool_call>"), "h")
    assert error.expected == ("BAD_BARE_COLON", "BAD_COLON_PREFIX", "CALL_PREFIX")


CUT_IN_KEY = "Go.</think><tool_call>get_weather<arg_key>city</arg_key>"


@pytest.mark.parametrize(
    ("tail", "message", "found", "expected"),
    [
        pytest.param(
            "<arg_val",
            "the output ended inside a marker; kept what arrived ('<arg_val')",
            "<arg_val",
            ("<arg_value>",),
            id="inside a marker",
        ),
        pytest.param(
            "<arg_value>P",
            "the output ended early; kept what arrived",
            "",
            ("</arg_value>", "ARG_VALUE"),
            id="inside a value",
        ),
    ],
)
def test_output_cut_off_in_a_call_is_reported_as_truncated(
    tail: str, message: str, found: str, expected: tuple[str, ...]
) -> None:
    """Where the output ended (before the marker it was cut in), what arrived of it, and, in
    strict mode, what the grammar still expected."""
    text = CUT_IN_KEY + tail
    at = len(CUT_IN_KEY) if found else len(text)
    reply = codec.load("glm").parse(text, tools=TOOLS)
    assert diagnostics(reply)[-1] == ("truncated", at, message)
    with pytest.raises(codec.ParseError) as raised:
        codec.load("glm").parse(text, tools=TOOLS, strict=True)
    error = raised.value
    assert (error.code, error.offset, error.found, error.expected) == ("truncated", at, found, expected)


def glm_parser(prompt: str, strict: bool) -> codec.StreamParser:
    glm = codec.load("glm")
    return codec.StreamParser(
        glm.spec.grammar, prompt=prompt, tools=[], arguments=glm.spec.family.arguments, strict=strict
    )


@pytest.mark.parametrize("prompt", ["<|assistant|></arg_key>", "<|assistant|>Hello"])
def test_a_generation_prompt_that_needs_a_repair_is_refused(prompt: str) -> None:
    """A prompt parsed with a diagnostic (a stray marker) or with events (text) is not where a
    completion can start."""
    with pytest.raises(codec.CodecError) as raised:
        glm_parser(prompt, strict=False)
    assert str(raised.value) == f"the generation prompt {prompt!r} does not fit glm.lark"


def test_a_generation_prompt_the_grammar_refuses_is_refused_with_the_reason() -> None:
    with pytest.raises(codec.CodecError) as raised:
        glm_parser("<|assistant|></arg_key>", strict=True)
    assert str(raised.value).startswith(
        "the template's generation prompt '<|assistant|></arg_key>' does not fit the grammar glm.lark: "
        "unexpected_marker at line 1, column 14 (offset 13)"
    )


def test_white_space_right_after_an_explicit_content_opener_is_content() -> None:
    """Solar: after ``<|content|>`` white space is the answer, not layout."""
    reply = codec.load("solar-open").parse("<|content|>  <|flush|>", tools=TOOLS)
    assert (reply.content, reply.diagnostics) == ("  ", ())


def test_an_inserted_opener_is_not_taken_back_once_a_marker_followed_it() -> None:
    """Solar: ``<|content|>`` inserted before stray text, then ``<|flush|>`` accepted after it:
    the insertion is settled, so a later ``<|think|>`` is a stray marker, not a take-back."""
    text = "Hello<|flush|><|think|>R<|end|>"
    reply = codec.load("solar-open").parse(text, tools=TOOLS)
    assert reply.content == "HelloR"
    assert [(d.code, d.offset) for d in reply.diagnostics] == [
        ("missing_marker", 0),
        ("stray_marker", text.index("<|think|>")),
        ("unexpected_text", text.index("R")),
        ("stray_marker", text.index("<|end|>")),
    ]


def test_a_written_key_opener_never_splits_the_tool_name() -> None:
    """GLM: only an inserted ``<arg_key>`` lets the tool list split a name; with ``get``
    offered too, a written ``get_weather<arg_key>`` is still ``get_weather``."""
    tools = [*TOOLS, {"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}}]
    text = "Go.</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>P</arg_value></tool_call>"
    reply = codec.load("glm").parse(text, tools=tools)
    assert [(call.name, call.arguments) for call in reply.tool_calls] == [("get_weather", {"city": "P"})]
    assert reply.diagnostics == ()


@pytest.mark.parametrize(
    "value",
    [
        pytest.param('say <|"|>hi<|"|> now', id="quoted word"),
        pytest.param('say <|"|>   hi<|"|> now', id="after white space"),
    ],
)
def test_a_string_closer_followed_by_text_it_cannot_take_is_text_of_the_value(value: str) -> None:
    """Gemma: ``<|"|>`` inside a string, followed (past any white space) by a word that cannot
    follow a value, is text of the value (the ``"`` it stands in for, issue 22), however the
    completion is chunked."""
    text = f'<|tool_call>call:run_code{{code:<|"|>{value}<|"|>}}<tool_call|>'
    inner = [i for i in range(len(text)) if text.startswith('<|"|>', i)][1:3]
    whole = codec.load("gemma4").parse(text, tools=TOOLS)
    parser = codec.load("gemma4").stream(tools=TOOLS)
    for character in text:
        parser.feed(character)
    parser.close()
    for reply in (whole, parser.message):
        assert [call.arguments for call in reply.tool_calls] == [{"code": value.replace('<|"|>', '"')}]
        assert diagnostics(reply) == [("marker_as_text", at, "read as text of the value ('<|\"|>')") for at in inner]


def test_a_string_closer_followed_by_white_space_and_the_object_end_closes_the_string() -> None:
    text = '<|tool_call>call:run_code{code:<|"|>say<|"|>   }<tool_call|>'
    reply = codec.load("gemma4").parse(text, tools=TOOLS)
    assert ([call.arguments for call in reply.tool_calls], reply.diagnostics) == ([{"code": "say"}], ())


# The end of the output (``LalrCursor.finish``) is remembered per state stack, like each step,
# and reports the malformed rule it completes, by name.

UNNAMED_THOUGHT = "<|channel>R<channel|>"  # Gemma: a thought channel without its `thought` name


def malformed(message: codec.AssistantMessage) -> list[str]:
    return [d.message for d in message.diagnostics if d.code == "malformed"]


@pytest.mark.parametrize("chunk", [0, 1, 3])
def test_a_malformed_rule_that_only_the_end_completes_is_reported_by_name(chunk: int) -> None:
    if chunk:
        pieces = [UNNAMED_THOUGHT[i : i + chunk] for i in range(0, len(UNNAMED_THOUGHT), chunk)]
        message = stream_chunks("gemma4", pieces)[1]
    else:
        message = codec.load("gemma4").parse(UNNAMED_THOUGHT)
    assert message.reasoning == "R"
    assert malformed(message) == ["bad_unnamed_thought accepted ('bad_unnamed_thought')"]


def test_each_completion_ends_in_its_own_state() -> None:
    # One completion ending in a malformed rule and one ending cleanly, in either order, each
    # get their own verdict from the remembered ends.
    gemma, clean = codec.load("gemma4"), "<|channel>thought\nR<channel|>"
    for first, second in [(UNNAMED_THOUGHT, clean), (clean, UNNAMED_THOUGHT), (UNNAMED_THOUGHT, clean)]:
        assert bool(malformed(gemma.parse(first))) is (first == UNNAMED_THOUGHT)
        assert bool(malformed(gemma.parse(second))) is (second == UNNAMED_THOUGHT)


@pytest.mark.parametrize("space", [" ", "\n", "  "])
def test_white_space_where_a_thought_channel_may_be_named_is_reasoning(space: str) -> None:
    # After Gemma's `<|channel>` the name `thought` may stand or not: white space there is
    # neither a name nor layout to skip, but the start of the unnamed channel's text.
    text = f"<|channel>{space}R<channel|>Hi"
    whole = codec.load("gemma4").parse(text)
    assert (whole.reasoning, whole.content) == (f"{space}R", "Hi")
    assert stream_chunks("gemma4", list(text))[1] == whole


def test_white_space_after_a_closer_decides_the_same_in_any_number_of_pieces() -> None:
    # `</arg_value>` followed by text that cannot follow it: whether it closes the value is
    # decided by the first character after the white space, however the white space arrives,
    # up to the window's length of it.
    space = " " * (WINDOW_CHARS - 1)
    before = "</think><tool_call>get_weather<arg_key>a</arg_key><arg_value>v</arg_value>"
    after = "x</arg_value></tool_call>"
    whole = codec.load("glm").parse(before + space + after, tools=TOOLS)
    for pieces in ([before, space, after], [before, space[:100], space[100:], after]):
        assert outcome(stream_chunks("glm", pieces)[1]) == outcome(whole)
