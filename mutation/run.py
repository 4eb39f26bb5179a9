"""Mutation testing of one engine, arguments or family module, with cosmic-ray, on a copy.

cosmic-ray writes each mutant into the source file on disk, so this never runs in the checkout
(others run tests there): the repository's tracked and new files are copied to a work folder,
and every mutant is tested there against only the test files that exercise its module
(``TESTS``), so a mutant costs seconds. A sample of the session's mutants is run (``--sample``,
``--seed``); the rest are marked skipped. Mutants listed in ``mutation/equivalent.toml`` (same
behaviour as the original) are left out of the figures.

    python mutation/run.py --module codec/engine/scanner.py --sample 20 --seed 1
    python mutation/run.py --module codec/engine/scanner.py --sample 20 --seed 1 --fail-on-survivors  # CI

Results: ``mutation/results/<module>.json`` (figures, and each survivor's diff) and the
cosmic-ray session database in the work folder.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "mutation"
_GAPS = ["tests/test_gaps_arguments.py", "tests/test_gaps_truncation.py"]
TESTS: dict[str, list[str]] = {
    "codec/engine/scanner.py": ["tests/test_scanner.py", "tests/test_scanner_formats.py"],
    "codec/engine/stream.py": [
        "tests/test_recovery.py",
        "tests/test_gaps_truncation.py",
        "tests/test_parse_errors.py",
        "tests/test_parse_golden.py",  # the whole and chunked goldens: most of the stream's paths
        "tests/test_corpus.py",
    ],
    "codec/engine/builder.py": [
        "tests/test_recovery.py",
        *_GAPS,
        "tests/test_known_failures.py",
        "tests/test_engine_edges.py",
    ],
    "codec/engine/call.py": [
        "tests/test_known_failures.py",
        "tests/test_gaps_truncation.py",
        "tests/test_engine_edges.py",
    ],
    "codec/engine/repair.py": [
        "tests/test_recovery.py",
        "tests/test_gaps_truncation.py",
        "tests/test_corpus.py",  # what real models wrote: the repairs' main customers
        "tests/test_corruption.py",
    ],
    "codec/arguments/json_stream.py": ["tests/test_jsonstream.py", "tests/test_gaps_arguments.py"],
    "codec/arguments/schema.py": ["tests/test_arguments.py", "tests/test_schema_edges.py"],
    "codec/arguments/emitter.py": ["tests/test_jsonstream.py", *_GAPS],
    "codec/arguments/lenient_value.py": ["tests/test_arguments.py", "tests/test_recovery.py"],
    "codec/arguments/tolerant.py": ["tests/test_tolerant_values.py"],
    "codec/arguments/tolerant_parse.py": ["tests/test_tolerant_values.py"],
    "codec/arguments/tolerant_schema.py": ["tests/test_tolerant_values.py"],
    "codec/arguments/tolerant_text.py": ["tests/test_tolerant_values.py"],
    "codec/formats/glm/arguments.py": [*_GAPS, "tests/test_recovery.py", "tests/test_schema_edges.py"],
    "codec/formats/solar_open/arguments.py": [*_GAPS, "tests/test_recovery.py", "tests/test_schema_edges.py"],
    "codec/formats/gemma4/arguments.py": [*_GAPS, "tests/test_recovery.py", "tests/test_schema_edges.py"],
}
"""Each module that can be mutated, and the test files that exercise it."""


def copy_checkout(work: Path) -> None:
    """The checkout's tracked and new (not ignored) files, as they are now, into ``work``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    if work.exists():
        shutil.rmtree(work)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, work / name)


def config(module: str, timeout: float) -> str:
    tests = " ".join(TESTS[module])
    command = f"{sys.executable} -m pytest -x -q -p no:cacheprovider -p no:randomly {tests}"
    return (
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f'test-command = "{command}"\n\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
    )


def equivalent(module: str) -> set[tuple[str, int, int]]:
    """``(operator, line, occurrence)`` of the mutants ``equivalent.toml`` lists for ``module``."""
    listed = tomllib.loads((HERE / "equivalent.toml").read_text(encoding="utf-8")).get("mutant", [])
    return {(m["operator"], m["line"], m.get("occurrence", 0)) for m in listed if m["module"] == module}


def sample(db_path: Path, size: int, seed: int) -> None:
    """Keep ``size`` pending mutants, chosen by ``seed``; mark the others skipped."""
    with use_db(str(db_path), WorkDB.Mode.open) as db:
        # By what each mutant is, not its job id (a fresh random id per session): the same
        # seed then samples the same mutants in every session on the same code.
        items = sorted(db.pending_work_items, key=_identity)
        keep = set(item.job_id for item in random.Random(seed).sample(items, min(size, len(items))))
        skipped = WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="not sampled")
        db.set_multiple_results([item.job_id for item in items if item.job_id not in keep], skipped)


def _identity(item: Any) -> tuple[str, int, int, int]:
    mutation = item.mutations[0]
    return (mutation.operator_name, mutation.start_pos[0], mutation.start_pos[1], mutation.occurrence)


def summary(db_path: Path, module: str) -> dict[str, object]:
    known = equivalent(module)
    figures = {"generated": 0, "sampled": 0, "killed": 0, "survived": 0, "equivalent": 0, "incompetent": 0}
    survivors = []
    with use_db(str(db_path), WorkDB.Mode.open) as db:
        figures["generated"] = db.num_work_items
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            figures["sampled"] += 1
            spec = item.mutations[0]
            key = (spec.operator_name, spec.start_pos[0], spec.occurrence)
            if result.worker_outcome != WorkerOutcome.NORMAL:  # the run itself failed: not a verdict
                figures["incompetent"] += 1
                continue
            if result.test_outcome == TestOutcome.SURVIVED and key in known:
                figures["equivalent"] += 1
            elif result.test_outcome == TestOutcome.SURVIVED:
                figures["survived"] += 1
                survivors.append({"operator": key[0], "line": key[1], "occurrence": key[2], "diff": result.diff})
            elif result.test_outcome == TestOutcome.INCOMPETENT:
                figures["incompetent"] += 1
            else:
                figures["killed"] += 1
    return {"module": module, **figures, "survivors": survivors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", required=True, choices=sorted(TESTS))
    parser.add_argument("--sample", type=int, default=20, help="mutants to run (the rest are skipped)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant's test run")
    parser.add_argument("--work", type=Path, default=None, help="work folder (default: a temp folder)")
    parser.add_argument("--report", action="store_true", help="only recount the last session (equivalent.toml edited)")
    parser.add_argument(
        "--fail-on-survivors",
        action="store_true",
        help="exit 1 when a mutant not listed as equivalent survives",
    )
    args = parser.parse_args()
    slug = args.module.replace("/", ".").removesuffix(".py")
    work = args.work or Path(os.environ.get("TMPDIR", "/tmp")) / f"codec-mutation-{slug}"
    if not args.report:
        run_session(work, args.module, args.sample, args.seed, args.timeout)
    result = {"seed": args.seed, **summary(work / "session.sqlite", args.module)}
    out = HERE / "results" / f"{slug}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    shown = {k: v for k, v in result.items() if k != "survivors"}
    print(json.dumps(shown), f"-> {out.relative_to(ROOT)}")
    if args.fail_on_survivors and result["survived"]:
        for survivor in result["survivors"]:  # type: ignore[attr-defined]
            print(f"survived: {survivor['operator']} at line {survivor['line']}\n{survivor['diff']}")
        sys.exit(1)


def run_session(work: Path, module: str, size: int, seed: int, timeout: float) -> None:
    """A fresh copy, a new cosmic-ray session for ``module``, a sample of it run."""
    copy_checkout(work)
    (work / "mutation.toml").write_text(config(module, timeout), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(work)}  # the copy's codec, not the editable install's
    cosmic_ray = [sys.executable, "-m", "cosmic_ray.cli"]
    db_path = work / "session.sqlite"
    subprocess.run([*cosmic_ray, "init", "mutation.toml", str(db_path)], cwd=work, env=env, check=True)
    sample(db_path, size, seed)
    subprocess.run([*cosmic_ray, "exec", "mutation.toml", str(db_path)], cwd=work, env=env, check=True)


if __name__ == "__main__":
    main()
