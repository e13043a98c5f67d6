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


def test_runs_on_the_same_units_are_one_measurement(tmp_path, factory):
    # 5d251ae resampled the two runs' means here (`runs`): an interval of two numbers. The same units make
    # one measurement, so the interval is the newest run's units' (the runs start within the same second:
    # the later path, b, is the newer); runs, scored, mean, min and max keep their per-run meaning.
    factory.replay_run(tmp_path, "a", [1, 1, 1], vs=None)
    factory.replay_run(tmp_path, "b", [2, 1, 2], vs=None, seed=3)
    row = _row(_rows(summaries(discover_runs(tmp_path))["leaderboard.csv"]), metric="mrr")
    assert (row["runs"], row["scored"], row["min"], row["max"]) == ("2", "2", "0.666667", "1.000000")
    assert row["mean"] == f"{(1 + 2 / 3) / 2:.6f}"
    _, low, high = bootstrap_ci([0.5, 1.0, 0.5], seed=3, n_resamples=N_RESAMPLES)
    assert (row["ci_low"], row["ci_high"], row["ci_basis"]) == (f"{low:.6f}", f"{high:.6f}", "units")


def test_runs_on_different_units_are_pooled_over_units(tmp_path, factory):
    from ctxgauge.metrics.stats import clustered_bootstrap_ci

    factory.replay_run(tmp_path, "a", [1, 2], vs=None)
    factory.replay_run(tmp_path, "b", [2, 2, 1], vs=None, seed=5)  # a third unit: another set of units
    row = _row(_rows(summaries(discover_runs(tmp_path))["leaderboard.csv"]), metric="mrr")
    _, low, high = clustered_bootstrap_ci([[1.0, 0.5], [0.5, 0.5, 1.0]], 5)
    assert (row["ci_low"], row["ci_high"], row["ci_basis"]) == (f"{low:.6f}", f"{high:.6f}", "pooled-units")


def test_bm25_in_two_runs_gets_the_interval_it_gets_in_one(tmp_path, monkeypatch):
    """The v2 fixtures' cases and cases-vs runs both measured bm25 on the same three cases: 5d251ae wrote a
    zero-width interval (`runs`) for bm25 and a per-unit one for grep, measured once. Now both are per-unit,
    computed here straight from the newest run's units.jsonl."""
    import shutil
    from pathlib import Path

    v2 = Path(__file__).resolve().parents[1] / "records" / "fixtures" / "v2"
    for name in ("cases", "cases-vs"):
        shutil.copytree(v2 / name, tmp_path / name)
    both = _rows(summaries(discover_runs(tmp_path))["leaderboard.csv"])
    newest = max(("cases", "cases-vs"),
                 key=lambda n: json.loads((tmp_path / n / "run.json").read_text())["timing"]["started_at"])
    seed = json.loads((tmp_path / newest / "run.json").read_text())["spec"].get("seed") or 0
    units = [json.loads(line) for line in (tmp_path / newest / "units.jsonl").read_text().splitlines()]
    counted = [u for u in units if u["status"] == "ok" and not u.get("known_gap")]
    shutil.rmtree(tmp_path / ("cases" if newest == "cases-vs" else "cases-vs"))
    alone = _rows(summaries(discover_runs(tmp_path))["leaderboard.csv"])
    for metric in ("ndcg@5", "mrr"):
        row = _row(both, system="bm25", metric=metric)
        side = [u["figures"][metric] if newest == "cases" else u["vs"]["figures"][metric] for u in counted]
        _, low, high = bootstrap_ci(side, seed=seed, n_resamples=N_RESAMPLES)
        assert low < high  # not the zero-width interval of two equal means
        assert (row["runs"], row["ci_low"], row["ci_high"], row["ci_basis"]) == (
            "2", f"{low:.6f}", f"{high:.6f}", "units")
        one = _row(alone, system="bm25", metric=metric)
        assert (one["runs"], one["ci_low"], one["ci_high"], one["ci_basis"]) == (
            "1", row["ci_low"], row["ci_high"], "units")


def test_qa_accuracy_resamples_questions_then_repetitions():
    """The v2 qa-adjudicated run (one repetition, q06 adjudicated pass): accuracy's interval resamples its
    questions, each question's decided verdicts read here from results.questions."""
    from pathlib import Path

    from ctxgauge.metrics.stats import clustered_bootstrap_ci

    run = Path(__file__).resolve().parents[1] / "records" / "fixtures" / "v2" / "qa-adjudicated"
    rows = _rows(summaries(discover_runs(run))["leaderboard.csv"])
    questions = json.loads((run / "run.json").read_text())["results"]["questions"]
    for arm in ("none", "context:bm25@3"):
        groups = {q["qid"]: [1.0 if v == "pass" else 0.0 for v in q["arms"][arm] if v in ("pass", "fail", "adjudicate")]
                  for q in questions}
        groups = [groups[q] for q in sorted(groups) if groups[q]]
        mean, low, high = clustered_bootstrap_ci(groups, 0)
        row = _row(rows, system=arm, metric="accuracy", judge="fixture-judge")
        assert row["mean"] == f"{mean:.6f}"
        assert (row["ci_low"], row["ci_high"], row["ci_basis"]) == (f"{low:.6f}", f"{high:.6f}",
                                                                    "questions-repetitions")
        # Tokens are a repetition's total, not a mean over questions: nothing to resample.
        assert _row(rows, system=arm, metric="tokens", judge="fixture-judge")["ci_basis"] == ""


def test_four_systems_on_the_same_units_get_rank_groups(tmp_path, factory):
    # hit@1 per unit, as in tests/metrics/test_groups.py: A 13 hits, B 12, C the last 6, D none (rank 5).
    # By hand (exact sign-flip counts, Holm): A-B p 1, A-C 2/2**7 (x2), A-D 2/2**13 (x3): {A, B} group 1;
    # then C-D 2/2**6 < 0.05: C group 2, D group 3. Over the 13 units all four share.
    ranks = {"A": [1] * 13, "B": [1] * 12 + [5], "C": [5] * 7 + [1] * 6, "D": [5] * 13}
    for engine, r in ranks.items():
        factory.replay_run(tmp_path, f"run-{engine}", r, vs=None, engine=engine)
    factory.replay_run(tmp_path, "run-E", [1] * 5, vs=None, engine="E", repo="other")  # another dataset: apart
    rows = _rows(summaries(discover_runs(tmp_path))["leaderboard.csv"])
    got = {r["system"]: (r["group"], r["group_n"]) for r in rows if r["metric"] == "hit@1"}
    assert got == {"A": ("1", "13"), "B": ("1", "13"), "C": ("2", "13"), "D": ("3", "13"), "E": ("", "")}


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
