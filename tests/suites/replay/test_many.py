"""`replay --repos`: the file's lines, one run per repository, the combined summary, resuming as a whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.metrics.stats import clustered_bootstrap_ci
from ctxgauge.records import comparable_unit, read_run, read_units
from ctxgauge.results import ReplayManySummary
from ctxgauge.suites.replay import SUMMARY_FILE, ReplayConfig, read_repos_file, replay, replay_many


def _history(b, word: str, n: int) -> None:
    b.commit("init", {f"src/{word}_{i}.py": f"# {word} part {i}\n" for i in range(4)} | {"README.md": "hi\n"})
    for i in range(n):
        b.commit(f"Tune {word} part {i % 4} step {i}", {f"src/{word}_{i % 4}.py": f"# {word} part {i % 4} v{i}\n"})


@pytest.fixture
def two_repos(repo_builder, tmp_path):
    a, b = repo_builder("alpha"), repo_builder("beta")
    _history(a, "alpha", 5)
    _history(b, "beta", 3)
    listing = tmp_path / "repos.txt"
    listing.write_text("# two local clones\nalpha - - https://example.org/team/alpha\n"
                       f"{b.path}  HEAD  2  beta   # only two commits\n", encoding="utf-8")
    return listing, a.path, b.path


def test_lines_read_with_defaults_comments_and_relative_paths(two_repos):
    listing, a, b = two_repos
    lines = read_repos_file(listing, 100)
    assert [(ln.path, ln.rev, ln.commits, ln.label, ln.line) for ln in lines] == [
        (listing.parent / "alpha", "HEAD", 100, "https://example.org/team/alpha", 2), (b, "HEAD", 2, "beta", 3)]
    assert [ln.folder for ln in lines] == ["team+alpha", "beta"]


@pytest.mark.parametrize("text, message", [("", "names no repository"), ("a b c d e\n", "5 fields"),
                                           ("a HEAD many\n", "is not a number")])
def test_bad_files_name_the_line_and_the_fix(tmp_path, text, message):
    (tmp_path / "r.txt").write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=message):
        read_repos_file(tmp_path / "r.txt", 10)
    with pytest.raises(UserError, match="no such file"):
        read_repos_file(tmp_path / "none.txt", 10)


def _many(listing: Path, out: Path, **kw):
    config = ReplayConfig(repo=Path("."), engine="grep", **kw)
    return replay_many(config, read_repos_file(listing, None), out)


def test_one_run_per_repository_equal_to_its_single_replay_and_a_pooled_summary(two_repos, tmp_path):
    listing, a, b = two_repos
    many = _many(listing, tmp_path / "many")
    single = replay(ReplayConfig(repo=a, engine="grep", commits=None, out=tmp_path / "single"))
    assert [comparable_unit(u) for u in read_units(tmp_path / "many" / "team+alpha")] == \
        [comparable_unit(u) for u in read_units(single.run_dir)]
    assert read_run(tmp_path / "many" / "beta").counts["ok"] == 2
    summary = json.loads((tmp_path / "many" / SUMMARY_FILE).read_text())
    assert summary == {k: v for k, v in json.loads(json.dumps(many.to_dict())).items() if k != "out"}
    assert ReplayManySummary.from_json(summary) == many.summary  # the file reads back as the typed summary
    assert [r["label"] for r in summary["repositories"]] == ["https://example.org/team/alpha", "beta"]
    # Pooled figures by hand: every scored commit weighs the same; macro: every repository does.
    groups = [[u.figures["recall@5"] for u in read_units(tmp_path / "many" / f) if u.status == "ok"]
              for f in ("team+alpha", "beta")]
    assert [len(g) for g in groups] == [5, 2]
    pooled = summary["pooled"]["recall@5"]
    assert pooled["mean"] == pytest.approx(sum(groups[0] + groups[1]) / 7)
    assert pooled["macro_mean"] == pytest.approx((sum(groups[0]) / 5 + sum(groups[1]) / 2) / 2)
    assert (pooled["ci_low"], pooled["ci_high"]) == clustered_bootstrap_ci(groups, 0)[1:]
    assert pooled["commits"] == 7 and pooled["repositories"] == 2 and summary["vs_pooled"] is None
    # Context metrics are pooled too: macro ones as the ranking ones are, micro ones as ratios of pooled sums.
    assert summary["budgets"] == [1000, 4000, 16000]
    assert "line_coverage_tokens@4000" in summary["context_metrics"]
    units = [[u for u in read_units(tmp_path / "many" / f) if u.status == "ok"] for f in ("team+alpha", "beta")]
    cov = [[u.figures["line_coverage_tokens@1000"] for u in g] for g in units]
    line = summary["pooled"]["line_coverage_tokens@1000"]
    assert line["mean"] == pytest.approx(sum(cov[0] + cov[1]) / 7)
    assert (line["ci_low"], line["ci_high"]) == pytest.approx(clustered_bootstrap_ci(cov, 0)[1:], abs=1e-12)
    pairs = [[u.to_json()["context"]["pairs"]["line_precision_tokens_micro@1000"] for u in g] for g in units]
    micro = summary["pooled"]["line_precision_tokens_micro@1000"]
    assert micro["mean"] == pytest.approx(sum(n for g in pairs for n, _ in g) / sum(d for g in pairs for _, d in g))
    assert micro["macro_mean"] == pytest.approx(
        sum(sum(n for n, _ in g) / sum(d for _, d in g) for g in pairs) / 2)
    assert micro["ci_low"] <= micro["mean"] <= micro["ci_high"] and micro["commits"] == 7
    assert summary["pooled"]["block_coverage@5"] is None  # one comment line per file: no definition, no block


def test_a_bad_line_fails_before_anything_is_written(two_repos, tmp_path):
    listing, _, _ = two_repos
    listing.write_text(listing.read_text() + "nowhere\n", encoding="utf-8")
    with pytest.raises(UserError, match="line 4"):
        _many(listing, tmp_path / "never")
    assert not (tmp_path / "never").exists()


def test_labels_sharing_a_folder_are_refused(two_repos, tmp_path):
    listing, a, _ = two_repos
    listing.write_text(f"{a} - - x\n{a} HEAD~1 - x\n", encoding="utf-8")
    with pytest.raises(UserError, match="different labels"):
        _many(listing, tmp_path / "never")


def test_an_interrupted_many_resumes_as_a_whole(two_repos, tmp_path):
    listing, _, _ = two_repos
    whole = _many(listing, tmp_path / "whole", vs="bm25")
    config = ReplayConfig(repo=Path("."), engine="grep", vs="bm25")
    seen = []

    def stop(done, total, label):
        seen.append(label)
        if done == 6:  # alpha finished (5), one of beta's two recorded
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replay_many(config, read_repos_file(listing, None), tmp_path / "cut", progress=stop)
    assert read_run(tmp_path / "cut" / "team+alpha").status == "success"
    assert read_run(tmp_path / "cut" / "beta").status == "cancelled"
    assert not (tmp_path / "cut" / SUMMARY_FILE).exists()
    with pytest.raises(UserError, match="--resume"):
        replay_many(config, read_repos_file(listing, None), tmp_path / "cut")
    resumed = replay_many(ReplayConfig(repo=Path("."), engine="grep", vs="bm25", resume=True),
                          read_repos_file(listing, None), tmp_path / "cut")
    for folder in ("team+alpha", "beta"):
        cut, ref = read_units(tmp_path / "cut" / folder), read_units(tmp_path / "whole" / folder)
        assert sorted(map(json.dumps, map(comparable_unit, cut))) == sorted(map(json.dumps, map(comparable_unit, ref)))
        assert len(cut) == len({u.id for u in cut})  # nothing recorded twice
    assert resumed.summary == whole.summary and resumed.summary.vs_pooled["recall@5"] is not None
