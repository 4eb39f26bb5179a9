"""What holds without any engine installed: ``import codec`` imports none, and the session the
engine plugins share folds codec's events as a client would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import codec
from codec.integrations._session import Session, template_options
from support.engines import MESSAGES, TOOLS, Rebuilt, cases, expected

ROOT = Path(__file__).resolve().parent.parent


def test_importing_codec_imports_no_engine() -> None:
    script = (
        "import codec, codec.integrations, codec.integrations._session, sys; "
        "loaded = {'vllm', 'sglang', 'torch'} & set(sys.modules); assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT)


@pytest.mark.parametrize(("fmt", "case", "completion", "options"), cases())
def test_a_session_fed_character_by_character_rebuilds_codecs_parse(
    fmt: str, case: str, completion: str, options: dict[str, object]
) -> None:
    fmt_codec = codec.load(fmt)
    session = Session(fmt_codec, TOOLS, template_options(fmt_codec, options))
    session.prompt = fmt_codec.render(MESSAGES, tools=TOOLS, **options)
    rebuilt = Rebuilt()
    for index, character in enumerate(completion):
        session.feed(character)
        if index % 2:  # the reasoning half takes some feeds, the tool half the rest
            rebuilt.add(session.take_reasoning(), None, [])
        delta = session.take()
        calls = [
            {"index": c.index, "id": c.id, "function": {"name": c.name, "arguments": c.arguments}} for c in delta.calls
        ]
        rebuilt.add(delta.reasoning, delta.content, calls)
    session.close()
    delta = session.take()
    calls = [
        {"index": c.index, "id": c.id, "function": {"name": c.name, "arguments": c.arguments}} for c in delta.calls
    ]
    rebuilt.add(delta.reasoning, delta.content, calls)
    got, want = rebuilt.reply(), expected(fmt, completion, options)
    assert (got["reasoning"], got["content"], got["tool_calls"]) == (
        want["reasoning"],
        want["content"],
        want["tool_calls"],
    )
