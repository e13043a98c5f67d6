"""Fingerprints name their run (F22): two real determinism runs of one repository, each fingerprint
recording its run id under `ctxgauge.runId`, then `compare` from the shell on the pairs a forger
or a careless user makes: a copy with only `env.os` edited (same run id: REFUSED), a copy with a new run id
and nothing else changed (identical once the run id is set aside: REFUSED), and the two real runs with one
side's env edited as a second machine's would be (different runs: PASS). ContextBenchmark's reader keeps
working: every key it knows is unchanged, the run id lives in our namespace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.fingerprints import read_fingerprint
from ctxgauge.fingerprints._model import KNOWN_KEYS

FAST = ["--rebuilds", "2", "--trials", "2", "-k", "5", "--families", "query"]


def ctxgauge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def two_runs(library_repo: Path, tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fp-runs")
    out = []
    for name in ("a", "b"):
        # The same --out name on "two machines": the run ids must still differ.
        done = ctxgauge("determinism", str(library_repo), "-e", "grep", *FAST, "--out", str(root / name / "run"))
        assert done.returncode == 0, done.stderr
        out.append(next((root / name / "run").rglob("*.fingerprint.json")))
    return out[0], out[1]


def _edited(src: Path, dst: Path, edit) -> Path:
    data = json.loads(src.read_text())
    edit(data)
    dst.write_text(json.dumps(data, indent=2) + "\n")
    return dst


def _compare(a: Path, b: Path) -> tuple[int, str]:
    done = ctxgauge("compare", str(a), str(b), "--json")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_each_fingerprint_names_its_own_run(two_runs):
    a, b = (read_fingerprint(p) for p in two_runs)
    assert a.run_id and b.run_id and a.run_id != b.run_id
    assert a.run_id.startswith("run-") and b.run_id.startswith("run-")
    # ContextBenchmark's keys are as they were; ours sit under the one namespace it ignores.
    data = json.loads(two_runs[0].read_text())
    assert [k for k in data if k in KNOWN_KEYS] == list(KNOWN_KEYS) and data["ctxgauge"]["runId"] == a.run_id


def test_a_copy_with_env_os_edited_is_refused(two_runs, tmp_path):
    forged = _edited(two_runs[0], tmp_path / "forged.json", lambda d: d["env"].update(os="win32 10.0.19045"))
    code, out = _compare(two_runs[0], forged)
    assert (code, out["verdict"]) == (5, "REFUSED") and "same run" in out["reasons"][0]


def test_a_copy_with_a_new_run_id_is_refused(two_runs, tmp_path):
    forged = _edited(two_runs[0], tmp_path / "renamed.json", lambda d: d["ctxgauge"].update(runId="run-0000"))
    code, out = _compare(two_runs[0], forged)
    assert (code, out["verdict"]) == (5, "REFUSED") and "run ids are set aside" in out["reasons"][0]


def test_two_runs_on_two_machines_pass_without_the_copy_warning(two_runs, tmp_path):
    other = _edited(two_runs[1], tmp_path / "other-machine.json", lambda d: d["env"].update(os="darwin 23.1.0"))
    code, out = _compare(two_runs[0], other)
    assert (code, out["verdict"]) == (0, "PASS"), out
    assert not any("differ only in env" in w for w in out["warnings"]), out


def test_without_run_ids_an_env_only_difference_warns(two_runs, tmp_path):
    def strip(d):
        d["ctxgauge"].pop("runId")

    a = _edited(two_runs[0], tmp_path / "a.json", strip)
    b = _edited(two_runs[0], tmp_path / "b.json", lambda d: (strip(d), d["env"].update(os="win32 10.0.19045")))
    code, out = _compare(a, b)
    assert (code, out["verdict"]) == (0, "PASS")
    assert any("differ only in env" in w and "cannot tell" in w for w in out["warnings"]), out
    shown = ctxgauge("compare", str(a), str(b))
    assert "warning:" in shown.stdout and "differ only in env" in shown.stdout
