"""Pinned edges of Solar Open's streamed JSON arguments reader (``codec/arguments/json_stream.py``),
found by mutation testing (issue 12, "Tests that bite")."""

from __future__ import annotations

import json

import pytest

import codec
from codec.arguments.emitter import ArgumentsEmitter
from codec.arguments.json_stream import JsonArgumentsStream


def feed_all(stream: JsonArgumentsStream, chunks: list[str]) -> tuple[str, str, bool]:
    """``(fragments, rejected text, complete)`` of ``chunks`` fed one by one, then closed."""
    fragments, rejected = [], []
    for chunk in chunks:
        fragment, refused = stream.feed(chunk)
        fragments.append(fragment)
        rejected.append(refused)
    fragment, complete = stream.close()
    return "".join(fragments) + fragment, "".join(rejected), complete


def nested_arguments(depth: int) -> str:
    """An arguments object holding ``depth`` arrays, one inside the other."""
    return '{"a": ' + "[" * depth + "]" * depth + "}"


def test_a_fresh_stream_reports_nothing() -> None:
    """The public counters and flags start empty, as bools, lists, 0 and ``""``."""
    stream = JsonArgumentsStream(ArgumentsEmitter())
    assert (stream.failed, stream.too_deep) == (False, False)
    assert (stream.duplicates, stream.dropped, stream.dropped_at) == ([], [], [])
    assert (stream.examined, stream.unconsumed) == (0, "")


def test_the_default_depth_limit_is_the_limits_default() -> None:
    """Built without ``max_depth``, the stream admits ``Limits().max_depth`` containers inside the
    arguments object and stops at one more (``too_deep``)."""
    limit = codec.Limits().max_depth
    stream = JsonArgumentsStream(ArgumentsEmitter())
    assert feed_all(stream, [nested_arguments(limit)])[1:] == ("", True)
    assert stream.too_deep is False
    deeper = JsonArgumentsStream(ArgumentsEmitter())
    text = nested_arguments(limit + 1)
    assert feed_all(deeper, [text])[1] == text[6 + limit :]
    assert deeper.too_deep is True


def test_a_complete_object_leaves_nothing_unconsumed() -> None:
    """White space after the closing ``}`` belongs to the JSON: nothing is left to keep as content."""
    for chunks in (['{"a": 1}  \n'], ['{"a": 1}', "  ", "\n"], list('{"a": 1} \n')):
        stream = JsonArgumentsStream(ArgumentsEmitter())
        assert feed_all(stream, chunks) == ('{"a": 1}', "", True)
        assert stream.unconsumed == ""


@pytest.mark.parametrize("chunk", [1, 2, 5, 1000])
def test_every_character_is_examined_at_least_once(chunk: int) -> None:
    """``examined`` counts the characters looked at: all of them, however the text is chunked."""
    text = json.dumps({"path": "a.py", "text": "x" * 50 + "\\n", "n": [1, 2.5, True, None], "o": {}})
    stream = JsonArgumentsStream(ArgumentsEmitter())
    feed_all(stream, [text[i : i + chunk] for i in range(0, len(text), chunk)])
    assert len(text) <= stream.examined <= 3 * len(text)


def chunked(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


# Escapes at the edges of the surrogate ranges (D800-DBFF high, DC00-DFFF low) and the shortest
# escapes, each one where the step-by-step decoder meets it.
EDGE_ESCAPES = [
    "\\n",
    "\\u00e9",
    "\\ud800\\udc00",
    "\\udbff\\udfff",
    "\\ud7ff\\udc00",
    "\\ud800\\ue000",
    "\\udc00\\udc00",
    "\\ud800\\udbff\\udc00",
]


@pytest.mark.parametrize("escape", EDGE_ESCAPES)
def test_edge_escapes_decode_as_json_loads_does_however_chunked(escape: str) -> None:
    text = '{"a": "x' + escape + 'y"}'
    expected = json.loads(text)
    splits = [[text[:cut], text[cut:]] for cut in range(len(text) + 1)]
    for chunks in [*splits, chunked(text, 1), chunked(text, 3)]:
        stream = JsonArgumentsStream(ArgumentsEmitter())
        fragments, rejected, complete = feed_all(stream, chunks)
        assert (json.loads(fragments), rejected, complete) == (expected, "", True), chunks


@pytest.mark.parametrize("escape", [e for e in EDGE_ESCAPES if not e.endswith("\\udbff")])
def test_a_complete_escape_at_the_cut_off_end_is_kept(escape: str) -> None:
    """Output that stops right after an escape (no closing quote) keeps the escape's character."""
    text = '{"a": "x' + escape
    for chunks in ([text], chunked(text, 1)):
        stream = JsonArgumentsStream(ArgumentsEmitter())
        fragments, rejected, complete = feed_all(stream, chunks)
        assert (json.loads(fragments), rejected, complete) == ({"a": json.loads('"x' + escape + '"')}, "", False)


@pytest.mark.parametrize(
    ("escape", "kept"),
    [("\\uz000", "x"), ("\\u0z00", "x"), ("\\ud800\\uz000", "x\ud800"), ("\\ud800\\udz00", "x\ud800")],
)
def test_a_unicode_escape_with_a_bad_hex_digit_is_rejected_from_there(escape: str, kept: str) -> None:
    """A lone high surrogate before the bad escape decodes alone; the rejection starts at the bad one."""
    text = '{"a": "x' + escape + '"}'
    bad = "\\u" + escape.rsplit("\\u", 1)[1]
    for chunks in ([text], chunked(text, 1), chunked(text, 4)):
        stream = JsonArgumentsStream(ArgumentsEmitter())
        fragments, rejected, complete = feed_all(stream, chunks)
        assert (json.loads(fragments), rejected, complete) == ({"a": kept}, bad + '"}', False)


def test_a_second_close_adds_nothing() -> None:
    """The JSON is closed once: a second ``close`` neither closes the object again nor loses it."""
    for text in ('{"a": [1', '{"a": 1}'):
        stream = JsonArgumentsStream(ArgumentsEmitter())
        stream.feed(text)
        first = stream.close()
        assert stream.close() == ("", first[1])


def test_text_rejected_after_an_escape_split_across_chunks_starts_at_the_break() -> None:
    """An escape completed by the next chunk is accounted for up to its end, so a break after it
    rejects only from the break."""
    for cut in range(len('{"a": "x\\'), len('{"a": "x\\u00e9')):
        text = '{"a": "x\\u00e9\\q"}'
        stream = JsonArgumentsStream(ArgumentsEmitter())
        fragments, rejected, complete = feed_all(stream, [text[:cut], text[cut:]])
        assert (json.loads(fragments), rejected, complete) == ({"a": "xé"}, '\\q"}', False)
