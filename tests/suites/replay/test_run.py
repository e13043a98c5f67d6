"""The replay pipeline on small real repositories: figures by hand, failures, missing objects, resume, TREC."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from ctxgauge.engines.grep import GrepEngine
from ctxgauge.errors import UserError
from ctxgauge.records import read_run as _read_run, read_units as _read_units
from ctxgauge.suites.replay import ReplayConfig, replay


# These tests check the JSON layout the suite wrote: the typed record and units in their JSON form.
def read_run(run_dir):
    return _read_run(run_dir).to_json()


def read_units(run_dir):
    return [u.to_json() for u in _read_units(run_dir)]


@pytest.fixture
def fees_repo(repo_builder):
    """Four commits: root, the fee fix (figures computed by hand below), a docs commit, an all-gap commit."""
    b = repo_builder("fees")
    b.commit("init", {
        "src/loans.py": "def charge(loan):\n    return overdue(loan) * fee\n",      # overdue, fee
        "src/report.py": "# overdue fee rounding report\n",                         # overdue, fee, rounding
        "src/money.py": "CENTS = 100\n",                                            # none of the terms
        "tests/test_loans.py": "def test_charge():\n    assert fee\n",              # fee
        "docs/guide.md": "How to lend books.\n",
        "logo.png": b"\x89PNG\0\0\0old",
    })
    fix = b.commit("fix(loans): Overdue fee rounding (#7)", {
        "src/loans.py": "def charge(loan):\n    return round(overdue(loan) * fee, 2)\n",
        "src/money.py": "CENTS = 100\nROUND = 2\n",
        "tests/test_loans.py": "def test_charge():\n    assert fee == 1\n",
        "CHANGELOG.md": "- fee rounding\n",
    })
    docs = b.commit("Explain lending in the guide", {"docs/guide.md": "How to lend books: ask.\n"})
    gap = b.commit("New logo", {"logo.png": b"\x89PNG\0\0\0new"})
    return b.path, {"fix": fix, "docs": docs, "gap": gap}


def _run(tmp_path: Path, repo: Path, name: str = "run", **kw):
    kw.setdefault("engine", "grep")
    return replay(ReplayConfig(repo=repo, out=tmp_path / name, **kw))


def test_figures_equal_a_hand_computation(tmp_path, fees_repo):
    repo, sha = fees_repo
    result = _run(tmp_path, repo, ks=(5,))
    by_sha = {c["sha"]: c for c in result.to_dict()["commits"]}
    fix = by_sha[sha["fix"]]
    assert fix["request"] == "Overdue fee rounding"
    assert fix["expected"] == ["src/loans.py", "src/money.py"] and fix["tests"] == ["tests/test_loans.py"]
    # grep: report.py holds 3 of the terms (overdue, fee, rounding), loans.py 2, test_loans.py 1, money.py 0.
    assert [h["path"] for h in fix["ranking"]] == ["src/report.py", "src/loans.py", "tests/test_loans.py"]
    f = fix["figures"]
    assert f["hit@5"] == 1.0
    assert f["recall@5"] == 1 / 2                       # loans.py of {loans.py, money.py}
    assert f["precision@5"] == 1 / 5                    # divided by k
    assert f["mrr"] == 1 / 2                            # first relevant at rank 2
    assert f["ndcg@5"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)), abs=1e-12)
    assert f["pack_recall@5"] == 2 / 3                  # loans.py and the test, of three changed files
    # The all-gap commit is counted but not scored; the gap share is a ratio of totals.
    gap = by_sha[sha["gap"]]
    assert gap["coverage_gap"] == ["logo.png"] and all(v is None for v in gap["figures"].values())
    assert gap["coverage_gap_share"] == 1.0 and fix["coverage_gap_share"] == 0.0
    assert result.results.counts.to_json() == {"walked": 4, "replayed": 3, "ok": 3, "scored": 2, "failed": 0, "skipped": 1}
    assert result.results.summary["coverage_gap"] == 1 / (2 + 1 + 1)
    assert result.results.summary["recall@5"] == (1 / 2 + by_sha[sha["docs"]]["figures"]["recall@5"]) / 2
    assert result.results.by_kind["code"].commits == 1 and result.results.by_kind["other"].commits == 2
    assert result.results.skipped["root"] == 1
    assert [c["sha"] for c in result.to_dict()["commits"]] == [sha["gap"], sha["docs"], sha["fix"]]  # newest first


def test_the_run_record_holds_one_unit_per_commit_walked(tmp_path, fees_repo):
    repo, sha = fees_repo
    result = _run(tmp_path, repo)
    record = read_run(result.run_dir)
    assert record["status"] == "success" and record["suite"] == "replay"
    assert record["spec"]["engine"] == "grep" and record["spec"]["seed"] == 0 and record["spec"]["ks"] == [5, 10]
    assert "/" not in record["spec"]["repo"]  # a name, never an absolute path
    units = {u["id"]: u for u in read_units(result.run_dir)}
    assert len(units) == 4 and units[sha["fix"]]["status"] == "ok"
    assert units[sha["fix"]]["figures"] == next(c for c in result.to_dict()["commits"] if c["sha"] == sha["fix"])["figures"]
    assert record["results"]["summary"] == result.results.summary


class _Exploding(GrepEngine):
    """grep, except that a query mentioning `lending` crashes (its own name: --vs refuses a system against
    itself)."""

    name = "exploding-grep"

    def query(self, out_dir, text, k):
        if "lending" in text:
            raise RuntimeError("boom")
        return super().query(out_dir, text, k)


def test_an_engine_failure_fails_one_commit_and_leaves_it_out_of_every_mean(tmp_path, fees_repo, monkeypatch):
    repo, sha = fees_repo
    monkeypatch.setattr("ctxgauge.suites._retrieval._engines.get_engine",
                        lambda spec: _Exploding() if spec == "grep" else GrepEngine())
    result = _run(tmp_path, repo, vs="grep-again")
    failed = [c for c in result.to_dict()["commits"] if c["status"] == "failed"]
    assert [c["sha"] for c in failed] == [sha["docs"]]
    assert "RuntimeError: boom" in failed[0]["reason"]
    assert result.results.counts.failed == 1 and result.results.counts.ok == 2
    # Only the fix is scored on both sides: the comparison and both summaries stand on it alone.
    fix = next(c for c in result.to_dict()["commits"] if c["sha"] == sha["fix"])
    assert result.results.summary["recall@5"] == fix["figures"]["recall@5"]
    assert result.results.comparison.commits == 2 and result.results.comparison.metrics["recall@5"].n == 1


def test_a_missing_blob_skips_the_commits_that_need_it(tmp_path, repo_builder):
    b = repo_builder("holes")
    b.commit("init", {"a.py": "alpha\n", "big.txt": "version one\n"})
    c2 = b.commit("Change alpha", {"a.py": "alpha beta\n"})
    b.commit("Rewrite big text", {"big.txt": "version two\n"})
    c4 = b.commit("Change alpha again", {"a.py": "alpha gamma\n"})
    oid = os.popen(f"git -C {b.path} rev-parse HEAD~3:big.txt").read().strip()
    (b.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()  # a snapshot without that blob
    result = _run(tmp_path, b.path)
    assert result.results.skipped["missing-object"] == 2  # c2's and c3's parents hold big.txt version one
    assert [c["sha"] for c in result.to_dict()["commits"]] == [c4]
    assert c2 not in {c["sha"] for c in result.to_dict()["commits"]}


class _Counting(GrepEngine):
    """grep that remembers every request it was asked."""

    asked: list[str] = []

    def query(self, out_dir, text, k):
        self.asked.append(text)
        return super().query(out_dir, text, k)


def test_resume_skips_commits_done_and_ends_with_the_same_figures(tmp_path, fees_repo, monkeypatch):
    repo, _ = fees_repo
    whole = _run(tmp_path, repo, name="whole")
    monkeypatch.setattr("ctxgauge.suites._retrieval._engines.get_engine", lambda spec: _Counting())

    def stop_after_one(done, total, sha):
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replay(ReplayConfig(repo=repo, engine="grep", out=tmp_path / "cut"), progress=stop_after_one)
    assert read_run(tmp_path / "cut")["status"] == "cancelled"
    assert _Counting.asked == ["Overdue fee rounding"]  # oldest first
    _Counting.asked.clear()
    resumed = replay(ReplayConfig(repo=repo, engine="grep", out=tmp_path / "cut", resume=True))
    assert _Counting.asked == ["Explain lending in the guide", "New logo"]  # the done commit is not redone
    assert resumed.results.summary == whole.results.summary
    assert [c["figures"] for c in resumed.to_dict()["commits"]] == [c["figures"] for c in whole.to_dict()["commits"]]
    assert read_run(tmp_path / "cut")["status"] == "success"


def test_bad_input_writes_nothing(tmp_path, fees_repo):
    repo, _ = fees_repo
    for kw, message in [({"repo": tmp_path / "nope"}, "no such file"), ({"rev": "nosuch"}, "no commit named"),
                        ({"engine": "nosuch"}, "unknown engine"), ({"ks": (0,)}, "-k must be"),
                        ({"depth": 3}, "--depth 3 is below"), ({"resume": True, "out": None}, "--resume needs")]:
        config = {"repo": repo, "engine": "grep", "out": tmp_path / "never", **kw}
        with pytest.raises(UserError, match=message):
            replay(ReplayConfig(**config))
        assert not (tmp_path / "never").exists()


def test_trec_files_score_the_same_in_ir_measures(tmp_path, fees_repo):
    ir_measures = pytest.importorskip("ir_measures")
    repo, _ = fees_repo
    result = _run(tmp_path, repo, trec=tmp_path / "trec", ks=(5,))
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "trec" / "qrels.txt")))
    run = list(ir_measures.read_trec_run(str(tmp_path / "trec" / "run.trec")))
    theirs = ir_measures.calc_aggregate([ir_measures.R @ 5, ir_measures.RR, ir_measures.nDCG @ 5], qrels, run)
    assert theirs[ir_measures.R @ 5] == pytest.approx(result.results.summary["recall@5"], abs=1e-9)
    assert theirs[ir_measures.RR] == pytest.approx(result.results.summary["mrr"], abs=1e-9)
    assert theirs[ir_measures.nDCG @ 5] == pytest.approx(result.results.summary["ndcg@5"], abs=1e-9)


class _Blind(GrepEngine):
    """An engine that finds nothing: every metric falls to 0."""

    def query(self, out_dir, text, k):
        return []


def test_baseline_gate_passes_on_equal_runs_and_names_the_commits_that_got_worse(tmp_path, fees_repo, monkeypatch):
    repo, sha = fees_repo
    base = _run(tmp_path, repo, name="base")
    same = _run(tmp_path, repo, name="same", baseline=base.run_dir, max_drop=0.0)
    assert same.passed and same.results.gate.commits == 3 and all(line.drop == 0 for line in same.results.gate.lines)
    monkeypatch.setattr("ctxgauge.suites._retrieval._engines.get_engine", lambda spec: _Blind())
    worse = _run(tmp_path, repo, name="worse", baseline=base.run_dir, max_drop=0.02)
    assert not worse.passed
    lines = {line.metric: line.to_json() for line in worse.results.gate.lines}
    assert lines["recall@5"]["drop"] == pytest.approx(base.results.summary["recall@5"]) and not lines["recall@5"]["holds"]
    assert lines["recall@5"]["worse"] == [sha["docs"], sha["fix"]]  # the larger fall (1.0 vs 0.5) first
    assert "pack_recall@5" in lines and "coverage_gap" not in lines
    with pytest.raises(UserError, match="not a run directory"):
        _run(tmp_path, repo, name="x", baseline=tmp_path / "nowhere")
    assert not (tmp_path / "x").exists()


def test_a_spec_at_its_defaults_is_recorded_under_the_one_canonical_name(tmp_path, fees_repo):
    # `bm25(k1=1.2)` is `bm25` (k1's default): one system in records, so reports cannot show it twice.
    repo, _ = fees_repo
    explicit = read_run(_run(tmp_path, repo, "explicit", engine="bm25(k1=1.2,method=lucene)", vs="grep").run_dir)
    plain = read_run(_run(tmp_path, repo, "plain", engine="bm25", vs="grep").run_dir)
    assert explicit["spec"]["engine"] == plain["spec"]["engine"] == "bm25"
    assert explicit["spec"]["engine_identity"] == plain["spec"]["engine_identity"]
    assert explicit["results"]["summary"] == plain["results"]["summary"]
