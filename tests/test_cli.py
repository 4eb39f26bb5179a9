"""The ``codec`` command: each subcommand's output is exactly what the library gives for the
same input, and every error a user can cause ends in ``codec: error: ...`` and exit status 2,
never a traceback.

The tests per format run ``codec.cli.main(argv)`` in this process, for every format of the
registry (a format registered at run time included: see tests/conftest.py), on each format's
demo case (``FormatSpec.demo``). The rest run ``python -m codec ...`` in a subprocess, as users
run it: once per command for every format a fresh process knows, and for what only a real
process shows (output before the input ends, exit statuses, no traceback).
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
from codec.cli import main
from codec.formats._demo_scenario import HISTORY, NOW, TOOLS
from codec.registry import FORMATS

# The subprocess imports the same `codec` as this test does (checkout or installed).
ENV = {**os.environ, "PYTHONPATH": str(Path(codec.__file__).resolve().parent.parent)}


def run(*args: str, stdin: bytes = b"", cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "codec", *args],
        input=stdin,
        capture_output=True,
        env=ENV,
        cwd=cwd,
        timeout=120,
    )


def run_here(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``codec ARGS`` in this process: its standard output, after checking it succeeded."""
    status = main(list(args))
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def options(name: str) -> list[str]:
    return [
        arg for key, value in FORMATS[name].demo.options.items() for arg in ("--option", f"{key}={json.dumps(value)}")
    ]


def sequential(index: int) -> str:
    return f"call_{index}"


def expected_render(name: str) -> str:
    demo = FORMATS[name].demo
    return codec.load(name).render(demo.messages, tools=TOOLS, now=NOW, **demo.options)


def expected_parse(name: str) -> dict[str, Any]:
    demo = FORMATS[name].demo
    return codec.load(name).parse(demo.completion, tools=TOOLS, id_factory=sequential, **demo.options).to_openai()


@pytest.fixture
def conversation(tmp_path: Path) -> Path:
    """A folder for each format's demo conversation (``render_args`` writes it)."""
    return tmp_path


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS), encoding="utf-8")
    return path


def completion_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.completion.txt"
    path.write_bytes(FORMATS[name].demo.completion.encode("utf-8"))
    return path


def render_args(name: str, folder: Path) -> list[str]:
    """``codec render`` of the format's demo conversation (``DemoCase.messages``)."""
    conversation = folder / f"{name}.conversation.json"
    messages = list(FORMATS[name].demo.messages)
    conversation.write_text(json.dumps({"messages": messages, "tools": TOOLS}), encoding="utf-8")
    return ["render", "--format", name, "--now", NOW.isoformat(), *options(name), str(conversation)]


def parse_args(command: str, name: str, tools_file: Path, completion: Path) -> list[str]:
    return [command, "-f", name, "--tools", str(tools_file), "--sequential-ids", *options(name), str(completion)]


@pytest.mark.parametrize("name", codec.formats())
def test_render_prints_exactly_what_render_returns(
    name: str, conversation: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_here(capsys, *render_args(name, conversation)) == expected_render(name)


@pytest.mark.parametrize("name", codec.formats())
def test_parse_prints_the_openai_message(
    name: str, tools_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run_here(capsys, *parse_args("parse", name, tools_file, completion_file(tmp_path, name)))
    assert json.loads(out) == expected_parse(name)


@pytest.mark.parametrize("name", codec.formats())
def test_stream_events_fold_to_the_parsed_message(
    name: str, tools_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run_here(capsys, *parse_args("stream", name, tools_file, completion_file(tmp_path, name)))
    assert fold([json.loads(line) for line in out.splitlines()]) == expected_parse(name)


def test_demo_shows_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    """Each format's section shows the end of each call its completion makes."""
    shown = run_here(capsys, "demo")
    sections = shown.split("=== ")[1:]
    assert [section.split(": ", 1)[0] for section in sections] == codec.formats()
    for name, section in zip(codec.formats(), sections, strict=True):
        calls = len(expected_parse(name)["tool_calls"])
        assert calls >= 1, f"{name}: the demo completion should call a tool"
        assert [f"ToolCallEnd[{index}]" in section for index in range(calls + 1)] == [True] * calls + [False]


def test_python_m_codec_prints_what_the_library_gives(conversation: Path, tools_file: Path, tmp_path: Path) -> None:
    """``python -m codec`` in a fresh process, for every format it knows: render, parse,
    stream and demo print, byte for byte, what the library gives in this process."""
    listed = run("formats", "--json")
    assert listed.returncode == 0, listed.stderr.decode()
    names = [entry["name"] for entry in json.loads(listed.stdout)]
    assert names and set(names) <= set(codec.formats())
    demo = run("demo", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr.decode()
    for name in names:
        assert f"=== {name}: " in demo.stdout.decode("utf-8")
        rendered = run(*render_args(name, conversation))
        assert rendered.returncode == 0, rendered.stderr.decode()
        assert rendered.stdout == expected_render(name).encode("utf-8")
        completion = completion_file(tmp_path, name)
        parsed = run(*parse_args("parse", name, tools_file, completion))
        assert parsed.returncode == 0, parsed.stderr.decode()
        assert json.loads(parsed.stdout) == expected_parse(name)
        streamed = run(*parse_args("stream", name, tools_file, completion))
        assert streamed.returncode == 0, streamed.stderr.decode()
        assert fold([json.loads(line) for line in streamed.stdout.decode("utf-8").splitlines()]) == expected_parse(name)


def test_render_reads_a_message_list_from_stdin(tools_file: Path) -> None:
    result = run(
        "render",
        "-f",
        "glm",
        "--tools",
        str(tools_file),
        "--no-generation-prompt",
        "-",
        stdin=json.dumps(HISTORY).encode(),
    )
    expected = codec.load("glm").render(HISTORY, tools=TOOLS, add_generation_prompt=False)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode("utf-8") == expected


def test_parse_reports_repairs_on_stderr() -> None:
    result = run(
        "parse", "-f", "glm", stdin=b"thinking</think>hi<tool_call>f<arg_key>k</arg_key>v</arg_value></tool_call>"
    )
    assert result.returncode == 0, result.stderr.decode()
    assert b"codec: repaired" in result.stderr
    assert json.loads(result.stdout)["tool_calls"][0]["function"]["name"] == "f"


def fold(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The message the events describe, checking each record's delta on the way."""
    text = {"ReasoningDelta": "", "ContentDelta": ""}
    arguments: dict[int, str] = {}
    calls = []
    for record in records:
        kind = record["event"]
        if kind in text:
            text[kind] += record["text"]
            assert record["delta"] == {("reasoning_content" if kind == "ReasoningDelta" else "content"): record["text"]}
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
        [sys.executable, "-m", "codec", "stream", "-f", "glm"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
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
    assert_usage_error(run("render", "-f", "glm", stdin=json.dumps(messages).encode()), "message 0")


def test_an_unknown_option_names_the_known_ones() -> None:
    assert_usage_error(
        run("render", "-f", "glm", "--option", "no_such=1", stdin=b'[{"role": "user", "content": "hi"}]'), "no_such"
    )


def test_strict_parse_error_exits_2() -> None:
    assert_usage_error(run("parse", "-f", "solar-open", "--strict", stdin=b"no markers at all"))


def test_option_without_equals_is_a_usage_error() -> None:
    result = run("render", "-f", "glm", "--option", "enable_thinking", stdin=b"[]")
    assert result.returncode == 2
    assert b"expected KEY=VALUE" in result.stderr


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("flag=true", True),
        ("n=3", 3),
        ('s="x"', "x"),
        ("s=low", "low"),
        ("s=", ""),
        ('j={"a": [1]}', {"a": [1]}),
        ("eq=a=b", "a=b"),
    ],
)
def test_option_values_are_json_when_they_parse(text: str, value: Any) -> None:
    from codec.cli.main import build_parser

    args = build_parser().parse_args(["parse", "-f", "glm", "--option", text])
    assert args.option == [(text.partition("=")[0], value)]
