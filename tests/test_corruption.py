"""Realistic corruptions of well-formed completions are recovered (issue: "Recover what models
actually write"), for every format of the registry.

A message is drawn and rendered into the completion its template implies (as the completion round
trip of ``test_parse_properties`` does); then several corruptions from the catalogue below are
applied, the kinds real models write (docs/corpus.md): layout white space between structural
markers, a duplicated close, a header or marker left out, values in another syntax's quotes, a
trailing comma. The lenient parse of the corrupted text equals the original message, and a
streamed parse equals it too under chunkings that isolate the white space and cut markers in two.

Each corruption applies only where the format has the markers it names (taken from the grammar),
so the catalogue is generic over the registry; a format where none applies is skipped for that
example (``assume``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import codec
from codec import strategies
from codec.engine.grammar import compiled
from codec.registry import FORMATS
from support.calls import call_ends
from support.parsing import TOOLS
from test_parse_properties import HISTORY, NOW, QUICK, Completion, completions
from test_prompt_roundtrip import completion_after, expected_reply, made_up_id, with_ids_of

Corruption = Callable[[str, str, st.DrawFn], str | None]  # (format, text, draw) -> corrupted, or None


@cache
def _markers(fmt: str) -> dict[str, str]:
    """Marker text -> terminal name, for the format's grammar."""
    return dict(compiled(FORMATS[fmt].grammar).markers)


@cache
def _marker_pattern(fmt: str) -> re.Pattern[str]:
    texts = sorted(_markers(fmt), key=len, reverse=True)
    return re.compile("|".join(re.escape(text) for text in texts))


def _spans(fmt: str, text: str) -> list[tuple[int, int, str]]:
    """Every marker in ``text``: (start, end, terminal)."""
    names = _markers(fmt)
    return [(m.start(), m.end(), names[m.group()]) for m in _marker_pattern(fmt).finditer(text)]


def _text_of(fmt: str, name: str) -> str | None:
    return next((text for text, terminal in _markers(fmt).items() if terminal == name), None)


def _pick(draw: st.DrawFn, options: list[int]) -> int | None:
    return draw(st.sampled_from(options)) if options else None


def layout_after_a_close(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """White space after a ``*_CLOSE`` marker that another marker (or the end) follows:
    GLM-4.5's newlines between its tags, a newline between calls. Not after a marker the format
    reads white space after as content (``FormatSpec.content_openers``: Mistral's `[/THINK]`,
    after which the template writes the answer as it is)."""
    spans, content = _spans(fmt, text), FORMATS[fmt].content_openers
    starts = {start for start, _, _ in spans}
    places = [
        end
        for _, end, name in spans
        if name.endswith("_CLOSE") and name not in content and (end in starts or end == len(text))
    ]
    at = _pick(draw, places)
    if at is None:
        return None
    return text[:at] + draw(st.sampled_from(["\n", "\n\n", " ", "\r\n"])) + text[at:]


def duplicated_call_close(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """The close of a call written twice (not before a call whose opener was left out: with
    Python's call syntax too, that is three mistakes in a row, read as content; nor where a
    string was left open: with the closes in the repair's lookahead of three markers, its text
    may as well hold them)."""
    close, prefix = _text_of(fmt, "CALL_CLOSE"), _call_prefix(fmt)
    spans = _spans(fmt, text)
    if any(name == "CALL_CLOSE" and _left_open(fmt, text, start) for start, _, name in spans):
        return None
    places = [end for _, end, name in spans if name == "CALL_CLOSE" and not (prefix and text.startswith(prefix, end))]
    at = _pick(draw, places)
    if at is None or close is None:
        return None
    return text[:at] + close + text[at:]


def call_opener_left_out(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """A call that starts where content would (after another marker) written without its
    opening marker, when a fixed word follows the opener (Gemma's ``call:``)."""
    if not _opener_word(fmt):
        return None
    spans, prefix = _spans(fmt, text), _call_prefix(fmt) or ""
    ends = {end for _, end, _ in spans}
    # Only before the word itself: ``:call:NAME{`` with no opener is not read as a call.
    close = _text_of(fmt, "CALL_CLOSE") or ""
    places = [
        start
        for start, end, name in spans
        if name == "CALL_OPEN"
        and start in ends
        and text.startswith(prefix, end)
        and not text.endswith(close * 2, 0, start)
    ]
    at = _pick(draw, places)
    if at is None:
        return None
    opener = _text_of(fmt, "CALL_OPEN") or ""
    return text[:at] + text[at + len(opener) :]


@cache
def _opener_word(fmt: str) -> bool:
    grammar = compiled(FORMATS[fmt].grammar)
    return "CALL_PREFIX" in grammar.patterns


def json_quotes_for_a_string(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """A Gemma string written with JSON's quotes (escaped as JSON escapes) or Python's single
    quotes instead of ``<|"|>``."""
    quote = _text_of(fmt, "QUOTE")
    if quote is None:
        return None
    pairs = _string_spans(fmt, text)
    if not pairs:
        return None
    start, end = draw(st.sampled_from(pairs))
    inner = text[start + len(quote) : end - len(quote)]
    if draw(st.booleans()) and not re.search(r"['\\\n\r]", inner):
        written = f"'{inner}'"
    else:
        written = json.dumps(inner, ensure_ascii=False)
    return text[:start] + written + text[end:]


def quoted_number(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """A GLM number argument written in quotes (the schema says it is a number)."""
    key_close, opener, close = (_text_of(fmt, name) for name in ("KEY_CLOSE", "VALUE_OPEN", "VALUE_CLOSE"))
    if key_close is None or opener is None or close is None:
        return None
    keys = "|".join(re.escape(key) for key in _numeric_keys())
    value = re.escape(key_close) + r"\s*" + re.escape(opener) + r"(-?\d+)" + re.escape(close)
    places = list(re.finditer(rf"(?<![^>])(?:{keys}){value}", text))
    if not places:
        return None
    m = draw(st.sampled_from(places))
    return text[: m.start(1)] + f'"{m.group(1)}"' + text[m.end(1) :]


@cache
def _numeric_keys() -> tuple[str, ...]:
    """Top-level parameters of the test tools whose schema is a number and nothing else."""
    keys = set()
    for tool in TOOLS:
        for key, schema in tool["function"]["parameters"].get("properties", {}).items():
            if schema.get("type") in ("integer", "number"):
                keys.add(key)
    return tuple(sorted(keys))


def value_close_left_out(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """The close of a call's last value left out: the call's close follows the value directly."""
    close, call_close = _text_of(fmt, "VALUE_CLOSE"), _text_of(fmt, "CALL_CLOSE")
    if close is None or call_close is None:
        return None
    places = [m.start() for m in re.finditer(re.escape(close + call_close), text)]
    at = _pick(draw, places)
    if at is None:
        return None
    return text[:at] + text[at + len(close) :]


def trailing_comma_in_arguments(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """A comma before the arguments object's closing brace (Solar's JSON), where the call ends
    (``support.calls.call_ends``: at its closing marker, or where an implied closer stands)."""
    if _text_of(fmt, "CALL_ARGS") is None:
        return None
    places = [start - 1 for start, _ in call_ends(fmt, text) if text[start - 1 : start] == "}"]
    places = [at for at in places if text[:at].rstrip()[-1:] not in ("{", ",")]
    at = _pick(draw, places)
    if at is None:
        return None
    return text[:at] + "," + text[at:]


def header_left_out_after_reasoning(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """Solar's ``<|begin|>assistant`` header left out after the reasoning turn's ``<|end|>``."""
    begin, end = _text_of(fmt, "BEGIN"), _text_of(fmt, "END")
    think = _text_of(fmt, "THINK")
    if begin is None or end is None or think is None or think not in text:
        return None
    header = end + begin + "assistant"
    at = text.find(header, text.find(think))
    if at < 0:
        return None
    return text[: at + len(end)] + text[at + len(header) :]


def _call_prefix(fmt: str) -> str | None:
    """The fixed word after a call's opening marker (Gemma's ``call:``), from the grammar."""
    pattern = compiled(FORMATS[fmt].grammar).patterns.get("CALL_PREFIX")
    return None if pattern is None else pattern.literal


_NAME = re.compile(r"[^\s{}()<>,\[\]]+")
_OTHER_STRING = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'""")


def _bodies(fmt: str, text: str) -> list[tuple[int, int, list[int], list[int]]]:
    """Each call's arguments object in Gemma's value syntax, right after ``<|tool_call>call:NAME``:
    its start and end, and the places of its top-level key colons and commas (strings between
    quote markers, or in JSON's or Python's quotes, skipped)."""
    quote, prefix = _text_of(fmt, "QUOTE"), _call_prefix(fmt)
    if quote is None or prefix is None:
        return []
    found = []
    for _, end, name in _spans(fmt, text):
        head = _NAME.match(text, end + len(prefix)) if text.startswith(prefix, end) else None
        if name != "CALL_OPEN" or head is None or not text.startswith("{", head.end()):
            continue
        start = at = head.end()
        depth, in_string, colons, commas = 0, False, [], []
        while at < len(text):
            other = None if in_string else _OTHER_STRING.match(text, at)
            if text.startswith(quote, at) or other is not None:
                in_string = in_string != (other is None)
                at = other.end() if other is not None else at + len(quote)
                continue
            char = text[at]
            if not in_string and char in "{[":
                depth += 1
            elif not in_string and char in "}]":
                depth -= 1
                if depth == 0:
                    found.append((start, at + 1, colons, commas))
                    break
            elif not in_string and depth == 1 and char in ":,":
                (colons if char == ":" else commas).append(at)
            at += 1
    return found


def python_call_syntax(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """A Gemma call's arguments in Python's call syntax: ``call:NAME(key=value, …)``."""
    bodies = [body for body in _bodies(fmt, text) if text[body[0] : body[1]] != "{}" or draw(st.booleans())]
    if not bodies:
        return None
    start, end, colons, commas = draw(st.sampled_from(bodies))
    edits = {start: "(", end - 1: ")"} | dict.fromkeys(colons, "=") | dict.fromkeys(commas, ", ")
    return text[:start] + "".join(edits.get(at, text[at]) for at in range(start, end)) + text[end:]


def calls_joined_in_one_block(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """Two calls in one call block: the next ``call:`` right after the ``}`` (the close of one
    call and the opener of the next left out)."""
    close, opener, prefix = _text_of(fmt, "CALL_CLOSE"), _text_of(fmt, "CALL_OPEN"), _call_prefix(fmt)
    if close is None or opener is None or prefix is None:
        return None
    # After a call whose arguments end well: a string left open before its ``}`` with the
    # next call right after it is a pair this kind does not make (its text reads on as the string).
    ends = {end for _, end, _, _ in _bodies(fmt, text)}
    places = [m.start() for m in re.finditer(re.escape(close + opener + prefix), text) if m.start() in ends]
    at = _pick(draw, places)
    if at is None:
        return None
    return text[:at] + draw(st.sampled_from(["", "\n"])) + text[at + len(close + opener) :]


def final_call_close_left_out(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """The output ends on a call's arguments, at the end or at a stop marker: its closing
    marker left out (the model stopped there: parsed with ``finish_reason="stop"``). Not
    after a string left open in an earlier call (see ``string_close_left_out_before_the_brace``)."""
    close = _text_of(fmt, "CALL_CLOSE")
    if close is None or _call_prefix(fmt) is None or _some_string_left_open(fmt, text):
        return None
    stops = {_text_of(fmt, name) for name in FORMATS[fmt].stop_terminals}
    at = next((text.rfind(close + stop) for stop in stops if stop and text.endswith(close + stop)), -1)
    if text.endswith(close):
        at = len(text) - len(close)
    return None if at < 0 else text[:at] + text[at + len(close) :]


def stray_colon_after_the_opener(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """A stray ``:`` after the call's opening marker: ``<|tool_call>:call:NAME{…}``."""
    opener, prefix = _text_of(fmt, "CALL_OPEN"), _call_prefix(fmt)
    if opener is None or prefix is None:
        return None
    places = [m.start() + len(opener) for m in re.finditer(re.escape(opener + prefix), text)]
    at = _pick(draw, places)
    return None if at is None else text[:at] + ":" + text[at:]


def _string_spans(fmt: str, text: str) -> list[tuple[int, int]]:
    """Each Gemma string as the structure delimits it: (start of its opening quote, end of its
    closing quote). An opening quote stands where a value starts, a closing one where the value
    ends; a string with a quote token inside (another corruption wrote one) is left out."""
    found, opened, inner = [], None, False
    for start, end, name in _spans(fmt, text):
        if name != "QUOTE":
            opened = None
        elif opened is None:
            opened, inner = (start if text[:start].rstrip()[-1:] in (":", "[", ",", "=", "(") else None), False
        elif text[end:].lstrip()[:1] in ("", ",", "}", "]", ")") or (
            text[end:].startswith("<") and not text.startswith(_text_of(fmt, "QUOTE") or "", end)
        ):
            if not inner:
                found.append((opened, end))
            opened = None
        else:
            inner = True
    return found


def string_close_left_out_before_the_brace(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """A call's last string left open right before the call's ``}``: ``{command:<|"|>ls}``.
    Where the last call's close was left out too, only in that call: a string left open in one
    call, the close of a later one left out and a malformed value between are more than the
    repair's lookahead of three markers tells apart from a string that runs on."""
    quote, close = _text_of(fmt, "QUOTE"), _text_of(fmt, "CALL_CLOSE")
    if quote is None or close is None or close * 2 in text:  # see duplicated_call_close
        return None
    closed = final_call_close_left_out(fmt, text, draw) is not None  # the last close is there
    places = [
        end - len(quote)
        for _, end in _string_spans(fmt, text)
        if (closed and text.startswith("}" + close, end) and not text.startswith("}" + close * 2, end))
        or (text.startswith("}", end) and _ends_at_a_stop(fmt, text, end + 1))
    ]
    at = _pick(draw, places)
    return None if at is None else text[:at] + text[at + len(quote) :]


def _some_string_left_open(fmt: str, text: str) -> bool:
    """Whether a call's close follows a Gemma string left open."""
    return any(name == "CALL_CLOSE" and _left_open(fmt, text, start) for start, _, name in _spans(fmt, text))


def _left_open(fmt: str, text: str, at: int) -> bool:
    """Whether a Gemma string is open at ``at``: an odd count of quote markers since the call's
    opening marker."""
    spans = [(start, name) for start, _, name in _spans(fmt, text) if start < at]
    opened = max((i for i, (_, name) in enumerate(spans) if name == "CALL_OPEN"), default=-1)
    return sum(name == "QUOTE" for _, name in spans[opened + 1 :]) % 2 == 1


def _ends_at_a_stop(fmt: str, text: str, at: int) -> bool:
    """Whether ``text`` ends at ``at``, or a stop marker that ends it starts there."""
    stops = {_text_of(fmt, name) for name in FORMATS[fmt].stop_terminals}
    return at == len(text) or any(stop and text.endswith(stop) and at == len(text) - len(stop) for stop in stops)


def quote_token_for_a_literal_quote(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """The ``"`` characters of a Gemma string written as the quote token (Python's ``\"\"\"``
    as three tokens). Not in a string whose text starts with ``"``: two quote tokens at a
    value's start are an empty string, whatever follows."""
    quote = _text_of(fmt, "QUOTE")
    if quote is None:
        return None
    strings = [
        (start, end)
        for start, end in _string_spans(fmt, text)
        if '"' in text[start + len(quote) : end - len(quote)] and text[start + len(quote)] != '"'
    ]
    if not strings:
        return None
    start, end = draw(st.sampled_from(strings))
    inner = text[start + len(quote) : end - len(quote)].replace('"', quote)
    return text[: start + len(quote)] + inner + text[end - len(quote) :]


_BARE_SAFE = re.compile(r"[A-Za-z][\w.-]*(?: [\w.-]+)*")
"""Text a model may write as a bare value and mean the string: no punctuation of the value
syntax, and (below) not a word or number of it."""


def bare_string_value(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """A Gemma string value written bare, with no quotes: ``{city:Paris}``."""
    quote = _text_of(fmt, "QUOTE")
    if quote is None:
        return None
    strings = []
    for start, end in _string_spans(fmt, text):
        inner = text[start + len(quote) : end - len(quote)]
        if _BARE_SAFE.fullmatch(inner) and inner not in ("true", "false", "null", "inf", "nan"):
            strings.append((start, end, inner))
    if not strings:
        return None
    start, end, inner = draw(st.sampled_from(strings))
    return text[:start] + inner + text[end:]


def layout_in_a_call_list(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """White space between the tokens of a list of calls (vLLM's Mistral tests write
    ``[ {"name": …}]``): after the list's ``[`` or a ``,`` between two calls, where the grammar
    reads the calls as a list (its ``LIST_OPEN`` and ``SEP`` patterns after ``CALLS_OPEN``)."""
    opener = _text_of(fmt, "CALLS_OPEN")
    if opener is None or not {"LIST_OPEN", "SEP"} <= set(compiled(FORMATS[fmt].grammar).patterns):
        return None
    at = _pick(draw, _list_places(text, text.find(opener) + len(opener)) if opener in text else [])
    if at is None:
        return None
    return text[:at] + draw(st.sampled_from(["\n", " ", "\n  "])) + text[at:]


def _list_places(text: str, at: int) -> list[int]:
    """Where, in the JSON list that starts at ``at`` (after white space), its ``[`` and each
    ``,`` between its items end (strings skipped)."""
    at = len(text) - len(text[at:].lstrip())
    if not text.startswith("[", at):
        return []
    places, depth, in_string, escaped = [at + 1], 0, False, False
    for index in range(at, len(text)):
        char = text[index]
        if in_string:
            in_string, escaped = (escaped or char != '"'), (not escaped and char == "\\")
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                break
        elif char == "," and depth == 1:
            places.append(index + 1)
    return places


def layout_between_calls(fmt: str, text: str, draw: st.DrawFn) -> str | None:
    """White space after a call that closes with a pattern (no marker ``layout_after_a_close``
    sees: Llama 4's JSON object's ``}``), where the next call's opener, a stop marker or the end
    follows: the models separate calls with new lines or spaces."""
    grammar = compiled(FORMATS[fmt].grammar)
    if "CALL_CLOSE" not in grammar.patterns:
        return None
    opener = grammar.patterns["CALL_OPEN"].regex
    stops = {_text_of(fmt, name) for name in FORMATS[fmt].stop_terminals} - {None}
    places = [
        end
        for _, end in call_ends(fmt, text)
        if end == len(text) or opener.match(text, end) or any(text.startswith(stop, end) for stop in stops if stop)
    ]
    at = _pick(draw, places)
    if at is None:
        return None
    return text[:at] + draw(st.sampled_from(["\n", "\n\n", " ", "\r\n"])) + text[at:]


CATALOGUE: list[Corruption] = [
    layout_after_a_close,
    duplicated_call_close,
    call_opener_left_out,
    json_quotes_for_a_string,
    quoted_number,
    value_close_left_out,
    trailing_comma_in_arguments,
    header_left_out_after_reasoning,
    python_call_syntax,
    calls_joined_in_one_block,
    final_call_close_left_out,
    stray_colon_after_the_opener,
    string_close_left_out_before_the_brace,
    quote_token_for_a_literal_quote,
    bare_string_value,
    layout_in_a_call_list,
    layout_between_calls,
]

_REALISTIC_VALUES = {
    "city": ["New York, NY", "Paris", "São Paulo", "Tokyo"],
    "code": ['print("hi")', 'def f():\n    """Doc."""\n    return 1', 'x = ""', "ls -la", 'echo "a b"'],
    "query": ["weather today", 'the "best" pizza', "python release notes"],
}


@st.composite
def realistic_messages(draw: st.DrawFn, fmt: str) -> dict[str, Any]:
    """Assistant messages with the values models write in real calls: commands, places, code
    with quotes, Python's triple quotes."""
    message: dict[str, Any] = {"role": "assistant"}
    if draw(st.booleans()):
        message["reasoning_content"] = draw(st.sampled_from(["I will check.", "Let me run it."]))
    calls = []
    for index in range(draw(st.integers(1, 3))):
        name, key = draw(st.sampled_from([("get_weather", "city"), ("run_code", "code"), ("search", "query")]))
        arguments: dict[str, Any] = {key: draw(st.sampled_from(_REALISTIC_VALUES[key]))}
        if name == "get_weather" and draw(st.booleans()):
            arguments["units"] = draw(st.sampled_from(["C", "F"]))
        written_id = strategies.call_id(fmt, f"call{index:06d}", name, index)
        calls.append({"id": written_id, "type": "function", "function": {"name": name, "arguments": arguments}})
    message["tool_calls"] = calls
    return message


@st.composite
def realistic_completions(draw: st.DrawFn, fmt: str) -> Completion:
    """What the format's template writes for a realistic message (as ``completions`` does)."""
    c, options, message = codec.load(fmt), draw(strategies.options(fmt)), draw(realistic_messages(fmt))
    text = completion_after(c, HISTORY, message, TOOLS, NOW, options)
    assume(text is not None)
    assert text is not None
    return Completion(text, options, expected_reply(c, [*HISTORY, message], TOOLS, NOW, options))


@st.composite
def corrupted(draw: st.DrawFn, fmt: str) -> tuple[Completion, str, list[str]]:
    """A completion, the text after several corruptions, and their names."""
    case = draw(completions(fmt) | realistic_completions(fmt))
    text, applied = case.text, []
    for _ in range(draw(st.integers(2, 5))):
        corruption = draw(st.sampled_from(CATALOGUE))
        changed = corruption(fmt, text, draw)
        if changed is not None and changed != text:
            text, applied = changed, [*applied, corruption.__name__]
    assume(applied)
    return case, text, applied


@st.composite
def chunkings(draw: st.DrawFn, fmt: str, text: str) -> list[str]:
    """Cuts at random places, around every run of white space (chunks that are only white
    space), and inside markers (chunks that end inside one)."""
    cuts = set(draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12)))
    for m in re.finditer(r"\s+", text):
        cuts |= {m.start(), m.end()}
    for start, end, _ in _spans(fmt, text):
        if end - start > 1:
            cuts.add(draw(st.integers(start + 1, end - 1)))
    points = [0, *sorted(c for c in cuts if 0 < c < len(text)), len(text)]
    return [text[a:b] for a, b in pairwise(points) if b > a]


@pytest.mark.parametrize("fmt", codec.formats())
def test_corrupted_completions_parse_to_the_original_message(fmt: str) -> None:
    @QUICK
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        case, text, applied = data.draw(corrupted(fmt), label="corrupted")
        c = codec.load(fmt)
        whole = c.parse(text, tools=TOOLS, id_factory=made_up_id, finish_reason="stop", **case.options)
        assert with_ids_of(whole, case.expected, text, fmt) == case.expected, f"after {applied}"
        parser = c.stream(tools=TOOLS, id_factory=made_up_id, **case.options)
        for chunk in data.draw(chunkings(fmt, text), label="chunks"):
            parser.feed(chunk)
        parser.close("stop")
        streamed = parser.message
        assert streamed == whole, f"chunking changed the parse after {applied}"
        assert [(d.code, d.offset) for d in streamed.diagnostics] == [(d.code, d.offset) for d in whole.diagnostics]

    check()
