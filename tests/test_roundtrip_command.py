"""``codec roundtrip``: passes on every format's template, bundled or passed as a file; on a
broken copy it fails with a readable report (the check that cannot fail would be worthless)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import codec
from codec.cli import main, roundtrip
from codec.registry import FORMATS

TEMPLATES = Path(__file__).parent.parent / "templates"


@pytest.mark.parametrize("fmt", codec.formats())
def test_bundled_templates_agree_with_their_grammars(fmt: str) -> None:
    report = roundtrip.run(codec.load(fmt), examples=25, seed=1)
    assert report.ok, str(report)
    assert report.examples >= 1


def test_a_template_that_forgets_to_close_arg_value_fails_with_a_report(tmp_path: Path) -> None:
    source = (TEMPLATES / "glm_effort.jinja").read_text(encoding="utf-8")
    broken = source.replace("</arg_value>{% endfor %}</tool_call>", "{% endfor %}</tool_call>")
    assert broken != source
    path = tmp_path / "glm_effort_broken.jinja"
    path.write_text(broken, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "codec",
            "roundtrip",
            "--format",
            "glm-effort",
            "--template",
            str(path),
            "--examples",
            "20",
            "--seed",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stderr
    assert "disagreement" in done.stdout
    assert "parses: missing_marker" in done.stdout and "</arg_value>" in done.stdout
    assert "minimal example" in done.stdout and '"tool_calls"' in done.stdout


@pytest.mark.parametrize("fmt", codec.formats())
def test_the_unmodified_template_passed_as_a_file_agrees(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = TEMPLATES / FORMATS[fmt].template
    status = main(["roundtrip", "--format", fmt, "--template", str(path), "--examples", "15"])
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert "all agree" in out
