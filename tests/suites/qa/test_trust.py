"""The trust gate: each threshold on both sides, every check's not-measured path (never a pass, always
named), the verdict line, retrieval coverage, panel agreement and the judge-is-the-answer-model warning."""

from __future__ import annotations

import statistics

import pytest

from ctxgauge.suites.qa import ArmScores, trust_gate


def arm(name, kind, scores, reps=None, zero=0, hits=(), evaluations=None, agreement=()):
    """An arm whose questions scored `scores` (one repetition unless `reps` gives several means)."""
    per_q = {f"q{i:02d}": [s] for i, s in enumerate(scores)}
    mean = statistics.fmean(scores) if scores else None
    return ArmScores(name, kind, per_q, reps if reps is not None else ([mean] if scores else []), zero,
                     len(scores), list(hits), evaluations, list(agreement))


def checks(report):
    return {(c["name"], c["arm"]): c for c in report["checks"]}


def test_nothing_produced_is_not_measured_everywhere():
    report = trust_gate([])
    names = ["questions_scored", "zero_score_share", "context_arm_mean", "coefficient_of_variation",
             "retrieval_hit_rate", "mean_delta", "inter_rater_agreement", "multi_run_std", "judge_independence"]
    assert report["status"] == "not-measured" and report["not_measured"] == names and report["measured"] == 0
    assert all(c["status"] == "not-measured" and c["value"] is None and c["detail"] for c in report["checks"])
    assert report["verdict"] == f"nothing measured (0 of 9 checks); not measured: {', '.join(names)}"


def test_arm_without_scores_is_not_measured_not_passed():
    report = trust_gate([arm("context:bm25@5", "context", [], hits=[True, True, False])])
    c = checks(report)
    assert c[("questions_scored", None)]["status"] == "not-measured"
    assert c[("context_arm_mean", "context:bm25@5")]["status"] == "not-measured"
    assert c[("mean_delta", "context:bm25@5")]["status"] == "not-measured"
    assert c[("retrieval_hit_rate", "context:bm25@5")]["value"] == pytest.approx(2 / 3, abs=1e-4)
    assert report["status"] == "pass" and len(report["not_measured"]) == 8
    # One measured check passed: the line says so, and names the eight it could not measure.
    assert report["verdict"].startswith("pass on 1 of 9 checks; not measured: questions_scored, zero_score_share, "
                                        "context_arm_mean[context:bm25@5]")

def test_healthy_run_passes():
    base = arm("none", "none", [100.0] * 6 + [0.0] * 6)             # 50
    ctx = arm("context:bm25@5", "context", [100.0] * 9 + [0.0] * 3, hits=[True] * 9 + [False])  # 75
    report = trust_gate([base, ctx])
    c = checks(report)
    assert c[("questions_scored", None)]["value"] == 12 and c[("questions_scored", None)]["status"] == "pass"
    assert c[("context_arm_mean", "context:bm25@5")]["value"] == 75.0
    assert c[("mean_delta", "context:bm25@5")]["value"] == 25.0
    # Bernoulli scores at p = 0.75: std/mean = sqrt(p(1-p))/p = sqrt(1/3).
    assert c[("coefficient_of_variation", "context:bm25@5")]["value"] == pytest.approx((1 / 3) ** 0.5, abs=1e-4)
    assert c[("retrieval_hit_rate", "context:bm25@5")]["value"] == 0.9
    assert c[("multi_run_std", None)]["status"] == "not-measured"
    assert report["status"] == "pass"


@pytest.mark.parametrize("scores,expected", [([100.0] * 9, "fail"), ([100.0] * 10, "pass")])
def test_questions_scored_threshold(scores, expected):
    assert checks(trust_gate([arm("none", "none", scores)]))[("questions_scored", None)]["status"] == expected


def test_zero_score_share_fails_above_a_fifth():
    ok = checks(trust_gate([arm("none", "none", [100.0] * 10, zero=2)]))[("zero_score_share", None)]
    bad = checks(trust_gate([arm("none", "none", [100.0] * 10, zero=3)]))[("zero_score_share", None)]
    assert (ok["value"], ok["status"]) == (0.2, "pass") and (bad["value"], bad["status"]) == (0.3, "fail")


def test_warnings_low_context_mean_negative_delta_high_cv():
    base = arm("none", "none", [100.0] * 5 + [0.0] * 5)                # 50
    ctx = arm("context:grep@5", "context", [100.0] * 2 + [0.0] * 8, hits=[False] * 10)  # 20
    report = trust_gate([base, ctx])
    c = checks(report)
    assert c[("context_arm_mean", "context:grep@5")]["status"] == "warn"
    assert c[("mean_delta", "context:grep@5")]["value"] == -30.0 and c[("mean_delta", "context:grep@5")]["status"] == "warn"
    assert c[("coefficient_of_variation", "context:grep@5")]["value"] == 2.0  # sqrt(.8*.2)/.2
    assert c[("retrieval_hit_rate", "context:grep@5")]["status"] == "warn"
    assert report["status"] == "warn"


def test_multi_run_std_fails_above_five_points():
    steady = arm("none", "none", [100.0] * 10, reps=[70.0, 72.0, 74.0])
    shaky = arm("tool:bm25", "tool", [100.0] * 10, reps=[50.0, 70.0])
    c = checks(trust_gate([steady, shaky]))
    assert c[("multi_run_std", "none")]["value"] == 2.0 and c[("multi_run_std", "none")]["status"] == "pass"
    assert c[("multi_run_std", "tool:bm25")]["status"] == "fail"
    assert c[("mean_delta", "tool:bm25")]["value"] == pytest.approx(60.0 - 72.0)


def test_no_context_arm_is_not_measured_for_context_checks():
    c = checks(trust_gate([arm("none", "none", [100.0] * 10)]))
    for name in ("context_arm_mean", "coefficient_of_variation", "retrieval_hit_rate", "mean_delta"):
        assert c[(name, None)]["status"] == "not-measured"


def test_cv_not_measured_at_zero_mean():
    c = checks(trust_gate([arm("context:x@5", "context", [0.0] * 10)]))
    assert c[("coefficient_of_variation", "context:x@5")]["status"] == "not-measured"


def test_verdict_line_names_what_was_measured():
    # On dc65eaf: "pass (N not measured)", a count that reads as a pass; now the line names each one.
    report = trust_gate([arm("none", "none", [100.0] * 10)], model="gpt-4o-mini", judge="gpt-4o")
    assert report["status"] == "pass" and report["measured"] == 3 and report["checks_total"] == 9
    assert report["verdict"] == ("pass on 3 of 9 checks; not measured: context_arm_mean, coefficient_of_variation, "
                                 "retrieval_hit_rate, mean_delta, inter_rater_agreement, multi_run_std")


@pytest.mark.parametrize("recorded,evaluations,status", [(7, 10, "not-measured"), (8, 10, "pass"), (10, 10, "pass")])
def test_retrieval_hit_rate_needs_80_percent_coverage(recorded, evaluations, status):
    ctx = arm("context:bm25@5", "context", [100.0] * 10, hits=[True] * recorded, evaluations=evaluations)
    c = checks(trust_gate([ctx]))[("retrieval_hit_rate", "context:bm25@5")]
    assert c["status"] == status
    if status == "not-measured":
        assert c["detail"] == f"only {recorded} of {evaluations} evaluations record retrieval (needs 80%)"
        assert "retrieval_hit_rate[context:bm25@5]" in trust_gate([ctx])["not_measured"]
    else:
        assert c["value"] == 1.0


@pytest.mark.parametrize("agreement,status", [((0.9, 0.7), "pass"), ((0.9, 0.4), "warn"), ((), "not-measured")])
def test_inter_rater_agreement_when_a_panel_ran(agreement, status):
    c = checks(trust_gate([arm("none", "none", [100.0] * 10, agreement=agreement)]))[("inter_rater_agreement", None)]
    assert c["status"] == status
    if agreement:
        assert c["value"] == pytest.approx(statistics.fmean(agreement))
    else:
        assert c["detail"] == "no judge panel ran (--panel)"


def test_judge_that_is_the_answer_model_is_a_warning():
    same = trust_gate([arm("none", "none", [100.0] * 10)], model={"provider": "openai", "model": "m"},
                      judge={"provider": "openai", "model": "m"})
    c = checks(same)[("judge_independence", None)]
    assert c["status"] == "warn" and "grades its own answers" in c["detail"] and same["status"] == "warn"
    other = checks(trust_gate([], model="m", judge="j"))[("judge_independence", None)]
    assert other["status"] == "pass"
    assert checks(trust_gate([], model="m"))[("judge_independence", None)]["status"] == "not-measured"


def test_cli_prints_the_verdict_line(mini_battery, tmp_path):
    import sys

    from typer.testing import CliRunner

    from ctxgauge.cli import app

    agent = tmp_path / "agent.py"
    agent.write_text("import re, sys\nn = re.search(r'compute_(\\d+)', sys.stdin.read()).group(1)\n"
                     "print(f'It returns value{n}x.')\n")
    res = CliRunner().invoke(app, ["qa", "run", str(mini_battery.path), "--arm", f"command:{sys.executable} {agent}",
                                   "--out", str(tmp_path / "run")], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if x.startswith("trust gate:"))
    # Questions scored and zero-score share are measured; everything else is named as not measured.
    assert line.startswith("trust gate: pass on 2 of 9 checks; not measured: context_arm_mean, ")
    assert "judge_independence" in line and "(12 not measured)" not in line
