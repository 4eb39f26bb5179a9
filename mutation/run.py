"""Mutation testing of the engine, arguments and family modules, with mutmut, on a copy.

mutmut (configured in ``pyproject.toml``, ``[tool.mutmut]``) writes every mutant of a function
into one trampolined copy of the code, runs the selected tests once to learn which tests reach
each function, then runs each mutant against only those tests, in a process forked from one that
has everything imported — so a mutant costs a fraction of a second to a few seconds.

This runner never mutates the checkout (others run tests there): it copies the tracked and new
files to a work folder and runs mutmut there, under the ``mutation`` hypothesis profile
(derandomized, few examples). Then it counts each module's mutants, leaving out those
``mutation/equivalent/*.toml`` list (same behaviour as the original), and writes the figures and
each survivor's diff to ``mutation/results/``.

    python mutation/run.py                                  # the full run: every module
    python mutation/run.py --module codec/engine/call.py    # one module, against its TESTS only
    python mutation/run.py --module codec/engine/call.py --fail-on-survivors   # CI
    python mutation/run.py --report                         # recount (an equivalent entry edited)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

from mutmut.stats import status_by_exit_code

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "mutation"
RESULTS = HERE / "results"

_GAPS = ["tests/test_gaps_arguments.py", "tests/test_gaps_truncation.py"]
TESTS: dict[str, list[str]] = {
    "codec/engine/scanner.py": ["tests/test_scanner.py", "tests/test_scanner_formats.py"],
    "codec/engine/call.py": [
        "tests/test_known_failures.py",
        "tests/test_gaps_truncation.py",
        "tests/test_engine_edges.py",
        "tests/test_whole_parse.py",
    ],
    "codec/engine/builder.py": [
        "tests/test_recovery.py",
        *_GAPS,
        "tests/test_known_failures.py",
        "tests/test_engine_edges.py",
    ],
    "codec/arguments/json_stream.py": ["tests/test_jsonstream.py", "tests/test_gaps_arguments.py"],
    "codec/arguments/schema.py": ["tests/test_arguments.py", "tests/test_schema_edges.py"],
}
"""Narrow test lists for a quick look at one module (``--module``); the full run uses the
selection of ``[tool.mutmut]``, and mutmut narrows it per function by what each test reaches."""

_KILLED = {"killed", "timeout", "segfault"}  # mutmut counts a hang or a crash as caught too


def copy_checkout(work: Path) -> None:
    """The checkout's tracked and new (not ignored) files, as they are now, into ``work``."""
    if work.exists():
        shutil.rmtree(work)
    for name in _listed_files():
        source = ROOT / name
        if source.is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, work / name)


def refresh_checkout(work: Path) -> set[str]:
    """Bring the work copy up to the checkout without losing mutmut's results: write the files
    that differ (mutmut then makes the mutants of changed functions again and learns the new
    tests). The changed files, by path.

    The ``[tool.mutmut]`` table must not have changed: mutmut drops every verdict when the test
    selection or the pytest arguments change."""
    settings = [
        tomllib.loads(path.read_text(encoding="utf-8"))["tool"]["mutmut"]
        for path in (ROOT / "pyproject.toml", work / "pyproject.toml")
    ]
    if settings[0] != settings[1]:
        sys.exit("[tool.mutmut] changed since the run began: mutmut would start again; run afresh instead")
    changed = set()
    for name in _listed_files():
        source, target = ROOT / name, work / name
        if source.is_file() and (not target.is_file() or target.read_bytes() != source.read_bytes()):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            changed.add(name)
    return changed


def _listed_files() -> list[str]:
    """The checkout's tracked and new (not ignored) files."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return list(filter(None, listed.split("\0")))


def narrow_config(work: Path, module: str) -> None:
    """Point the work copy's ``[tool.mutmut]`` at one module and its ``TESTS``."""
    pyproject = work / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    settings = tomllib.loads(text)["tool"]["mutmut"]
    settings["only_mutate"] = [module]
    settings["pytest_add_cli_args_test_selection"] = TESTS[module]
    table = "".join(f"{key} = {json.dumps(value)}\n" for key, value in settings.items())
    text = re.sub(r"(?ms)^\[tool\.mutmut\]\n.*?(?=^\[|\Z)", lambda _: f"[tool.mutmut]\n{table}\n", text)
    pyproject.write_text(text, encoding="utf-8")


def run_mutmut(work: Path, module: str | None, only: list[str], resume: bool, refresh: bool = False) -> None:
    """mutmut run in a fresh copy (or, with ``resume``, where the last run in ``work`` stopped):
    on every module, on ``module`` against its narrow tests, or on the ``only`` modules.

    ``refresh`` brings a finished run up to the checkout: every mutant of a changed module again,
    and of the others those that survived, against the tests as they are now."""
    if refresh:
        changed = refresh_checkout(work)
        # Which tests reach each function, learnt again from every test as it is now (mutmut
        # keeps its verdicts and learns only tests with new names otherwise).
        (work / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
        modules = only or sorted(outcomes(work))
        names = [module_pattern(path) for path in modules if path in changed]
        unchanged = [path for path in modules if path not in changed]
        if unchanged:
            names += _undecided(work, unchanged, {"survived", "no tests"})
        if names:
            _mutmut_run(work, names)
        return
    if not resume:
        copy_checkout(work)
        if module is not None:
            narrow_config(work, module)
    names = [module_pattern(path) for path in only]
    if resume and (work / "mutants").exists():
        pending = _undecided(work, only)
        if not pending:
            return
        names = pending
    _mutmut_run(work, names)


def _undecided(work: Path, only: list[str], also: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The mutants of the ``only`` modules (all if none) without a verdict, or with one of the
    ``also`` statuses. mutmut runs a named mutant again even when it has a verdict, so only these
    are named; never those listed as equivalent (they would survive, at the cost of every test)."""
    listed = equivalent()
    return [
        name
        for path, statuses in outcomes(work).items()
        if not only or path in only
        for name, status in statuses.items()
        if (status == "not checked" or status in also) and name not in listed
    ]


def _mutmut_run(work: Path, names: list[str]) -> None:
    """``mutmut run`` on ``names`` (all mutants if none) in ``work``, under the ``mutation`` profile."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": "mutation"}
    command = [sys.executable, "-m", "mutmut", "run", *names]
    subprocess.run(command, cwd=work, env=env, check=True, stdout=subprocess.DEVNULL)


def module_pattern(path: str) -> str:
    """mutmut's name pattern for every mutant of the module at ``path``."""
    return path.removesuffix(".py").replace("/", ".") + ".*"


def outcomes(work: Path) -> dict[str, dict[str, str]]:
    """Each mutated module's mutants and their status, from mutmut's files in ``work``."""
    found: dict[str, dict[str, str]] = {}
    if not (work / "mutants").exists():
        return found
    for meta in sorted((work / "mutants").rglob("*.py.meta")):
        module = meta.relative_to(work / "mutants").as_posix().removesuffix(".meta")
        codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
        if codes:
            found[module] = {name: status_by_exit_code[code] for name, code in codes.items()}
    return found


def diff(work: Path, name: str) -> str:
    shown = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=work, capture_output=True, text=True)
    return shown.stdout.split("\n", 1)[1] if "\n" in shown.stdout else shown.stdout


def equivalent() -> dict[str, dict[str, Any]]:
    """The mutants ``mutation/equivalent/*.toml`` list, by mutmut's name."""
    listed: dict[str, dict[str, Any]] = {}
    for path in sorted((HERE / "equivalent").glob("*.toml")):
        for entry in tomllib.loads(path.read_text(encoding="utf-8")).get("mutant", []):
            listed[entry["name"]] = entry
    return listed


def _changed_line(mutant_diff: str) -> str:
    """The mutated line, as the diff's ``+`` line shows it (without the mutant's renaming)."""
    added = [
        line[1:].strip() for line in mutant_diff.splitlines() if line.startswith("+") and not line.startswith("+++")
    ]
    return added[-1] if added else ""


def summarise(work: Path, only: list[str] | None = None) -> list[dict[str, Any]]:
    """Per module: generated, killed, survived, equivalent, no tests; and each survivor's diff.

    An equivalent entry counts only while the mutant's changed line is still the one it
    was written for: a stale entry (the code moved under it) is reported, not trusted."""
    listed = equivalent()
    summaries = []
    for module, statuses in outcomes(work).items():
        if only and module not in only:
            continue
        counts: Counter[str] = Counter()
        survivors, stale = [], []
        for name, status in sorted(statuses.items()):
            if status in _KILLED:
                counts["killed"] += 1
                continue
            entry = listed.get(name)
            if status not in {"survived", "no tests"} and not (status == "not checked" and entry is not None):
                counts[status.replace(" ", "_")] += 1
                continue
            change = diff(work, name)
            if entry is not None and entry.get("line") == _changed_line(change):
                counts["equivalent"] += 1  # run or not (--resume skips them): the same verdict
                continue
            if status == "not checked":
                counts["not_checked"] += 1
                stale.append(name)
                continue
            if entry is not None:
                stale.append(name)
            counts["survived" if status == "survived" else "no_tests"] += 1
            survivors.append({"name": name, "status": status, "diff": change})
        generated = len(statuses)
        counted = generated - counts["equivalent"] - counts["not_checked"] - counts["skipped"]
        summaries.append(
            {
                "module": module,
                "generated": generated,
                "killed": counts["killed"],
                "survived": counts["survived"],
                "no_tests": counts["no_tests"],
                "equivalent": counts["equivalent"],
                "not_checked": counts["not_checked"] + counts["skipped"],
                "complete": counts["not_checked"] + counts["skipped"] == 0,
                "score": round(counts["killed"] / counted, 4) if counted else None,
                "stale_equivalents": stale,
                "survivors": survivors,
            }
        )
    return summaries


def write_results(summaries: list[dict[str, Any]]) -> None:
    RESULTS.mkdir(exist_ok=True)
    for summary in summaries:
        slug = summary["module"].removesuffix(".py").replace("/", ".")
        (RESULTS / f"{slug}.json").write_text(
            json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    rows = [
        "| module | generated | not checked | killed | survived | no tests | equivalent | score |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        score = "-" if s["score"] is None else f"{s['score']:.1%}" + ("" if s["complete"] else " (partial)")
        keys = ("generated", "not_checked", "killed", "survived", "no_tests", "equivalent")
        counts = (str(s[key]) for key in keys)
        cells = [f"`{s['module']}`", *counts]
        rows.append("| " + " | ".join([*cells, score]) + " |")
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", choices=sorted(TESTS), help="one module, against its narrow test list")
    parser.add_argument("--only", action="append", default=[], help="only this module's mutants (repeatable)")
    parser.add_argument("--resume", action="store_true", help="go on where the last run in the work folder stopped")
    parser.add_argument(
        "--refresh",
        action="store_true",
        help="bring the last run up to the checkout: changed modules again, survivors against today's tests",
    )
    parser.add_argument("--work", type=Path, default=None, help="work folder (default: a temp folder)")
    parser.add_argument("--report", action="store_true", help="only recount the last run (an equivalent entry edited)")
    parser.add_argument(
        "--fail-on-survivors", action="store_true", help="exit 1 when a mutant not listed as equivalent survives"
    )
    args = parser.parse_args()
    slug = "all" if args.module is None else args.module.replace("/", ".").removesuffix(".py")
    work = args.work or Path(os.environ.get("TMPDIR", "/tmp")) / f"codec-mutation-{slug}"
    if not args.report:
        run_mutmut(work, args.module, args.only, args.resume, args.refresh)
    summaries = summarise(work, only=args.only)
    write_results(summaries)
    failed = [s for s in summaries if s["survived"] or s["no_tests"] or s["stale_equivalents"]]
    if args.fail_on_survivors and failed:
        for summary in failed:
            for survivor in summary["survivors"]:
                print(f"{survivor['status']}: {survivor['name']}\n{survivor['diff']}")
            for name in summary["stale_equivalents"]:
                print(f"stale equivalent entry: {name} (its mutant changed; read it again)")
        sys.exit(1)


if __name__ == "__main__":
    main()
