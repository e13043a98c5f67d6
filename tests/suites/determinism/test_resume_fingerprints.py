"""A determinism run SIGKILLed and resumed writes the fingerprints an uninterrupted run writes.

The resumed process computes fusion's identity before it has built graph (whose parser modules it then had
not imported); ids that depended on import order made its fingerprint name another system, and `compare`
called the pair NOT COMPARABLE (exit 4) instead of REFUSED (exit 5) as two clean runs are. Real processes
(`python -m ctxgauge`), killed by the CTXGAUGE_KILL_AT hook at points before, between and after the
engines' fingerprints are written.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest


ENGINES = ("bm25", "graph", "fusion")


def _run(repo: Path, out: Path, *, resume: bool = False, env: dict[str, str] | None = None):
    args = [sys.executable, "-m", "ctxgauge", "determinism", str(repo), *[a for e in ENGINES for a in ("-e", e)],
            "--rebuilds", "2", "--trials", "2", "--query-count", "3", "--families", "rebuild,query",
            "--out", str(out)] + (["--resume"] if resume else [])
    scratch = out.parent / "tmp"  # a killed run cannot remove its temporary directory
    scratch.mkdir(exist_ok=True)
    return subprocess.run(args, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TMPDIR": str(scratch), **(env or {})})


def _fingerprints(run: Path) -> dict[str, str]:
    """Each engine's fingerprint with the one field naming the run set aside (`ctxgauge.runId`, issue 36 item
    8): every other byte must be the uninterrupted run's. The run ids of one run's fingerprints are one id."""
    out, ids = {}, set()
    for e in ENGINES:
        doc = json.loads((run / "fingerprints" / f"{e}.fingerprint.json").read_text())
        ids.add(doc["ctxgauge"].pop("runId"))
        out[e] = json.dumps(doc, indent=1, sort_keys=True)
    assert len(ids) == 1 and next(iter(ids)).startswith(run.name + "-"), ids
    return out


@pytest.fixture(scope="module")
def reference(library_repo, tmp_path_factory):
    """An uninterrupted run of the twelve-commit library (graph resolves its imports, history reads its
    commits) and the kill points that run passed."""
    tmp = tmp_path_factory.mktemp("resume-fp")
    trace = tmp / "trace"
    done = _run(library_repo, tmp / "ref", env={"CTXGAUGE_KILL_TRACE": str(trace)})
    assert done.returncode == 0, done.stderr[-2000:]
    seen: Counter = Counter()
    points = []
    for name in trace.read_text().split():
        seen[name] += 1
        points.append(f"{name}@{seen[name]}")
    return library_repo, tmp / "ref", points


def _points(points: list[str]) -> list[str]:
    """A unit in the middle just written, and the unit lines just written after bm25's and after graph's
    fingerprints (each engine's last unit: the resumed process takes that engine from the record and
    builds only those after it, fusion among them)."""
    units = [i for i, p in enumerate(points) if p.startswith("write-after/units.jsonl")]
    chosen = [points[units[len(units) // 2]]]
    for engine in ("bm25", "graph"):
        renamed = points.index(f"rename-after/{engine}.fingerprint.json@1")
        chosen.append(points[min(i for i in units if i > renamed)])
    return chosen


def test_the_reference_run_and_a_second_clean_run_are_refused_as_copies(reference, tmp_path):
    repo, ref, _ = reference
    again = _run(repo, tmp_path / "again")
    assert again.returncode == 0, again.stderr[-2000:]
    assert _fingerprints(tmp_path / "again") == _fingerprints(ref)
    assert json.loads(_fingerprints(ref)["fusion"])["ctxgauge"]["identity_scheme"] == 3
    assert all(json.loads(_fingerprints(ref)[e])["queryHashes"] for e in ENGINES)  # queries really ran


@pytest.mark.parametrize("at", range(3))
def test_killed_and_resumed_writes_the_uninterrupted_fingerprints(reference, tmp_path, at):
    repo, ref, points = reference
    point = _points(points)[at]
    out = tmp_path / "run"
    killed = _run(repo, out, env={"CTXGAUGE_KILL_AT": point})
    assert killed.returncode == -signal.SIGKILL, (point, killed.stderr[-2000:])
    resumed = _run(repo, out, resume=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    # A resumed run is the same run: one run id throughout, every other field equal to the uninterrupted run's.
    assert _fingerprints(out) == _fingerprints(ref), point
    for engine in ENGINES:
        cmp = subprocess.run([sys.executable, "-m", "ctxgauge", "compare",
                              str(out / "fingerprints" / f"{engine}.fingerprint.json"),
                              str(ref / "fingerprints" / f"{engine}.fingerprint.json")],
                             capture_output=True, text=True, timeout=60)
        assert cmp.returncode == 5, (engine, point, cmp.stdout)  # REFUSED, as two clean runs are
