"""Derived summaries: leaderboard rows, per-case, per-question, runs.json; did-not-finish never in a mean."""

from __future__ import annotations

import csv
import io
import json

from ctxgauge.metrics import bootstrap_ci
from ctxgauge.export import summaries
from ctxgauge.records import discover_runs
from ctxgauge.report._common import N_RESAMPLES


def _rows(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode())))


def _row(rows, **match):
    found = [r for r in rows if all(r[k] == v for k, v in match.items())]
    assert len(found) == 1, (match, found)
    return found[0]


def test_leaderboard_counts_and_means(all_runs):
    rows = _rows(summaries(discover_runs(all_runs))["leaderboard.csv"])
    # replay bm25: one finished run and one crashed run; the crashed run counts as dnf, never in the mean.
    mrr = _row(rows, suite="replay", system="bm25", metric="mrr")
    values = [1, 1 / 2, 1 / 5, 1, 1 / 3]  # ranks 1, 2, 5, 1, 3 (unit 3 failed)
    assert (mrr["runs"], mrr["valid"], mrr["scored"], mrr["dnf"]) == ("2", "1", "1", "1")
    assert float(mrr["mean"]) == round(sum(values) / 5, 6)
    _, low, high = bootstrap_ci(values, seed=0, n_resamples=N_RESAMPLES)
    assert (mrr["ci_low"], mrr["ci_high"], mrr["ci_basis"]) == (f"{low:.6f}", f"{high:.6f}", "units")
    # determinism: a skipped engine is counted as skipped with no figure.
    minilm = _row(rows, suite="determinism", system="minilm")
    assert (minilm["metric"], minilm["runs"], minilm["valid"], minilm["skipped"], minilm["mean"]) == ("", "1", "0", "1", "")
    assert _row(rows, suite="determinism", system="grep", metric="ctl")["mean"] == "1.000000"
    # qa: the errored run's two repetitions of `none` are dnf; accuracy is the finished repetition's.
    none = _row(rows, suite="qa", system="none", metric="accuracy")
    assert (none["runs"], none["valid"], none["dnf"], none["mean"]) == ("3", "1", "2", "0.250000")
    tool = _row(rows, suite="qa", system="tool:bm25")
    assert (tool["skipped"], tool["mean"]) == ("1", "")


def test_several_scored_runs_get_an_interval_over_runs(tmp_path, factory):
    factory.replay_run(tmp_path, "a", [1, 1], vs=None)
    factory.replay_run(tmp_path, "b", [2, 2], vs=None)
    row = _row(_rows(summaries(discover_runs(tmp_path))["leaderboard.csv"]), metric="mrr")
    assert (row["scored"], row["mean"], row["min"], row["max"]) == ("2", "0.750000", "0.500000", "1.000000")
    _, low, high = bootstrap_ci([1.0, 0.5], seed=0, n_resamples=N_RESAMPLES)
    assert (row["ci_low"], row["ci_high"], row["ci_basis"]) == (f"{low:.6f}", f"{high:.6f}", "runs")


def test_per_case_and_per_question(all_runs):
    files = summaries(discover_runs(all_runs))
    cases = _rows(files["per-case.csv"])
    gap = [r for r in cases if r["suite"] == "cases" and r["lane"] == "known-gaps"]
    assert {r["system"] for r in gap} == {"bm25", "grep"}
    first = _row(cases, suite="replay", system="bm25", case="00" + "c0ffee" * 6 + "00")
    assert (first["runs"], first["scored"], first["passed"], first["pass_metric"]) == ("1", "1", "1", "hit@1")
    assert first["request"] == "request <0>"
    questions = _rows(files["per-question.csv"])
    q2 = _row(questions, qid="q02", arm="none")
    assert (q2["answers"], q2["pass"], q2["fail"]) == ("1", "1", "0")
    assert len(questions) == 4 * 3
    assert {r["answers"] for r in questions if r["arm"] == "tool:bm25"} == {"0"}  # skipped: asked nothing


def test_runs_json_has_every_run_flat(all_runs):
    rows = json.loads(summaries(discover_runs(all_runs))["runs.json"])
    assert [r["path"] for r in rows] == ["cases-a", "det-a", "nested/qa-error", "qa-a", "replay-a", "replay-crashed"]
    crashed = next(r for r in rows if r["path"] == "replay-crashed")
    assert (crashed["finished"], crashed["status"], crashed["systems"]) == (False, "started", ["bm25"])
    assert all(len(r["run_json_sha256"]) == 64 for r in rows)


def test_summaries_are_byte_for_byte_regenerable(all_runs):
    assert summaries(discover_runs(all_runs)) == summaries(discover_runs(all_runs))


def test_qa_rows_keep_unlike_runs_apart_and_carry_protocol_and_judge(tmp_path):
    """Two batteries sharing a name but not a hash, or two protocols of one arm, are separate rows; the
    leaderboard and per-question rows name protocol and judge."""
    import csv
    import io

    from run_factory import qa_run  # type: ignore[import-not-found]

    root = tmp_path / "runs"
    for name, digest, protocol, verdicts in (("a", "h1", "zero-shot", ["pass", "fail"]),
                                             ("b", "h2", "zero-shot", ["pass", "pass"]),
                                             ("c", "h1", "whole-battery", ["fail", "fail"])):
        path = qa_run(root, name, {"none": verdicts})
        rec = json.loads((path / "run.json").read_text())
        rec["context"]["source_identity"]["hash"] = digest
        rec["spec"]["protocol"] = protocol
        (path / "run.json").write_text(json.dumps(rec))
    out = summaries(discover_runs(root))
    rows = [r for r in csv.DictReader(io.StringIO(out["leaderboard.csv"].decode())) if r["metric"] == "accuracy"]
    got = sorted((r["dataset_hash"], r["protocol"], r["judge"], r["runs"], r["mean"]) for r in rows)
    assert got == [("h1", "whole-battery", "m-1", "1", "0.000000"), ("h1", "zero-shot", "m-1", "1", "0.500000"),
                   ("h2", "zero-shot", "m-1", "1", "1.000000")]
    per_q = list(csv.DictReader(io.StringIO(out["per-question.csv"].decode())))
    q1 = sorted((r["dataset_hash"], r["protocol"], r["pass"], r["n"], r["rate"]) for r in per_q if r["qid"] == "q01")
    assert q1 == [("h1", "whole-battery", "0", "1", "0.000000"), ("h1", "zero-shot", "1", "1", "1.000000"),
                  ("h2", "zero-shot", "1", "1", "1.000000")]
