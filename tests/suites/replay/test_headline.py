"""One `HEADLINE_METRICS` everywhere: a single replay's report, `replay --repos` (both engines with --vs) and
the demo show the same headline figures, `hit`, `recall`, `ndcg` at the run's smallest k, then `mrr`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.metrics.scoring import HEADLINE_METRICS, headline_metrics, metric_names

EXPECTED = ["hit@5", "recall@5", "ndcg@5", "mrr"]


def ctxgauge(*args, cwd=None):
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, cwd=cwd,
                          env=env)


@pytest.fixture
def listing(repo_builder, tmp_path) -> Path:
    paths = []
    for name in ("alpha", "beta"):
        b = repo_builder(name)
        b.commit("init", {f"src/{name}_{i}.py": f"# {name} part {i}\n" for i in range(3)})
        for i in range(3):
            b.commit(f"Tune {name} part {i}", {f"src/{name}_{i}.py": f"# {name} part {i} v{i}\n"})
        paths.append(b.path)
    out = tmp_path / "repos.txt"
    out.write_text("".join(f"{p} - - {p.name}\n" for p in paths), encoding="utf-8")
    return out


def test_headline_metrics_are_the_families_at_the_smallest_k():
    assert HEADLINE_METRICS == ("hit", "recall", "ndcg", "mrr")
    assert headline_metrics(metric_names([5, 10], pack=True)) == EXPECTED
    assert headline_metrics(metric_names([10, 3])) == ["hit@3", "recall@3", "ndcg@3", "mrr"]
    assert headline_metrics(["hit@10", "mrr", "coverage_gap"]) == ["hit@10", "mrr"]


def test_repos_with_vs_shows_both_engines_and_the_headline_in_the_terminal(listing, tmp_path):
    r = ctxgauge("replay", "--repos", str(listing), "--engine", "bm25", "--vs", "grep", "--out",
                 str(tmp_path / "many"))
    assert r.returncode == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if "commits" in line)
    assert [h for h in EXPECTED if h in header] == EXPECTED and "hit@10" not in header
    rows = [line.replace("│", " ").split() for line in r.stdout.splitlines() if line.startswith("│")]
    # Each repository and the pooled figures, once per engine: before, the --vs engine was only in summary.json.
    for label in ("alpha", "beta", "pooled"):
        assert sorted(row[1] for row in rows if row and row[0] == label) == ["bm25", "grep"], r.stdout


def test_single_replay_report_draws_the_same_headline(repo_builder, tmp_path):
    from ctxgauge.report import load_runs
    from ctxgauge.report._retrieval import headline

    b = repo_builder("solo")
    b.commit("init", {"src/a.py": "a = 1\n", "src/b.py": "b = 1\n"})
    b.commit("Fix a", {"src/a.py": "a = 2\n"})
    r = ctxgauge("replay", str(b.path), "--engine", "grep", "--out", str(tmp_path / "one"))
    assert r.returncode == 0, r.stderr
    (run,) = load_runs([str(tmp_path / "one")])
    assert headline(run) == EXPECTED


def test_the_demo_table_and_its_comparison_show_the_headline(capsys):
    from ctxgauge.cli.demo import _print
    from ctxgauge.demo import DemoResult, _rank_key

    names = metric_names([5, 10], pack=True)
    summary = {n: 0.5 for n in names}
    from ctxgauge.results import ReplayComparison

    comp = ReplayComparison.from_json({"engine": "bm25", "vs": "grep", "seed": 0, "commits": 1, "metrics": {
        n: {"n": 1, "mean_a": 0.6, "mean_b": 0.5, "mean_diff": 0.1, "ci_low": 0.0, "ci_high": 0.2, "p_value": 0.3,
            "wins": 1, "ties": 0, "losses": 0, "seed": 0, "n_resamples": 100,
            "confidence": 0.95} for n in names}})
    result = DemoResult(out=Path("d"), replay={"bm25": summary, "grep": summary}, best_two=("bm25", "grep"),
                        comparison=comp)
    _print(result)
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "engine" in line)
    assert [h for h in EXPECTED if h in header] == EXPECTED and "recall@10" not in header
    assert [n for n in EXPECTED if f"bm25 vs grep, {n}:" in out] == EXPECTED
    # The best two are chosen by the same figures, in the same order.
    better = {**summary, "hit@5": 0.9, "recall@10": 0.0}
    assert _rank_key("x", better) < _rank_key("a", summary)
