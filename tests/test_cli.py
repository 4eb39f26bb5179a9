"""The ``codec`` command, run as users run it: ``python -m codec ...`` in a subprocess.

Each subcommand's output must be exactly what the library gives for the same input, and every
error a user can cause must end in ``codec: error: ...`` and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import codec
from codec.formats._demo_scenario import HISTORY, NOW, TOOLS
from codec.registry import FORMATS as REGISTRY

# The subprocess imports the same `codec` as this test does (checkout or installed).
ENV = {**os.environ, "PYTHONPATH": str(Path(codec.__file__).resolve().parent.parent)}
FORMATS = codec.formats()


def run(
    *args: str, stdin: bytes = b"", cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "codec", *args], input=stdin, capture_output=True,
        env=ENV, cwd=cwd, timeout=120,
    )


def options(name: str) -> list[str]:
    return [arg for key, value in REGISTRY[name].demo.options.items()
            for arg in ("--option", f"{key}={json.dumps(value)}")]


def sequential(index: int) -> str:
    return f"call_{index}"


@pytest.fixture
def conversation(tmp_path: Path) -> Path:
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps({"messages": HISTORY, "tools": TOOLS}), encoding="utf-8")
    return path


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", FORMATS)
def test_render_prints_exactly_what_render_returns(name: str, conversation: Path) -> None:
    result = run("render", "--format", name, "--now", NOW.isoformat(), *options(name),
                 str(conversation))
    expected = codec.load(name).render(HISTORY, tools=TOOLS, now=NOW, **REGISTRY[name].demo.options)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout == expected.encode("utf-8")


def test_render_reads_a_message_list_from_stdin(tools_file: Path) -> None:
    result = run("render", "-f", "glm", "--tools", str(tools_file), "--no-generation-prompt", "-",
                 stdin=json.dumps(HISTORY).encode())
    expected = codec.load("glm").render(HISTORY, tools=TOOLS, add_generation_prompt=False)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode("utf-8") == expected


@pytest.mark.parametrize("name", FORMATS)
def test_parse_prints_the_openai_message(name: str, tools_file: Path, tmp_path: Path) -> None:
    completion = tmp_path / "completion.txt"
    completion.write_bytes(REGISTRY[name].demo.completion.encode("utf-8"))
    result = run("parse", "-f", name, "--tools", str(tools_file), "--sequential-ids",
                 *options(name), str(completion))
    expected = codec.load(name).parse(REGISTRY[name].demo.completion, tools=TOOLS,
                                      id_factory=sequential, **REGISTRY[name].demo.options)
    assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout) == expected.to_openai()


def test_parse_reports_repairs_on_stderr() -> None:
    result = run("parse", "-f", "glm", stdin=b"thinking</think>hi<tool_call>f<arg_key>k</arg_key>v"
                                              b"</arg_value></tool_call>")
    assert result.returncode == 0, result.stderr.decode()
    assert b"codec: repaired" in result.stderr
    assert json.loads(result.stdout)["tool_calls"][0]["function"]["name"] == "f"


@pytest.mark.parametrize("name", FORMATS)
def test_stream_events_fold_to_the_parsed_message(name: str, tools_file: Path) -> None:
    result = run("stream", "-f", name, "--tools", str(tools_file), "--sequential-ids",
                 *options(name), stdin=REGISTRY[name].demo.completion.encode("utf-8"))
    expected = codec.load(name).parse(REGISTRY[name].demo.completion, tools=TOOLS,
                                      id_factory=sequential, **REGISTRY[name].demo.options)
    assert result.returncode == 0, result.stderr.decode()
    records = [json.loads(line) for line in result.stdout.decode("utf-8").splitlines()]
    assert fold(records) == expected.to_openai()


def fold(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The message the events describe, checking each record's delta on the way."""
    text = {"ReasoningDelta": "", "ContentDelta": ""}
    arguments: dict[int, str] = {}
    calls = []
    for record in records:
        kind = record["event"]
        if kind in text:
            text[kind] += record["text"]
            assert record["delta"] == {("reasoning_content" if kind == "ReasoningDelta"
                                        else "content"): record["text"]}
        elif kind == "ToolCallStart":
            arguments[record["index"]] = ""
            assert record["delta"]["tool_calls"][0]["function"]["name"] == record["name"]
        elif kind == "ToolCallDelta":
            arguments[record["index"]] += record["arguments"]
        else:
            assert kind == "ToolCallEnd" and record["delta"] == {}
            assert arguments[record["index"]] == record["call"]["function"]["arguments"]
            calls.append(record["call"])
    message: dict[str, Any] = {"role": "assistant", "content": text["ContentDelta"] or None}
    if text["ReasoningDelta"]:
        message["reasoning_content"] = text["ReasoningDelta"]
    if calls:
        message["tool_calls"] = calls
    return message


def test_stream_prints_events_before_the_input_ends() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "codec", "stream", "-f", "glm"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(b"Let me think about this.")
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "no event before the end of input"
        first = json.loads(process.stdout.readline())
        assert first["event"] == "ReasoningDelta"
        process.stdin.write(b"</think>Done.")
        process.stdin.close()
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
        assert process.stderr is not None
        process.stderr.close()


def test_demo_shows_every_format(tmp_path: Path) -> None:
    result = run("demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    shown = result.stdout.decode("utf-8")
    for name in FORMATS:
        assert f"=== {name}: " in shown
    assert shown.count("ToolCallEnd[1]") == len(FORMATS)


def assert_usage_error(result: subprocess.CompletedProcess[bytes], *fragments: str) -> str:
    stderr = result.stderr.decode("utf-8")
    assert result.returncode == 2, stderr
    assert stderr.startswith("codec: error: "), stderr
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in stderr
    return stderr


def test_unknown_format_lists_close_matches() -> None:
    assert_usage_error(run("parse", "-f", "gemma3", stdin=b"hi"), "'gemma3'", "'gemma4'")


def test_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert_usage_error(run("render", "-f", "glm", str(missing)), str(missing))


def test_invalid_json_gives_its_position(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('[{"role": "user",\n "content": }]', encoding="utf-8")
    assert_usage_error(run("render", "-f", "glm", str(broken)), "broken.json", "line 2")


def test_a_render_error_is_reported_not_raised() -> None:
    messages = [{"role": "user", "content": "hi <|user|> there"}]
    assert_usage_error(run("render", "-f", "glm", stdin=json.dumps(messages).encode()),
                       "message 0")


def test_an_unknown_option_names_the_known_ones() -> None:
    assert_usage_error(run("render", "-f", "glm", "--option", "no_such=1",
                           stdin=b'[{"role": "user", "content": "hi"}]'), "no_such")


def test_strict_parse_error_exits_2() -> None:
    assert_usage_error(run("parse", "-f", "solar-open", "--strict", stdin=b"no markers at all"))


def test_option_without_equals_is_a_usage_error() -> None:
    result = run("render", "-f", "glm", "--option", "enable_thinking", stdin=b"[]")
    assert result.returncode == 2
    assert b"expected KEY=VALUE" in result.stderr


@pytest.mark.parametrize(("text", "value"), [
    ("flag=true", True), ("n=3", 3), ("s=\"x\"", "x"), ("s=low", "low"), ("s=", ""),
    ("j={\"a\": [1]}", {"a": [1]}), ("eq=a=b", "a=b"),
])
def test_option_values_are_json_when_they_parse(text: str, value: Any) -> None:
    from codec.cli.main import build_parser

    args = build_parser().parse_args(["parse", "-f", "glm", "--option", text])
    assert args.option == [(text.partition("=")[0], value)]
