"""The sans-IO pieces of ``codec serve``'s wire: the SSE line reader and strict JSON.

The line reader is fed every input whole, one byte at a time and at every split point (as
h11's tests feed theirs); strict JSON agrees with ``json.loads`` on JSON, and refuses what
``json.loads`` takes but JSON is not.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("starlette")

from codec.serve.sse import LineReader, LineTooLong
from codec.serve.strict_json import BadJSON, loads

STREAM = b"data: a\r\n\r\n: ping\rdata: b\n\nevent: x\ndata: c\r\r\n\n"
LINES = [b"data: a", b"", b": ping", b"data: b", b"", b"event: x", b"data: c", b"", b""]


def read(pieces: list[bytes], max_bytes: int = 100) -> list[bytes]:
    reader = LineReader(max_bytes)
    return [line for piece in pieces for line in reader.feed(piece)]


def test_lines_whole_bytewise_and_at_every_split() -> None:
    assert read([STREAM]) == LINES
    assert read([STREAM[i : i + 1] for i in range(len(STREAM))]) == LINES
    for split in range(len(STREAM) + 1):
        assert read([STREAM[:split], STREAM[split:]]) == LINES, split


def test_a_cr_then_lf_in_the_next_piece_ends_one_line() -> None:
    assert read([b"a\r", b"\nb\n"]) == [b"a", b"b"]
    assert read([b"a\r", b"", b"\n", b"\n"]) == [b"a", b""]


def test_a_line_may_be_as_long_as_the_cap_and_no_longer() -> None:
    assert read([b"x" * 10 + b"\n"], max_bytes=10) == [b"x" * 10]
    assert read([b"x" * 5, b"x" * 5, b"\n"], max_bytes=10) == [b"x" * 10]
    with pytest.raises(LineTooLong):
        read([b"x" * 11 + b"\n"], max_bytes=10)
    with pytest.raises(LineTooLong):
        read([b"x" * 6, b"x" * 5], max_bytes=10)  # unfinished, and already too long


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
       | st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20))  # fmt: skip
def test_json_reads_as_json_loads_does(value: Any) -> None:
    text = json.dumps(value)
    assert loads(text, max_depth=128) == json.loads(text)
    assert loads(text.encode(), max_depth=128) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[NaN]", "NaN"),
        ('{"a": -Infinity}', "Infinity"),
        ('["\\ud83d"]', "surrogate \\ud83d"),  # the first half of an emoji, alone
        ('{"\\udc00": 1}', "surrogate"),
        ("1" * 5000, "digits"),
        ("[" * 10_000 + "]" * 10_000, "deeper than 3"),
        ('{"a": }', "line 1, column 7"),
    ],
)
def test_what_json_loads_takes_but_json_is_not(text: str, said: str) -> None:
    with pytest.raises(BadJSON, match=".*".join(map(_escaped, said.split()))):
        loads(text, max_depth=3)


def test_depth_up_to_the_cap_passes_and_one_more_does_not() -> None:
    assert loads("[[[1]]]", max_depth=3) == [[[1]]]
    assert loads('{"a": {"b": [2]}}', max_depth=3) == {"a": {"b": [2]}}
    with pytest.raises(BadJSON) as caught:
        loads('{"a": {"b": [[2]]}}', max_depth=3)
    assert caught.value.path == "a.b[0]"


def test_a_surrogate_paired_is_text() -> None:
    assert loads('["\\ud83d\\ude00"]', max_depth=3) == ["\N{GRINNING FACE}"]


def _escaped(word: str) -> str:
    return "".join("\\" + char if not char.isalnum() else char for char in word)
