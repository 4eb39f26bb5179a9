"""Run the fuzz targets of fuzz/harness.py (docs/fuzzing.md).

    python fuzz/run.py --target parse-glm --runs 100000          # atheris (libFuzzer), coverage-guided
    python fuzz/run.py --target all --seconds 10                 # every target, one after another
    python fuzz/run.py --target parse-glm --hypothesis --runs 500  # the fallback without atheris
    python fuzz/run.py --target parse-glm --check FILE...        # replay inputs, print violations
    python fuzz/run.py --target parse-glm --minimize             # shrink findings into fuzz/findings/
    python fuzz/run.py --make-seeds                              # rewrite the seed corpus and dictionaries

A run works in ``--out`` (default: a fresh temporary folder): ``corpus/`` (what the fuzzer
adds), ``findings/`` (the smallest input per kind of violation, with a ``.json`` description),
``slow/`` (the slowest inputs per character) and ``stats.json``. ``--merge`` adds to
``fuzz/corpus/<target>/`` the inputs of the run that reach new coverage (libFuzzer ``-merge=1``).
The exit status is 1 when any input broke a property.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FUZZ = Path(__file__).resolve().parent
CORPUS = FUZZ / "corpus"
DICTS = FUZZ / "dicts"
FINDINGS = FUZZ / "findings"
MAX_LEN = {"parse-prompt": 8192}
DEFAULT_MAX_LEN = 2048


def _have_atheris() -> bool:
    try:
        import atheris  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return False
    return True


def _harness() -> Any:
    sys.path.insert(0, str(FUZZ))
    import harness

    return harness


# ---------------------------------------------------------------------------------------------
# atheris


def worker(target: str, out: Path, libfuzzer_args: list[str]) -> None:
    """The process libFuzzer runs in: codec instrumented for coverage, then the fuzz loop."""
    import atheris

    with atheris.instrument_imports(include=["codec"]):
        harness = _harness()
    harness.warm_up(target)
    recorder = harness.Recorder(target, out)
    # libFuzzer runs argv[0] through the shell for -merge=1's inner processes: this very worker.
    itself = f"{sys.executable} {Path(__file__).resolve()} --worker --target {target} --out {out} --"
    atheris.Setup([itself, *libfuzzer_args], recorder)
    atheris.Fuzz()


def _libfuzzer(target: str, out: Path, args: list[str]) -> tuple[int, str]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--target", target,
               "--out", str(out), "--", *args]  # fmt: skip
    log = out / "libfuzzer.log"
    with log.open("a") as sink:
        code = subprocess.call(command, stdout=sink, stderr=subprocess.STDOUT)
    return code, log.read_text(errors="replace")


def run_atheris(target: str, out: Path, runs: int | None, seconds: float | None, merge: bool,
                max_len: int | None, extra: list[str], seed: int | None = None,
                with_findings: bool = False) -> dict[str, Any]:  # fmt: skip
    work = out / "corpus"
    work.mkdir(parents=True, exist_ok=True)
    seeds = CORPUS / target
    seeds.mkdir(parents=True, exist_ok=True)
    corpora = [str(work), str(seeds)] + ([str(FINDINGS)] if with_findings and FINDINGS.is_dir() else [])
    args = [*corpora, f"-max_len={max_len or MAX_LEN.get(target, DEFAULT_MAX_LEN)}",
            "-print_final_stats=1", f"-artifact_prefix={out}/", "-timeout=120", "-rss_limit_mb=4096",
            f"-dict={DICTS / (target + '.dict')}", *extra]  # fmt: skip
    if seed is not None:
        args.append(f"-seed={seed}")
    if runs:
        args.append(f"-runs={runs}")
    if seconds:
        args.append(f"-max_total_time={max(1, int(seconds))}")
    started = time.time()
    code, log = _libfuzzer(target, out, args)
    result: dict[str, Any] = {"target": target, "engine": "atheris", "exit_code": code,
                              "wall_seconds": round(time.time() - started, 1)}  # fmt: skip
    final = dict(re.findall(r"stat::(\w+):\s*(\d+)", log))
    result["executed"] = int(final.get("number_of_executed_units", 0))
    result["exec_per_sec"] = int(final.get("average_exec_per_sec", 0))
    result["new_units"] = int(final.get("new_units_added", 0))
    result["peak_rss_mb"] = int(final.get("peak_rss_mb", 0))
    status = re.findall(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)", log)
    if status:
        result["coverage"], result["features"] = int(status[-1][1]), int(status[-1][2])
        result["corpus_units"], result["corpus_size"] = int(status[-1][3]), status[-1][4]
    crashes = sorted(str(p) for p in out.glob("crash-*")) + sorted(str(p) for p in out.glob("timeout-*")) + \
        sorted(str(p) for p in out.glob("oom-*"))  # fmt: skip
    if crashes or code not in (0,):
        result["crashes"] = crashes  # the harness itself failed, or libFuzzer's timeout / memory limit
        result["log_tail"] = log[-3000:]
    if merge:
        result.update(merge_corpus(target, out, max_len))
    return result


def merge_corpus(target: str, out: Path, max_len: int | None) -> dict[str, Any]:
    """Add to ``fuzz/corpus/<target>/`` the inputs of ``out/corpus`` that reach coverage it lacks."""
    merged = CORPUS / target
    before = len(list(merged.iterdir()))
    code, _ = _libfuzzer(target, out, [str(merged), str(out / "corpus"), "-merge=1",
                                       f"-merge_control_file={out}/merge.ctl",
                                       f"-max_len={max_len or MAX_LEN.get(target, DEFAULT_MAX_LEN)}"])  # fmt: skip
    return {"merge_exit_code": code, "merged_into_corpus": len(list(merged.iterdir())) - before,
            "corpus_files": len(list(merged.iterdir())),
            "corpus_bytes": sum(p.stat().st_size for p in merged.iterdir())}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# hypothesis (the fallback without atheris)


def run_hypothesis(target: str, out: Path, runs: int | None, seconds: float | None, seed: int | None = None,
                   with_findings: bool = False) -> dict[str, Any]:  # fmt: skip
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as fixed_seed
    from hypothesis import strategies as st

    harness = _harness()
    harness.warm_up(target)
    recorder = harness.Recorder(target, out)
    files = sorted((CORPUS / target).glob("*")) + (sorted(FINDINGS.glob("*.txt")) if with_findings else [])
    seeds = [p.read_bytes() for p in files if p.is_file()] or [b""]
    for data in seeds:  # the corpus first, as libFuzzer does
        recorder(data)
    words = [w.encode() for w in _dictionary_words(target)] or [b"<"]
    pieces = st.sampled_from(words) | st.binary(max_size=8) | st.sampled_from(
        [b"{", b"}", b":", b",", b"[", b"]", b"(", b")", b"'", b'"', b"\n", b"x", b"1e-5", b"true", b"null",
         b"<", b"<|", b"</", b"\x00", "é日🙂".encode()])  # fmt: skip
    noise = st.lists(pieces, max_size=40).map(b"".join)

    @st.composite
    def mutated(draw: st.DrawFn) -> bytes:
        data = draw(st.sampled_from(seeds))
        for _ in range(draw(st.integers(1, 4))):
            a = draw(st.integers(0, len(data)))
            b = draw(st.integers(a, min(len(data), a + 30)))
            action = draw(st.sampled_from(["delete", "duplicate", "insert"]))
            if action == "delete":
                data = data[:a] + data[b:]
            elif action == "duplicate":
                data = data[:b] + data[a:b] + data[b:]
            else:
                data = data[:a] + draw(noise) + data[a:]
        return data

    deadline = time.time() + seconds if seconds else None
    budget = runs or 10**12
    batch = 200

    @settings(max_examples=batch, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(noise | mutated())
    def one(data: bytes) -> None:
        if recorder.inputs < budget and (deadline is None or time.time() < deadline):
            recorder(data)

    started, batch_number = time.time(), 0
    while recorder.inputs < budget and (deadline is None or time.time() < deadline):
        before = recorder.inputs
        if seed is not None:
            fixed_seed(seed + batch_number)(one)  # a new batch of examples each time, reproducibly
        batch_number += 1
        one()
        if recorder.inputs == before:
            break
    recorder.write_stats()
    elapsed = time.time() - started
    return {
        "target": target,
        "engine": "hypothesis",
        "executed": recorder.inputs,
        "exec_per_sec": int(recorder.inputs / elapsed) if elapsed else 0,
        "wall_seconds": round(elapsed, 1),
    }


# ---------------------------------------------------------------------------------------------
# Seeds and dictionaries


def _dictionary_words(target: str) -> list[str]:
    """The markers of the target's format(s) (from the compiled grammar), its header words and
    the punctuation of argument syntaxes."""
    harness = _harness()
    from codec.engine.grammar import compiled
    from codec.registry import FORMATS

    fmts = list(FORMATS) if target == harness.PROMPT_TARGET else [target[len(harness.PARSE_PREFIX) :]]
    words: list[str] = []
    for fmt in fmts:
        words += list(compiled(FORMATS[fmt].grammar).markers)
        words += sorted(harness.header_words(fmt))
    words += ["call:", "model\n", "thought\n", "assistant", '{"', '":', "\\u00e9", "\\\"", "null", "true",
              "1e-5", "</", "<|", "|>", "get_weather", "run_code", "search", "city", "days", "code"]  # fmt: skip
    return list(dict.fromkeys(words))


def _dict_entry(word: str) -> str:
    return '"' + "".join(c if 0x20 <= ord(c) < 0x7F and c not in '"\\' else "".join(
        f"\\x{b:02X}" for b in c.encode()) for c in word) + '"'  # fmt: skip


def make_seeds() -> None:
    sys.path.insert(0, str(FUZZ))
    import seeds

    harness = _harness()
    DICTS.mkdir(exist_ok=True)
    for target in harness.targets():
        folder = CORPUS / target
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("seed-*"):
            old.unlink()
        for index, data in enumerate(seeds.seeds(target)):
            (folder / f"seed-{index:03d}").write_bytes(data)
        (DICTS / f"{target}.dict").write_text("\n".join(_dict_entry(w) for w in _dictionary_words(target)) + "\n")
        print(target, len(list(folder.glob("seed-*"))), "seeds")


def slow_report(target: str, out: Path) -> list[dict[str, Any]]:
    """The slowest inputs of a run (per character), timed again without instrumentation, and
    their text repeated 8 times: a cost per character that grows with the length is super-linear."""
    harness = _harness()
    harness.warm_up(target)
    report = []
    for path in sorted((out / "slow").glob("*")):
        data = path.read_bytes()
        if target == harness.PROMPT_TARGET:
            text, tail = data, b""
        else:
            cut = data.rfind(b"\x00")
            text, tail = (data, b"") if cut < 0 else (data[:cut], data[cut:])
        timing = {}
        for repeat in (1, 8):
            candidate = text * repeat + tail
            size = len(candidate.decode("utf-8", "replace")) or 1
            best = min(_cpu(lambda c=candidate: _quiet_check(harness, target, c)) for _ in range(3))
            timing[repeat] = best / size * 1e6
        report.append({"input": str(path), "chars": len(text.decode("utf-8", "replace")),
                       "us_per_char": round(timing[1], 2), "us_per_char_x8": round(timing[8], 2),
                       "growth": round(timing[8] / timing[1], 2) if timing[1] else None})  # fmt: skip
    return sorted(report, key=lambda r: -r["us_per_char"])


def _cpu(work: Any) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def _quiet_check(harness: Any, target: str, data: bytes) -> None:
    with contextlib.suppress(harness.Violation):
        harness.check(target, data)


# ---------------------------------------------------------------------------------------------
# Replay and minimize


def triage(target: str, out: Path, paths: list[str]) -> None:
    """Run inputs (a corpus, older findings) through a ``Recorder`` into ``out``, so that
    ``--minimize`` can shrink what still breaks a property."""
    harness = _harness()
    harness.warm_up(target)
    recorder = harness.Recorder(target, out)
    for path in paths:
        recorder(Path(path).read_bytes())
    recorder.write_stats()
    print(json.dumps({"target": target, "inputs": recorder.inputs, "violating_inputs": recorder.violations,
                      "kinds": sorted(recorder.known)}))  # fmt: skip


def replay(target: str, paths: list[str]) -> int:
    harness = _harness()
    harness.warm_up(target)
    bad = 0
    for path in paths:
        try:
            harness.check(target, Path(path).read_bytes())
        except harness.Violation as violation:
            bad += 1
            print(f"{path}: VIOLATION {violation.signature(target)}\n{violation.detail}\n")
        else:
            print(f"{path}: ok")
    return 1 if bad else 0


def minimize(target: str, data: bytes, signature: str) -> bytes:
    """The smallest input found by removing ranges of characters (delta debugging) that still
    breaks the property with the same signature."""
    harness = _harness()

    def breaks(candidate: bytes) -> bool:
        try:
            harness.check(target, candidate)
        except harness.Violation as violation:
            found = violation.signature(target)
            # A record of an older run may name no field for "chunking": any field matches then.
            return found == signature or (signature.endswith("|chunking|") and found.startswith(signature))
        return False

    # Work on characters of the text, keeping the control trailer; then on the trailer bytes.
    cut = data.rfind(b"\x00") if target != harness.PROMPT_TARGET else -1
    text = (data if cut < 0 else data[:cut]).decode("utf-8", "replace")
    tail = b"" if cut < 0 else data[cut:]

    def build(t: str, tl: bytes) -> bytes:
        return t.encode() + tl

    if not breaks(build(text, tail)):
        return data
    granularity = 2
    while len(text) >= 2:
        size = max(1, len(text) // granularity)
        removed = False
        for start in range(0, len(text), size):
            candidate = text[:start] + text[start + size :]
            if breaks(build(candidate, tail)):
                text, removed = candidate, True
                break
        if removed:
            granularity = max(granularity - 1, 2)
        elif size == 1:
            break
        else:
            granularity = min(len(text), granularity * 2)
    if tail and "\x00" not in text and breaks(build(text, b"")):
        tail = b""  # no options, random chunks
    if target != harness.PROMPT_TARGET and len(tail) >= 2:
        fmt = target[len(harness.PARSE_PREFIX) :]
        none = bytes([len(harness.option_sets(fmt))])  # option 0 without a NUL byte
        if tail[1:2] != none and breaks(build(text, b"\x00" + none + tail[2:])):
            tail = b"\x00" + none + tail[2:]  # no options
    for i in range(len(tail) - 1, 1, -1):  # drop chunk-size bytes one at a time
        shorter = tail[:i] + tail[i + 1 :]
        if breaks(build(text, shorter)):
            tail = shorter
    return build(text, tail)


def _still_breaks(harness: Any, target: str, path: Path, signature: str) -> bool:
    try:
        harness.check(target, path.read_bytes())
    except harness.Violation as violation:
        return bool(violation.signature(target) == signature)
    return False


def minimize_findings(target: str, out: Path) -> list[Path]:
    harness = _harness()
    harness.warm_up(target)
    FINDINGS.mkdir(exist_ok=True)
    written = []
    index_path = FINDINGS / "index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {}
    for record_path in sorted((out / "findings").glob("*.json")):
        record = json.loads(record_path.read_text())
        if any(signature == record["signature"] and _still_breaks(harness, target, FINDINGS / name, signature)
               for name, signature in index.items()):  # fmt: skip
            continue  # one open reproducer per kind of violation
        data = record_path.with_suffix(".bin").read_bytes()
        small = minimize(target, data, record["signature"])
        n = 1 + max([int(m.group(1)) for p in FINDINGS.glob(f"{target}-*.txt")
                     if (m := re.search(r"-(\d+)\.txt$", p.name))] or [0])  # fmt: skip
        path = FINDINGS / f"{target}-{n}.txt"
        path.write_bytes(small)
        index[path.name] = record["signature"]
        index_path.write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
        try:
            harness.check(target, small)
            detail = "(no longer reproduces)"
        except harness.Violation as violation:
            detail = violation.detail
        first = detail.strip().splitlines()[0] if detail.strip() else ""
        with (FINDINGS / "README.md").open("a") as readme:
            readme.write(f"- `{path.name}` — {record['property']}: {first[:300]}\n")
        written.append(path)
        print(f"{path} ({len(small)} bytes): {record['signature']}")
    return written


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra: list[str] = []
    if "--" in argv:
        argv, extra = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="all", help="a target name or 'all' (see --list)")
    parser.add_argument("--list", action="store_true", help="print the targets")
    parser.add_argument("--runs", type=int, help="inputs per target")
    parser.add_argument("--seconds", type=float, help="time per target")
    parser.add_argument("--out", type=Path, help="work folder (default: a new temporary one)")
    parser.add_argument("--hypothesis", action="store_true", help="hypothesis instead of atheris")
    parser.add_argument("--merge", action="store_true", help="merge new coverage into fuzz/corpus/<target>")
    parser.add_argument("--seed", type=int, help="random seed (libFuzzer -seed; hypothesis seed)")
    parser.add_argument("--with-findings", action="store_true", help="also replay fuzz/findings/ (regressions)")
    parser.add_argument("--max-len", type=int, help="longest input (libFuzzer -max_len)")
    parser.add_argument("--check", nargs="+", metavar="FILE", help="replay inputs through the checks")
    parser.add_argument("--triage", nargs="+", metavar="FILE", help="record the violations of inputs in --out")
    parser.add_argument("--minimize", action="store_true", help="shrink the findings in --out into fuzz/findings/")
    parser.add_argument("--merge-only", action="store_true", help="merge --out's corpus into fuzz/corpus/<target>")
    parser.add_argument("--slow-report", action="store_true", help="re-time the slowest inputs of --out")
    parser.add_argument("--make-seeds", action="store_true", help="rewrite fuzz/corpus/*/seed-* and fuzz/dicts/")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        worker(args.target, args.out, extra)
        return 0
    if args.make_seeds:
        make_seeds()
        return 0
    harness = _harness()
    if args.list:
        print("\n".join(harness.targets()))
        return 0
    chosen = harness.targets() if args.target == "all" else [args.target]
    for target in chosen:
        if target not in harness.targets():
            parser.error(f"unknown target {target!r}; targets: {', '.join(harness.targets())}")
    if args.check:
        return replay(chosen[0], args.check)
    if args.triage:
        if args.out is None:
            parser.error("--triage needs --out")
        triage(chosen[0], args.out, args.triage)
        return 0
    if args.runs is None and args.seconds is None and not args.minimize:
        args.seconds = 10
    base = args.out or Path(tempfile.mkdtemp(prefix="codec-fuzz-"))
    if args.merge_only or args.slow_report:
        for target in chosen:
            out = base / target if (base / target).is_dir() else base
            if args.merge_only:
                print(json.dumps({"target": target, **merge_corpus(target, out, args.max_len)}))
            else:
                print(json.dumps(slow_report(target, out), indent=1))
        return 0
    if args.minimize:
        for target in chosen:
            minimize_findings(target, base / target if args.target == "all" or (base / target).exists() else base)
        return 0
    engine = "hypothesis" if args.hypothesis or not _have_atheris() else "atheris"
    if engine == "hypothesis" and not args.hypothesis:
        print("atheris is not importable: running the hypothesis fallback", file=sys.stderr)
    failed = False
    for target in chosen:
        out = base / target
        out.mkdir(parents=True, exist_ok=True)
        if engine == "atheris":
            result = run_atheris(target, out, args.runs, args.seconds, args.merge, args.max_len, extra,
                                 args.seed, args.with_findings)  # fmt: skip
        else:
            result = run_hypothesis(target, out, args.runs, args.seconds, args.seed, args.with_findings)
        stats_path = out / "stats.json"
        if stats_path.exists():
            stats = json.loads(stats_path.read_text())
            result["max_us_per_char"] = stats["slowest_us_per_char"][0]["us_per_char"] \
                if stats["slowest_us_per_char"] else None  # fmt: skip
            result["us_per_char_overall"] = stats["us_per_char_overall"]
        findings = sorted((out / "findings").glob("*.json"))
        result["violations"] = [json.loads(p.read_text())["signature"] for p in findings]
        result["out"] = str(out)
        print(json.dumps(result))
        for path in findings:
            record = json.loads(path.read_text())
            print(f"VIOLATION {record['signature']}: {path.with_suffix('.bin')}\n{record['detail']}\n", file=sys.stderr)
        if findings or result.get("crashes"):
            failed = True
            if result.get("crashes"):
                print(result.get("log_tail", ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
