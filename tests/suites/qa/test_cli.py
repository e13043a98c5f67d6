"""`ctxgauge qa run` as a user meets it: its terminal output is its run's report, byte for byte what
`ctxgauge report RUN_DIR` prints; what the report does not hold goes to stderr; progress goes through the
one progress protocol, a unit at a time."""

from __future__ import annotations

import os
import subprocess
import sys

from qa_helpers import ENV, gold_harness  # type: ignore[import-not-found]
from ctxgauge.suites.qa import QAConfig, run_qa


def cli(*args: str):
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "200", "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **ENV}
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, env=env)


def test_terminal_output_is_the_runs_report(mini_battery, tmp_path):
    run_dir = tmp_path / "run"
    arm = gold_harness(tmp_path, mini_battery.path)
    r = cli("qa", "run", str(mini_battery.path), "--arm", arm, "--arm", "context:bm25@3", "--out", str(run_dir))
    assert r.returncode == 0, r.stderr
    assert r.stdout == cli("report", str(run_dir)).stdout
    # The report's qa section: the arms table, the verdict grid, the trust gate, and the run's own note.
    assert "Arms: accuracy, tokens and cost" in r.stdout and "Per-question verdicts (10 questions" in r.stdout
    assert "Trust gate: " in r.stdout
    assert "note: answers tier 1 cannot pass are not judged: no judge configured (give --judge)" in r.stdout
    assert "context:bm25@3: retrieval-only: answers skipped, retrieval measured" in r.stdout
    # stderr: the trust gate's verdict in a line, and where the run lies; the old hand-made table is gone.
    assert r.stderr.strip().splitlines()[-1].startswith("trust gate: ")
    assert r.stderr.strip().endswith(f"run recorded in {run_dir}")
    assert "qa mini (zero-shot" not in r.stdout + r.stderr


def test_a_retrieval_only_run_measured_its_retrieval_and_exits_0(mini_battery, tmp_path):
    # Every unit is skipped (no model), but each holds what the engine retrieved: measured, not exit 7.
    r = cli("qa", "run", str(mini_battery.path), "--arm", "context:bm25@3", "--out", str(tmp_path / "run"), "--json")
    assert r.returncode == 0, r.stderr
    assert '"exit_code": 0' in r.stdout and '"finished": true' in r.stdout


def test_progress_counts_every_unit_arm_by_arm(mini_battery, tmp_path):
    seen: list[tuple[int, int, str]] = []
    arm = gold_harness(tmp_path, mini_battery.path)
    run_qa(QAConfig(source=str(mini_battery.path), arms=["none", "context:bm25@3", arm], out=tmp_path / "run",
                    repeat=2), env=ENV, progress=lambda done, total, label: seen.append((done, total, label)))
    assert {t for _, t, _ in seen} == {3 * 2 * 10}  # arms x repetitions x questions
    done = [d for d, _, _ in seen]
    assert done == sorted(done) and done[-1] == 60  # the bar only moves forward, to the end
    assert (20, 60, "skipped none (needs a model)") in seen  # a skipped arm's units count at once
    assert (20, 60, "building bm25") in seen
    assert (21, 60, "context:bm25@3 rep 1: q01") in seen and (40, 60, "context:bm25@3 rep 2: q10") in seen
    assert sorted({d for d, _, label in seen if label.startswith(arm)}) == list(range(40, 61))  # a step per answer
