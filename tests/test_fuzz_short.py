"""A short fuzz run of every target of fuzz/harness.py (docs/fuzzing.md states the properties).

Each target runs in a subprocess (libFuzzer owns the process it runs in): the kept corpus
``fuzz/corpus/<target>/`` and the known findings ``fuzz/findings/`` first, then coverage-guided
inputs from a fixed seed, ``RUNS`` inputs in all, so it is the same run every time (``SECONDS``
only bounds a run that hangs). Without atheris the same checks run on hypothesis-generated inputs. Any violation —
an exception from lenient parsing, a strict parse raising something other than ``ParseError``,
whole and chunked parses that differ, events that do not fold to the message, a lost word, a
parse far over its time bound, ``parse_prompt`` raising something other than ``ParseError`` —
fails the test with the violation and the input that shows it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import codec

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "fuzz" / "run.py"
RUNS = 1000
SECONDS = 120  # a safety bound only: the run is bounded by RUNS, so it is the same run every time
TARGETS = [f"parse-{fmt}" for fmt in codec.formats()] + ["parse-prompt"]


@pytest.mark.parametrize("target", TARGETS)
def test_short_fuzz_run(target: str, tmp_path: Path) -> None:
    command = [sys.executable, str(RUN), "--target", target, "--runs", str(RUNS), "--seconds", str(SECONDS),
               "--seed", "1", "--with-findings", "--out", str(tmp_path)]  # fmt: skip
    # The hash seed is fixed too: iteration over sets and dicts of strings follows it, so the
    # coverage libFuzzer sees, and the inputs it goes on to make, would differ from run to run.
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=ROOT, env=environment)
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert results, f"no result from {' '.join(command)}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    result = results[-1]
    assert result["executed"] > 0, done.stderr[-5000:]
    assert done.returncode == 0 and not result["violations"], (
        f"{target}: {result['violations']} (inputs under {result['out']}/findings)\n{done.stderr[-8000:]}"
    )
