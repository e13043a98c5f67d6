"""Fixtures for report tests: the run factory, and a directory holding one run of every suite plus runs
that did not finish."""

from __future__ import annotations

from pathlib import Path

import pytest




@pytest.fixture
def all_runs(tmp_path: Path, factory) -> Path:
    """replay (bm25 vs grep, 6 commits, one failed), cases (one known gap), determinism (bm25 CTL 3, grep
    CTL 1 with drift, minilm skipped), qa (three arms, one skipped), and a crashed and an errored run."""
    root = tmp_path / "runs"
    factory.replay_run(root, "replay-a", [1, 2, 5, None, 1, 3], [2, 2, None, None, 1, 1], failed=[3])
    factory.replay_run(root, "cases-a", [1, None, 2, 0], [1, 1, None, 0], suite="cases", repo="cases.yaml", gaps=[1])
    factory.determinism_run(root, "det-a", {"bm25": {"level": 3, "drift": {"prose": 0.0}},
                                            "grep": {"level": 1, "drift": {"prose": 0.25}, "emr": 0.8},
                                            "minilm": {"status": "skipped", "reason": "torch not installed"}})
    factory.qa_run(root, "qa-a", {"none": ["fail", "pass", "fail", "fail"],
                                  "context:bm25@5": ["pass", "pass", "pass", "fail"],
                                  "tool:bm25": [None, None, None, None]},
                   tokens={"none": 400, "context:bm25@5": 3000}, cost={"none": 0.001, "context:bm25@5": 0.006},
                   skipped=["tool:bm25"])
    factory.unfinished_run(root, "replay-crashed")
    factory.unfinished_run(root, "nested/qa-error", suite="qa", status="error")
    return root
