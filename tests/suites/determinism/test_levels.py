"""CTL grading: thresholds on exact values, not measured is never a pass, degenerate results earn CTL 0."""

from __future__ import annotations

import pytest

from ctxgauge.suites.determinism import (
    LEVEL_NAMES,
    REPEATABLE_THRESHOLD,
    Evidence,
    Flag,
    degenerate_flags,
    grade,
)

PERFECT = dict(rebuild_identical=True, rebuild_distinct=1, exact_match_rate=1.0, mean_jaccard=1.0, mean_tau=1.0)


def test_perfect_without_another_machine_is_ctl3_and_ctl4_is_not_measured() -> None:
    g = grade(Evidence(**PERFECT, missing={"cross-machine": "no fingerprint from another machine"}))
    assert (g.level, g.label, g.name) == (3, "CTL 3", LEVEL_NAMES[3])
    assert g.not_measured == ((4, "no fingerprint from another machine"),)
    assert g.reasons == ("CTL 4 not measured: no fingerprint from another machine",)


def test_pass_against_another_machine_is_ctl4() -> None:
    g = grade(Evidence(**PERFECT, cross_machine="PASS"))
    assert (g.level, g.not_measured, g.reasons) == (4, (), ())


def test_fail_against_another_machine_stays_ctl3_with_the_reason() -> None:
    g = grade(Evidence(**PERFECT, cross_machine="FAIL", cross_machine_reason="artifact hash differs"))
    assert g.level == 3 and g.not_measured == ()
    assert "FAILED" in g.reasons[0] and "artifact hash differs" in g.reasons[0]


@pytest.mark.parametrize("verdict", ["PASS (UNVERIFIED)", "INCONCLUSIVE", "NOT COMPARABLE", "REFUSED"])
def test_a_verdict_that_decides_nothing_leaves_ctl4_not_measured(verdict: str) -> None:
    g = grade(Evidence(**PERFECT, cross_machine=verdict))
    assert g.level == 3
    assert g.not_measured[0][0] == 4 and verdict in g.not_measured[0][1]


def test_emr_just_below_one_is_not_rounded_up() -> None:
    # One differing trial in 25,000: the reference rounds 0.99996 to 1.0 (4 decimals) and grades CTL 2/3.
    emr = 1 - 1 / 25_000
    assert round(emr, 4) == 1.0
    g = grade(Evidence(**{**PERFECT, "exact_match_rate": emr}))
    assert g.level == 1
    assert g.reasons == (f"CTL 2 needs EMR 1.0; measured {emr!r}",)


def test_jaccard_just_below_threshold_is_not_rounded_up() -> None:
    jaccard = REPEATABLE_THRESHOLD - 1e-5
    assert round(jaccard, 4) == REPEATABLE_THRESHOLD
    g = grade(Evidence(**{**PERFECT, "exact_match_rate": 0.5, "mean_jaccard": jaccard}))
    assert g.level == 0 and "0.89999" in g.reasons[0]


def test_threshold_itself_reaches_ctl1() -> None:
    g = grade(Evidence(**{**PERFECT, "exact_match_rate": 0.5, "mean_jaccard": 0.9, "mean_tau": 0.9}))
    assert g.level == 1


def test_tau_below_threshold_is_ctl0_even_with_perfect_jaccard() -> None:
    g = grade(Evidence(**{**PERFECT, "exact_match_rate": 0.2, "mean_jaccard": 1.0, "mean_tau": 0.3}))
    assert g.level == 0


def test_no_query_trials_is_not_measured_never_a_pass() -> None:
    # The reference leaves EMR, Jaccard and tau at 1 when the query family is skipped, and grades CTL 3.
    g = grade(Evidence(rebuild_identical=True, rebuild_distinct=1, missing={"query": "not requested (--families)"}))
    assert (g.level, g.label, g.name) == (None, "not measured", None)
    assert [lvl for lvl, _ in g.not_measured] == [1, 2, 3, 4]
    assert g.reasons == ("query stability not measured: not requested (--families)",)


def test_no_rebuilds_caps_at_ctl2_with_ctl3_not_measured() -> None:
    g = grade(Evidence(exact_match_rate=1.0, mean_jaccard=1.0, mean_tau=1.0, missing={"rebuild": "failed: boom"}))
    assert g.level == 2
    assert g.not_measured == ((3, "failed: boom"), (4, "failed: boom"))


def test_differing_artifacts_are_ctl2_with_the_count() -> None:
    g = grade(Evidence(**{**PERFECT, "rebuild_identical": False, "rebuild_distinct": 3}))
    assert g.level == 2 and g.not_measured == ()
    assert g.reasons == ("CTL 3 needs identical artifacts; the rebuilds gave 3 distinct hashes",)


def test_degenerate_results_are_capped_at_ctl0_with_the_reason() -> None:
    flag = Flag("degenerate", "no results for 10 of 10 queries")
    g = grade(Evidence(**PERFECT, cross_machine="PASS", flags=[flag]))
    assert (g.level, g.not_measured, g.flags) == (0, (), (flag,))
    assert g.reasons == ("capped at CTL 0 (would be CTL 4): degenerate results, no results for 10 of 10 queries",)


def test_grade_json_shape() -> None:
    out = grade(Evidence(**PERFECT)).to_json()
    assert out == {"level": 3, "label": "CTL 3", "name": "machine-deterministic",
                   "not_measured": [{"level": 4, "reason": "the cross-machine family did not run"}],
                   "reasons": ["CTL 4 not measured: the cross-machine family did not run"], "flags": []}


@pytest.mark.parametrize("empty, n, flagged", [(5, 10, True), (4, 10, False), (1, 2, True), (0, 3, False), (3, 3, True)])
def test_empty_for_half_the_queries_or_more_is_degenerate(empty: int, n: int, flagged: bool) -> None:
    rankings = {f"q{i}": ([] if i < empty else [f"f{i}.py"]) for i in range(n)}
    flags = degenerate_flags(rankings)
    assert bool(flags) is flagged
    if flagged:
        assert flags[0].name == "degenerate" and f"no results for {empty} of {n} queries" in flags[0].reason


def test_the_same_list_for_every_query_is_degenerate() -> None:
    flags = degenerate_flags({"q1": ["a.py", "b.py"], "q2": ["a.py", "b.py"], "q3": ["a.py", "b.py"]})
    assert [f.name for f in flags] == ["degenerate"]
    assert "the same 2 files" in flags[0].reason and "3 queries" in flags[0].reason


def test_one_query_cannot_show_the_answer_ignores_the_question() -> None:
    assert degenerate_flags({"q1": ["a.py"]}) == []
    assert degenerate_flags({}) == []


def test_same_files_in_another_order_is_not_degenerate() -> None:
    assert degenerate_flags({"q1": ["a.py", "b.py"], "q2": ["b.py", "a.py"]}) == []
