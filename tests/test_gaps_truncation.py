"""A completion cut off anywhere keeps what arrived (issue 12, "Tests that bite").

The completion is one call with a value of every JSON kind and a duplicated argument, written by
each format's own template (``support.calls``). It is cut at every offset and parsed.

"Kept" means, as the code does it:

- every token (run of letters and digits) of the text that arrived outside complete markers is
  found in the message: its reasoning or content, the truncated call (``AssistantMessage.truncated_call``:
  id, name, keys, arguments JSON), a call a repair completed, or a diagnostic's message. A marker
  cut off at the end is text, and kept like any. The only tokens left out are the fixed words the
  grammar reads as structure (``header_words``: Gemma's ``call``), not JSON's ``true``/``null``;
- a value cut right after its last character is in the truncated call whole, typed by the
  schema (``12`` is 12, ``[7, 8`` is [7, 8]); a duplicate cut there goes to content.

Each cut is parsed whole and fed in 3-character chunks (or a character at a time); both agree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import codec
from codec.engine.grammar import compiled
from codec.registry import FORMATS
from support.calls import (
    call_completion,
    call_ends,
    markers,
    parse,
    renamed,
    text_runs,
    tokens,
    tool,
    where,
    without_unread_ids,
)
from support.parsing import WORD, header_words

PROPERTIES = {
    "text": {"type": "string"},
    "count": {"type": "integer"},
    "ratio": {"type": "number"},
    "flag": {"type": "boolean"},
    "none": {"type": "null"},
    "list": {"type": "array", "items": {"type": "integer"}},
    "dict": {"type": "object"},
}
TOOLS = [tool("f", PROPERTIES)]
# (key, value, the value's last token): the values' tokens are distinct, so a lost one is missed.
VALUES: list[tuple[str, Any, str]] = [
    ("text", "hello world", "world"),
    ("count", 12, "12"),
    ("ratio", 6.25, "25"),
    ("flag", True, "true"),
    ("none", None, "null"),
    ("list", [7, 8], "8"),
    ("dict", {"inner": "deep"}, "deep"),
]
DUPLICATE = ("count", 34)  # written after count's first value (Gemma sorts keys: count, countx, ...)
_CLOSERS: dict[type, str] = {list: "]", dict: "}"}
_PYTHON_WORDS = {"true": "True", "false": "False", "null": "None"}


def completion(fmt: str) -> str:
    arguments: dict[str, Any] = {}
    for key, value, _ in VALUES:
        arguments[key] = value
        if key == DUPLICATE[0]:
            arguments[key + "x"] = DUPLICATE[1]
    return renamed(call_completion(fmt, TOOLS, "f", arguments), DUPLICATE[0] + "x", DUPLICATE[0])


def kept(message: codec.AssistantMessage) -> str:
    """What a message keeps, as lower-case text: reasoning, content, each call's id, name and
    arguments JSON (the truncated call, and any call a repair closed), and the diagnostics'
    messages. Content is one string, so a token is looked for in it, not among its tokens
    (``34`` and ``r`` kept as content read ``34r``)."""
    texts = [message.reasoning or "", codec.models.content_text(message.content)]
    truncated = () if message.truncated_call is None else (message.truncated_call,)
    for call in (*message.tool_calls, *truncated):
        texts += [call.id or "", call.name, call.arguments_json]
    texts += [diagnostic.message for diagnostic in message.diagnostics]
    return "\n".join(texts).lower()


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def assert_same(streamed: codec.AssistantMessage, whole: codec.AssistantMessage) -> None:
    """Equal messages, truncated calls and diagnostics (the last two are outside ``==``)."""
    assert streamed == whole
    assert streamed.truncated_call == whole.truncated_call
    assert where(streamed) == where(whole)


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_cut_anywhere_keeps_every_token_that_arrived(fmt: str) -> None:
    text = completion(fmt)
    structure = header_words(fmt) - (_JSON_WORDS - _attribute_words(fmt))
    for cut in range(len(text) + 1):
        whole = parse(fmt, [text[:cut]], TOOLS)
        assert_same(parse(fmt, chunks(text[:cut], 3), TOOLS), whole)
        held = kept(whole)
        arrived = text_runs(fmt, without_unread_ids(fmt, text[:cut]))
        lost = {token for token in tokens(arrived) - structure if token not in held}
        assert not lost, (cut, text[:cut], lost)


_JSON_WORDS = frozenset({"true", "false", "null"})


def _attribute_words(fmt: str) -> frozenset[str]:
    """JSON's words inside a longer fixed text the grammar reads as structure, not as a value
    (DeepSeek-V3.2's ` string="true"` after a key); Gemma's value word ``true`` is its own."""
    patterns = compiled(FORMATS[fmt].grammar).patterns.values()
    fixed = [p.literal for p in patterns if p.literal is not None and p.literal.strip() not in _JSON_WORDS]
    return frozenset(word for literal in fixed for word in WORD.findall(literal)) & _JSON_WORDS


def value_ends(fmt: str, text: str) -> list[tuple[str, Any, int]]:
    """``(key, value, offset just after the value's last character)``; for a string, the cut
    falls before its closing quote; for an array or object, after its closing bracket. Where the
    grammar reads the value's word as structure elsewhere too (``_attribute_words``:
    DeepSeek-V3.2's `string="true"`), the value's is the first after its key."""
    ends = []
    for key, value, last in VALUES:
        if text.count(last) != 1:  # Qwen3-Coder's template writes Python's True and None
            last = _PYTHON_WORDS.get(last, last) if last not in _attribute_words(fmt) else last
        assert text.count(last) == 1 or last in _attribute_words(fmt), (last, text)
        end = text.index(last, text.index(key) if text.count(last) > 1 else 0) + len(last)
        closer = _CLOSERS.get(type(value))
        ends.append((key, value, end if closer is None else text.index(closer, end) + 1))
    return ends


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_value_cut_after_its_last_character_is_in_the_truncated_call(fmt: str) -> None:
    text = completion(fmt)
    for key, value, end in value_ends(fmt, text):
        whole = parse(fmt, [text[:end]], TOOLS)
        assert_same(parse(fmt, text[:end], TOOLS), whole)
        assert whole.finish_reason == "length"
        assert whole.truncated_call is not None, (key, text[:end])
        assert whole.truncated_call.arguments[key] == value, (key, text[:end])
        assert json.loads(whole.truncated_call.arguments_json) == whole.truncated_call.arguments


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_duplicate_cut_after_its_value_goes_to_content(fmt: str) -> None:
    """``count: 12, count: 34`` cut right after ``34``: the first value stays, ``34`` is content,
    and a diagnostic says an argument was given twice."""
    text = completion(fmt)
    key, value = DUPLICATE
    end = text.index(str(value)) + len(str(value))
    whole = parse(fmt, [text[:end]], TOOLS)
    assert_same(parse(fmt, text[:end], TOOLS), whole)
    assert whole.truncated_call is not None
    assert whole.truncated_call.arguments[key] == dict((k, v) for k, v, _ in VALUES)[key]
    assert str(value) in codec.models.content_text(whole.content)
    assert "duplicate_key" in [code for code, _ in where(whole)]


@pytest.mark.parametrize("fmt", codec.formats())
def test_a_call_cut_anywhere_before_its_end_is_never_a_call_to_run(fmt: str) -> None:
    """Cut at any offset after the call's opening marker and before the end of its closing one —
    inside a value, between arguments, or inside a marker (``</arg_value><arg_k``,
    ``}<tool_c``) — the output stopped inside the call: it is the truncated call, never in
    ``tool_calls``, and once its name is complete it is the cut-off call and the reply says
    ``length``. (Before that, a call head that goes wrong is kept as content.) A repair must not
    close it."""
    text = completion(fmt)
    opener = next((marker for marker, terminal in markers(fmt).items() if terminal == "CALL_OPEN"), None)
    if opener is None:  # the call opens with no marker (Llama 3's bare object): its own `}` ends it
        first = compiled(FORMATS[fmt].grammar).patterns["CALL_OPEN"].first
        assert first is not None
        start, end = first.search(text).end(), call_ends(fmt, text)[-1][0]  # type: ignore[union-attr]
    else:
        start, end = text.index(opener) + len(opener), call_ends(fmt, text)[-1][1]
    first_key = text.index(VALUES[0][0], start)
    for cut in range(start, end):
        whole = parse(fmt, [text[:cut]], TOOLS)
        assert_same(parse(fmt, chunks(text[:cut], 3), TOOLS), whole)
        assert whole.tool_calls == (), (cut, text[:cut])
        if cut > first_key:  # the name is complete: the call is kept as the cut-off call
            assert whole.finish_reason == "length", (cut, text[:cut])
            assert whole.truncated_call is not None and whole.truncated_call.name == "f", (cut, text[:cut])
