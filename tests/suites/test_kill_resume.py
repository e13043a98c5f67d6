"""Nothing lost: SIGKILL every suite's run at the moments a record is written, then `--resume`.

For each suite an uninterrupted run is traced (CTXGAUGE_KILL_TRACE lists every kill point it passes:
before and after each unit line's write and units.jsonl's fsyncs, before/after the fsync and after the
rename of run.json);
then a run is SIGKILLed at one point (CTXGAUGE_KILL_AT=NAME@N) and resumed. The resumed record must equal
the uninterrupted one: the same units (timing and workers aside), each recorded once, and the same
results. The default tier tries one point per suite and one seeded random moment; the slow tier every
point and more random moments. Distributed runs too: the client killed and resumed on a Dask cluster,
and a Dask worker killed mid-unit (its unit is redone elsewhere and recorded once).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from ctxgauge.records import VOLATILE_UNIT_FIELDS, comparable_unit, read_run, read_units

_RUN = [sys.executable, "-m", "ctxgauge"]


def _commands(sample: Path, tmp: Path) -> dict[str, list[str]]:
    lib = tmp / "lib"
    if not lib.exists():
        (lib / "src").mkdir(parents=True)
        for i in range(6):
            (lib / "src" / f"mod{i}.py").write_text(f"def fee_{i}(): return 'overdue {i}'\n")
        cases = "".join(f"  - {{name: c{i}, query: fee {i} overdue, expected: [src/mod{i}.py]}}\n" for i in range(6))
        (tmp / "cases.yaml").write_text("corpus: lib\ncases:\n" + cases)
    return {
        "replay": ["replay", str(sample), "--engine", "grep", "--vs", "bm25", "--commits", "8"],
        "cases": ["cases", str(tmp / "cases.yaml"), "--engine", "grep", "--vs", "bm25"],
        "determinism": ["determinism", str(sample), "--engine", "grep", "--engine", "bm25", "--rebuilds", "2",
                        "--trials", "2", "--query-count", "3", "--families", "rebuild,query,update"],
        "qa": ["qa", "run", "shelfd", "--arm", "context:grep@5", "--arm", "context:bm25@3", "--repo", str(sample)],
    }


def _ctxgauge(args: list[str], out: Path, *, env: dict[str, str] | None = None, resume: bool = False,
              timeout: float = 300) -> subprocess.CompletedProcess:
    cmd = _RUN + args + ["--out", str(out)] + (["--resume"] if resume else [])
    # A SIGKILLed run cannot remove its temporary directory: keep them in the test's own tree, not in /tmp.
    scratch = out.parent / "tmp"
    scratch.mkdir(exist_ok=True)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "TMPDIR": str(scratch), **(env or {})})


def _units(run_dir: Path) -> dict[str, dict]:
    return {u.id: comparable_unit(u) for u in read_units(run_dir)}


def _strip(obj):
    # Results may carry a unit's wall-clock fields (e.g. determinism's per-family seconds): drop them, as
    # comparisons of units do.
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in VOLATILE_UNIT_FIELDS and not k.endswith("seconds")}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _assert_same_record(run_dir: Path, reference: Path) -> None:
    record = read_run(run_dir)
    assert record.status == "success", record.error
    assert _units(run_dir) == _units(reference)
    lines = [json.loads(line) for line in (run_dir / "units.jsonl").read_text().splitlines() if line.strip()]
    counted = Counter(u["id"] for u in lines if u["status"] in ("ok", "skipped"))
    assert max(counted.values()) == 1, "a unit was recorded twice"
    assert _strip(record.results) == _strip(read_run(reference).results)


def _kill_then_resume(args: list[str], out: Path, reference: Path, env: dict[str, str]) -> None:
    killed = _ctxgauge(args, out, env=env)
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr[-2000:])
    if (out / "run.json").exists() and read_run(out).status == "success":
        pass  # killed after the final rename: the run had finished, there is nothing to resume
    else:
        resumed = _ctxgauge(args, out, resume=True)
        assert resumed.returncode in (0, 1), resumed.stderr[-2000:]
    _assert_same_record(out, reference)


@pytest.fixture(scope="module")
def traced(sample_repo, tmp_path_factory):
    """Per suite: its command, an uninterrupted run, and the kill points that run passed, in order."""
    tmp = tmp_path_factory.mktemp("kill")
    out = {}
    for suite, args in _commands(sample_repo, tmp).items():
        trace = tmp / f"{suite}.trace"
        start = time.perf_counter()
        ref = _ctxgauge(args, tmp / f"{suite}-ref", env={"CTXGAUGE_KILL_TRACE": str(trace)})
        seconds = time.perf_counter() - start
        assert ref.returncode in (0, 1), ref.stderr[-2000:]
        seen: Counter = Counter()
        points = []
        for name in trace.read_text().split():
            seen[name] += 1
            points.append(f"{name}@{seen[name]}")
        out[suite] = (args, tmp / f"{suite}-ref", points, seconds)
    return out


def _few(points: list[str]) -> list[str]:
    """The default tier's point: a unit in the middle, just written (half the units in; units.jsonl is
    fsynced at most once a second, so which units pass an fsync point depends on the clock, and a unit's
    write is the point every run passes). The slow tier tries every point, the last run.json's included
    (every unit in, the results not yet)."""
    written = [p for p in points if p.startswith("write-after/units.jsonl")]
    return [written[len(written) // 2]]


SUITES = ["replay", "cases", "determinism", "qa"]


def test_every_suite_passes_kill_points_at_each_fsync_and_rename(traced):
    for suite in SUITES:
        _, _, points, _ = traced[suite]
        names = {p.split("@")[0] for p in points}
        assert {"write-after/units.jsonl", "fsync-before/units.jsonl", "fsync-after/units.jsonl",
                "fsync-before/run.json",
                "fsync-after/run.json", "rename-after/run.json"} <= names, suite


@pytest.mark.parametrize("suite", SUITES)
def test_killed_at_a_few_points_then_resumed_equals_an_uninterrupted_run(traced, tmp_path, suite):
    args, ref, points, _ = traced[suite]
    for i, point in enumerate(_few(points)):
        _kill_then_resume(args, tmp_path / f"k{i}", ref, {"CTXGAUGE_KILL_AT": point})


def _random_kill(args: list[str], out: Path, ref: Path, rng: random.Random, duration: float) -> None:
    proc = subprocess.Popen(_RUN + args + ["--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(rng.uniform(0.2, 1.0) * duration)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if not ((out / "run.json").exists() and read_run(out).status == "success"):
        # Killed before the run folder existed (start-up is slow on a busy machine): there is nothing to resume,
        # and `--resume` on a missing folder is refused (exit 2), so the same command runs afresh.
        resumed = _ctxgauge(args, out, resume=out.exists())
        assert resumed.returncode in (0, 1), resumed.stderr[-2000:]
    _assert_same_record(out, ref)


@pytest.mark.parametrize("suite", SUITES)
def test_killed_at_a_seeded_random_moment_then_resumed(traced, tmp_path, suite):
    args, ref, _, duration = traced[suite]
    _random_kill(args, tmp_path / "r", ref, random.Random(f"{suite}-16"), duration)


@pytest.mark.slow
@pytest.mark.parametrize("suite", SUITES)
def test_an_uninterrupted_run_repeats_itself(traced, tmp_path, suite):
    # The equality every kill test relies on is not luck: two whole runs record the same.
    args, ref, _, _ = traced[suite]
    again = _ctxgauge(args, tmp_path / "again")
    assert again.returncode in (0, 1), again.stderr[-2000:]
    _assert_same_record(tmp_path / "again", ref)


@pytest.mark.slow
@pytest.mark.parametrize("suite", SUITES)
def test_killed_at_every_point_then_resumed(traced, tmp_path, suite):
    args, ref, points, duration = traced[suite]
    # units.jsonl's fsyncs after its first depend on the clock (at most one a second): only the first is a
    # point every run passes; every unit's write-after point stands for the rest.
    points = [p for p in points if not (p.startswith(("fsync-before/units.jsonl", "fsync-after/units.jsonl"))
                                        and not p.endswith("@1"))]
    for i, point in enumerate(points):
        _kill_then_resume(args, tmp_path / f"k{i}", ref, {"CTXGAUGE_KILL_AT": point})
    rng = random.Random(f"{suite}-slow")
    for i in range(5):
        _random_kill(args, tmp_path / f"r{i}", ref, rng, duration)


# -- distributed -----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_killed_dask_client_resumes_on_the_cluster_and_equals_the_local_run(traced, tmp_path):
    pytest.importorskip("distributed")
    args, ref, points, _ = traced["replay"]
    dask = args + ["--executor", "dask-local:2"]
    written = [p for p in points if p.startswith("write-after/units.jsonl")]
    _kill_then_resume(dask, tmp_path / "client", ref, {"CTXGAUGE_KILL_AT": written[-3]})


def test_a_dask_worker_killed_mid_unit_has_its_unit_redone_and_counted_once(traced, tmp_path):
    pytest.importorskip("distributed")
    args, ref, _, _ = traced["replay"]
    once = tmp_path / "killed-once"
    # The second commit any worker starts: that worker dies mid-slice; exactly one worker, once.
    env = {"CTXGAUGE_KILL_AT": "commit-before/replay-slice@2", "CTXGAUGE_KILL_ONCE": str(once)}
    done = _ctxgauge(args + ["--executor", "dask-local:2", "--slice", "3"], tmp_path / "worker", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert once.exists(), "no worker was killed"
    _assert_same_record(tmp_path / "worker", ref)
