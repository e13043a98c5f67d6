"""`replay --repos` speaks as every other view (walkthrough at 80 columns, issue 39): `1 repository`, not
`1 repositories`, and its pooled intervals as `[low, high]` (the report's `fmt_interval`), not `0.667–1.000`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ctxgauge.metrics.scoring import headline_metrics
from ctxgauge.report._common import fmt_interval


def replay_repos(listing, out, columns: str):
    env = {**os.environ, "COLUMNS": columns}
    r = subprocess.run([sys.executable, "-m", "ctxgauge", "replay", "--repos", str(listing), "--engine", "bm25",
                        "--out", str(out)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("n", [1, 2])
def test_count_and_intervals_read_as_in_the_report(repo_builder, tmp_path, n):
    paths = []
    for name in ("alpha", "beta")[:n]:
        b = repo_builder(name)
        b.commit("init", {f"src/{name}_{i}.py": f"# {name} part {i}\n" for i in range(3)})
        for i in range(3):
            b.commit(f"Tune {name} part {i}", {f"src/{name}_{i}.py": f"# {name} part {i} v{i}\n"})
        paths.append(b.path)
    listing = tmp_path / "repos.txt"
    listing.write_text("".join(f"{p} - - {p.name}\n" for p in paths), encoding="utf-8")
    out = replay_repos(listing, tmp_path / "many", "120")
    assert f"bm25: {n} {'repository' if n == 1 else 'repositories'}\n" in out, out
    pooled = json.loads((tmp_path / "many" / "summary.json").read_text())["pooled"]
    intervals = [fmt_interval(pooled[m]["ci_low"], pooled[m]["ci_high"]) for m in headline_metrics(pooled)]
    assert intervals and all(i in out for i in intervals), out
    assert "–" not in out
