"""Check by hand whether tests kill given mutants of a finished mutmut run.

A new test written against a survivor should fail on that mutant. mutmut only learns of a new
test after a fresh stats run of the whole selection (minutes); this writes each mutant into a
scratch copy of the checkout as a plain one-line edit (the diff ``mutmut show`` prints, placed
in its function) and runs the given tests there — seconds per mutant.

    python mutation/try_mutant.py --work /tmp/codec-mutation-all \\
        'codec.engine.stream.xǁStreamParserǁ_stop_call__mutmut_3' -- tests/test_engine_edges.py

Prints ``killed`` or ``SURVIVED`` per mutant; exits 1 when one survives.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import copy_checkout

_SEPARATOR = "ǁ"


def mutant_diff(work: Path, name: str) -> str:
    shown = subprocess.run(
        [sys.executable, "-m", "mutmut", "show", name], cwd=work, capture_output=True, text=True, check=True
    )
    return shown.stdout


def located(name: str) -> tuple[str, str]:
    """``codec.engine.stream.xǁStreamParserǁ_stop_call__mutmut_3`` -> (the file, the function)."""
    dotted, _ = name.rsplit("__mutmut_", 1)
    module, mangled = dotted.rsplit(".", 1)
    function = mangled.split(_SEPARATOR)[-1] if _SEPARATOR in mangled else mangled.removeprefix("x_")
    return module.replace(".", "/") + ".py", function


def apply(source: str, function: str, diff: str) -> str:
    """``source`` with the diff's changed lines replaced inside ``function``'s body.

    mutmut prints the function dedented (its ``def`` at column 0, a docstring's inner lines as
    they were), so lines are matched without their indentation; each changed line keeps the
    indentation of the line it replaces."""
    body = [line for line in diff.splitlines()[4:] if line[:1] in {" ", "-", "+"}]
    old = [line[1:] for line in body if line[:1] in {" ", "-"}]
    removed = [line[1:] for line in body if line[:1] == "-"]
    added = [line[1:] for line in body if line[:1] == "+"]
    lines = source.split("\n")
    start = next(i for i, line in enumerate(lines) if re.match(rf"\s*(async\s+)?def {re.escape(function)}\(", line))
    width = len(old)
    for at in range(start, len(lines) - width + 1):
        window = lines[at : at + width]
        if [line.strip() for line in window] != [line.strip() for line in old]:
            continue
        first = next(k for k, line in enumerate(old) if line in removed)
        target = at + first
        indent = lines[target][: len(lines[target]) - len(lines[target].lstrip())]
        shift = len(removed[0]) - len(removed[0].lstrip())
        replacement = [indent + line[shift:] if line.strip() else line for line in added]
        lines[target : target + len(removed)] = replacement
        return "\n".join(lines)
    raise SystemExit(f"could not place the mutant's diff in {function}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--work", type=Path, required=True, help="the mutmut run's work folder (mutation/run.py --work)"
    )
    parser.add_argument("names", nargs="+", help="mutant names")
    argv = sys.argv[1:]
    if "--" not in argv:
        parser.error("give the tests to run after --")
    split = argv.index("--")
    args, tests = parser.parse_args(argv[:split]), argv[split + 1 :]
    if not tests:
        parser.error("give the tests to run after --")
    survived = 0
    with tempfile.TemporaryDirectory(prefix="codec-try-mutant-") as scratch:
        copy = Path(scratch)
        copy_checkout(copy)
        env = {
            **os.environ,
            "PYTHONPATH": str(copy),
            "HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", "mutation"),
        }
        for name in args.names:
            path, function = located(name)
            original = (copy / path).read_text(encoding="utf-8")
            (copy / path).write_text(apply(original, function, mutant_diff(args.work, name)), encoding="utf-8")
            try:
                run = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "pytest",
                        "-x",
                        "-q",
                        "-p",
                        "no:cacheprovider",
                        "-p",
                        "no:randomly",
                        "-o",
                        "addopts=",
                        *tests,
                    ],
                    cwd=copy,
                    env=env,
                    capture_output=True,
                )
            finally:
                (copy / path).write_text(original, encoding="utf-8")
            verdict = "killed" if run.returncode != 0 else "SURVIVED"
            survived += run.returncode == 0
            print(f"{verdict}: {name}")
    sys.exit(1 if survived else 0)


if __name__ == "__main__":
    main()
