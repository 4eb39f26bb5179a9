"""``codec grammar``: the command prints exactly ``Codec.constraint`` for its arguments, and the
notes of what the grammar does not enforce on standard error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import codec
from codec.cli import main

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "pattern": "^[A-Z]"}},
                "required": ["city"],
            },
        },
    }
]


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "fmt", [fmt for fmt in codec.formats() if codec.registry.FORMATS[fmt].family.constraint is not None]
)
def test_grammar_prints_the_constraint(fmt: str, tools_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["grammar", "-f", fmt, "--tools", str(tools_file), "--tool-choice", "required", "--no-parallel-tool-calls"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    expected = codec.load(fmt).constraint(tools=TOOLS, tool_choice="required", parallel_tool_calls=False)
    assert out == expected
    assert out != codec.load(fmt).constraint(tools=TOOLS)  # the choices reached the grammar
    assert "pattern" in err  # a string pattern is a note: enforced loosely, said so


def test_grammar_options_move_the_start(tools_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grammar", "-f", "gemma4", "--tools", str(tools_file), "-o", "enable_thinking=true"]) == 0
    thinking = capsys.readouterr().out
    assert thinking == codec.load("gemma4").constraint(tools=TOOLS, enable_thinking=True)
    assert thinking != codec.load("gemma4").constraint(tools=TOOLS)


def test_grammar_refuses_an_unknown_tool_choice(tools_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grammar", "-f", "glm", "--tools", str(tools_file), "--tool-choice", "no_such_tool"]) == 2
    assert "no_such_tool" in capsys.readouterr().err


def test_grammar_reports_a_part_past_llguidance_limits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An enum of 10,000 values would fill llguidance's parser row: the grammar takes its type,
    and standard error says where and why."""
    values = [f"v{index}" for index in range(10_000)]
    parameters = {"type": "object", "properties": {"e": {"type": "string", "enum": values}}, "required": ["e"]}
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "f", "parameters": parameters}}]))
    assert main(["grammar", "-f", "solar-open", "--tools", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "codec: note: too_large at f/properties/e/enum: an enum of 10000 values" in err
    assert '"\\"v9999\\""' not in out
