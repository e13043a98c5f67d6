"""Rebuilds in worker processes (`--executor local:N`): the same record as in this process, real fresh
builds elsewhere, and a worker's failure recorded as the rebuild family's, not the run's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.suites.determinism import DeterminismConfig, run_determinism

HERE = Path(__file__).resolve().parent


@pytest.fixture
def flaky(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """flaky_engines importable here and in spawned workers (they start with this process's sys.path)."""
    monkeypatch.syspath_prepend(str(HERE))
    import flaky_engines  # type: ignore[import-not-found]

    yield flaky_engines
    sys.modules.pop("flaky_engines", None)


def _figures(result, name: str) -> dict:  # type: ignore[no-untyped-def]
    e = result.to_json()["engines"][name]
    return {"level": e["level"], "families": {f: (v["status"], v["figures"]) for f, v in e["families"].items()},
            "fingerprint": _without_run_id(Path(e["fingerprint"])) if e["fingerprint"] else None}


def _without_run_id(path: Path) -> dict:
    # Two runs' fingerprints differ in the run each names (ctxgauge.runId), by design; the rest is the same.
    data = json.loads(path.read_bytes())
    assert data["ctxgauge"].pop("runId")
    return data


def _run(source: Path, out: Path, executor: str, factory, *engines: str):  # type: ignore[no-untyped-def]
    return run_determinism(DeterminismConfig(source=source, out=out, engines=engines, rebuilds=3, trials=2, k=5,
                                             executor=executor), factory=factory)


def test_rebuilds_in_workers_give_the_record_this_process_gives(library_repo: Path, tmp_path: Path, flaky) -> None:
    here = _run(library_repo, tmp_path / "here", "local", flaky.factory, "bm25", "grep", "stamp")
    there = _run(library_repo, tmp_path / "there", "local:2", flaky.factory, "bm25", "grep", "stamp")
    for name in ("bm25", "grep"):
        assert _figures(here, name) == _figures(there, name)
        assert _figures(there, name)["families"]["rebuild"][1]["identical"] is True
        assert _figures(there, name)["level"] == 3
    # The stamp engine writes the build time into its artifact: three real builds, three hashes, in workers too.
    stamp = there.engines["stamp"].families["rebuild"].figures
    assert (stamp["rebuilds"], stamp["distinct_hashes"]) == (3, 3)
    assert there.engines["stamp"].grade.level == 2
    # The record lists the same units either way (the order differs: workers' rebuilds are collected last).
    units = lambda run: sorted(json.loads(line)["id"] for line in (run / "units.jsonl").read_text().splitlines())
    assert units(tmp_path / "here") == units(tmp_path / "there")


def test_a_build_failing_in_a_worker_fails_the_rebuild_family_only(library_repo: Path, tmp_path: Path,
                                                                    flaky) -> None:
    result = _run(library_repo, tmp_path / "run", "local:2", flaky.factory, "homebound")
    fams = result.engines["homebound"].families
    assert fams["rebuild"].status == "failed" and "disk full in the worker" in (fams["rebuild"].reason or "")
    assert fams["rebuild"].figures == {"rebuilds_done": 1}
    assert (fams["query"].status, fams["drift"].status) == ("ok", "ok")  # built and queried in this process
    # In this process the same engine builds every time: the failure above came from the workers.
    assert _run(library_repo, tmp_path / "here", "local", flaky.factory,
                "homebound").engines["homebound"].families["rebuild"].status == "ok"


@pytest.mark.parametrize("spec, message", [
    ("dask-local:2", "determinism builds and queries on this machine"),
    ("pool", "not an executor"),
])
def test_an_executor_determinism_cannot_use_is_one_line_and_exit_2(plain_library: Path, tmp_path: Path,
                                                                  spec: str, message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "ctxgauge", "determinism", str(plain_library), "--executor", spec,
                           "--out", str(tmp_path / "run")], capture_output=True, text=True,
                          env={**os.environ, "CTXGAUGE_CACHE": "off"})
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()
