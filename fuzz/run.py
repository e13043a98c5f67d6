"""`make fuzz`: feed ctxgauge's readers of outside input hostile inputs for a wall-clock budget.

    python fuzz/run.py [--seconds 180] [--target corpus-git ...]      fuzz (the targets in turn, in rounds)
    python fuzz/run.py --replay fuzz/crashes/corpus-git-1a2b3c4d5e6f.json   run one saved input, with traceback
    python fuzz/run.py --engine atheris [--seconds 180] [--target ...]     coverage-guided (libFuzzer)
    python fuzz/run.py --engine atheris --target T fuzz/crashes/T-crash-...   replay one atheris crash

Inputs come from hypothesis (fuzz/targets.py says what each target feeds and the one property it checks).
Every failing input hypothesis finds is shrunk to a small one, saved as JSON under fuzz/crashes/ (replayable
with --replay), and kept in hypothesis' example database under fuzz/.hypothesis/, which every later run
replays first, so a crash found once is tried again until it is fixed. Exit 0 when no input broke the
property within the budget, 1 when one did. Not part of `make test`: a fix's regression test goes into the
default tier.

With `--engine atheris` (the `fuzz` extra) libFuzzer chooses the bytes hypothesis draws the same inputs from
(`fuzz_one_input`), guided by coverage of ctxgauge's code: each target runs in its own process for its share
of the budget, keeps the inputs that reached new code in fuzz/corpus/<target>/ for the next run, and writes a
crashing input to fuzz/crashes/<target>-crash-<sha1>.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis.database import DirectoryBasedExampleDatabase  # noqa: E402

import targets as T  # noqa: E402

CRASHES = HERE / "crashes"
DATABASE = HERE / ".hypothesis"
ROUND = 25  # examples per target per round: targets take turns, so each gets a share of any budget


class Hang(Exception):
    """One input ran longer than targets.HANG_SECONDS."""


def _alarm(signum, frame):  # noqa: ANN001
    raise Hang(f"one input ran longer than {T.HANG_SECONDS} s")


def run_one(target: T.Target, case, *, alarm: bool = True) -> None:  # noqa: ANN001
    """Check one input in a fresh temporary directory, bounded by the hang alarm (under atheris, libFuzzer's
    own -timeout bounds it: it uses SIGALRM itself, so the alarm here would fire on its timer)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"ctxgauge-fuzz-{target.name}-"))
    if alarm:
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(T.HANG_SECONDS)
    try:
        target.check(case, tmp)
    finally:
        if alarm:
            signal.alarm(0)
        T.permissions_reset(tmp)
        shutil.rmtree(tmp, ignore_errors=True)


def _where(exc: BaseException) -> str:
    """file:line of the innermost frame inside ctxgauge that raised (else the innermost frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/ctxgauge/" in f.filename] or frames
    return f"{ours[-1].filename}:{ours[-1].lineno} in {ours[-1].name}" if ours else ""


def save_crash(target: T.Target, case, exc: BaseException) -> Path:  # noqa: ANN001
    """The failing input as JSON under fuzz/crashes/, named by its content (the same crash is saved once)."""
    doc = {"target": target.name, "error": f"{type(exc).__name__}: {str(exc)[:500]}",
           "where": _where(exc),
           "case": T.encode(case)}
    text = json.dumps(doc, indent=1, sort_keys=True)
    CRASHES.mkdir(exist_ok=True)
    path = CRASHES / f"{target.name}-{hashlib.sha256(json.dumps(doc['case']).encode()).hexdigest()[:12]}.json"
    path.write_text(text + "\n", encoding="utf-8")
    return path


def fuzz_round(target: T.Target, examples: int, stats: dict) -> BaseException | None:
    """Run up to `examples` inputs of one target; the (shrunk) failure, or None."""
    last: list = [None]

    @settings(max_examples=examples, deadline=None, database=DirectoryBasedExampleDatabase(str(DATABASE)),
              suppress_health_check=list(HealthCheck), phases=[Phase.reuse, Phase.generate, Phase.shrink],
              report_multiple_bugs=False, print_blob=False)
    @given(case=target.cases)
    def prop(case) -> None:  # noqa: ANN001
        last[0] = case
        stats["inputs"] += 1
        run_one(target, case)

    # One database key per target, stable across edits of this file (hypothesis would hash the source).
    prop._hypothesis_internal_database_key = f"ctxgauge-fuzz:{target.name}".encode()  # type: ignore[attr-defined]
    try:
        prop()
    except Exception as exc:  # the shrunk failure: hypothesis re-raises it after replaying the minimal input
        stats["failing_case"] = last[0]
        return exc
    return None


def atheris_child(name: str, libfuzzer_args: list[str]) -> None:
    """One target under libFuzzer, in this process (never returns: libFuzzer exits)."""
    import atheris

    # ctxgauge and the targets again, imported afresh under instrumentation (only ctxgauge's code: instrumenting
    # everything loaded, hypothesis included, takes minutes), so coverage of ctxgauge guides libFuzzer.
    for mod in [m for m in sys.modules if m == "targets" or m == "ctxgauge" or m.startswith("ctxgauge.")]:
        del sys.modules[mod]
    with atheris.instrument_imports(include=["ctxgauge"]):
        import targets as fresh

        fresh.preload()
    target = fresh.TARGETS[name]

    @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(case=target.cases)
    def prop(case) -> None:  # noqa: ANN001
        run_one(target, case, alarm=False)

    atheris.Setup([sys.argv[0], *libfuzzer_args], prop.hypothesis.fuzz_one_input)
    atheris.Fuzz()


def atheris_parent(names: list[str], seconds: float, inputs: list[str]) -> int:
    """Each target in a child process for its share of `seconds` (or the given inputs replayed)."""
    import re
    import subprocess

    failed = []
    total = 0
    share = max(1, int(seconds / len(names)))
    for name in names:
        corpus = HERE / "corpus" / name
        corpus.mkdir(parents=True, exist_ok=True)
        CRASHES.mkdir(exist_ok=True)
        args = [f"-timeout={T.HANG_SECONDS}", "-rss_limit_mb=4096", f"-artifact_prefix={CRASHES}/{name}-"]
        args += inputs if inputs else [f"-max_total_time={share}", str(corpus)]
        proc = subprocess.run([sys.executable, __file__, "--atheris-child", name, "--", *args],
                              capture_output=True, text=True)
        done = re.findall(r"Done (\d+) runs in (\d+) second", proc.stderr)
        runs = int(done[-1][0]) if done else 0
        total += runs
        crash = re.findall(r"Test unit written to (\S+)", proc.stderr)
        ok = proc.returncode == 0
        print(f"{name:<20} {runs:>7} inputs in {share if not inputs else 0:>4} s  "
              f"{'no failure' if ok else 'FAILED: ' + (', '.join(crash) or f'exit {proc.returncode}')}", flush=True)
        if not ok:
            failed.append(name)
            print("\n".join(proc.stderr.splitlines()[-25:]), file=sys.stderr)
    print(f"{total} inputs (atheris); {len(failed)} target(s) failed")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--atheris-child"]:
        atheris_child(argv[1], argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_SECONDS", 180)),
                        help="wall-clock budget (default: $FUZZ_SECONDS or 180)")
    parser.add_argument("--target", action="append", choices=sorted(T.TARGETS), help="only these targets")
    parser.add_argument("--replay", type=Path, help="run one saved input from fuzz/crashes/ and show its traceback")
    parser.add_argument("--engine", choices=["hypothesis", "atheris"],
                        default=os.environ.get("FUZZ_ENGINE") or "hypothesis",
                        help="who chooses inputs (default: $FUZZ_ENGINE or hypothesis)")
    parser.add_argument("inputs", nargs="*", help="with --engine atheris: crash files to replay")
    args = parser.parse_args(argv)
    if args.engine == "atheris":
        return atheris_parent(args.target or sorted(T.TARGETS), args.seconds, args.inputs)

    if args.replay:
        doc = json.loads(args.replay.read_text(encoding="utf-8"))
        target = T.TARGETS[doc["target"]]
        print(f"replaying {args.replay} on {target.name} (recorded: {doc['error']})")
        run_one(target, T.decode(doc["case"]))
        print("no failure: the property holds for this input (fixed?)")
        return 0

    names = args.target or sorted(T.TARGETS)
    stats = {n: {"inputs": 0, "seconds": 0.0, "failures": []} for n in names}
    end = time.monotonic() + args.seconds
    broken: set[str] = set()
    while time.monotonic() < end and len(broken) < len(names):
        for name in names:
            if name in broken or time.monotonic() >= end:
                continue
            s = stats[name]
            t0 = time.monotonic()
            exc = fuzz_round(T.TARGETS[name], ROUND, s)
            s["seconds"] += time.monotonic() - t0
            if exc is not None:
                path = save_crash(T.TARGETS[name], s.pop("failing_case", None), exc)
                s["failures"].append(str(path.relative_to(HERE.parent)))
                print(f"FAIL {name}: {type(exc).__name__}: {str(exc)[:200]}\n  saved {path}; replay: "
                      f"python fuzz/run.py --replay {path.relative_to(HERE.parent)}", flush=True)
                broken.add(name)  # its next rounds would find the same failure first
    total = sum(s["inputs"] for s in stats.values())
    for name in names:
        s = stats[name]
        rate = s["inputs"] / s["seconds"] if s["seconds"] else 0.0
        print(f"{name:<20} {s['inputs']:>6} inputs in {s['seconds']:6.1f} s ({rate:5.1f}/s)  "
              f"{'FAILED: ' + ', '.join(s['failures']) if s['failures'] else 'no failure'}")
    print(f"{total} inputs in {args.seconds:.0f} s budget; {len(broken)} target(s) failed")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
