"""--vs and --baseline over hand-made units: pairing, seeds, directions, the commits named worse."""

from __future__ import annotations

import pytest

from ctxgauge.errors import UserError
from ctxgauge.metrics import paired_comparison
from ctxgauge.results import Paired, ReplayComparison, ReplayUnit, VsPart
from ctxgauge.suites.replay import comparison, gate


def unit(sha, a, b=..., status="ok"):
    u = ReplayUnit(id=sha, status=status, figures={"recall@5": a, "mrr": a})
    if b is not ...:
        u.vs = VsPart(engine="grep", figures={"recall@5": b, "mrr": b})
    return u


def test_comparison_pairs_ok_units_and_skips_undefined_values():
    units = [unit("a", 1.0, 0.5), unit("b", 0.5, 0.5), unit("c", None, None), unit("d", 0.0, 1.0),
             unit("e", 1.0, 0.0, status="failed")]
    out = comparison(units, ["recall@5"], seed=7, engine="bm25")
    assert isinstance(out, ReplayComparison)
    assert out.engine == "bm25" and out.vs == "grep" and out.seed == 7 and out.commits == 4
    expected = paired_comparison([1.0, 0.5, 0.0], [0.5, 0.5, 1.0], 7).to_dict()
    assert out.metrics["recall@5"] == Paired(**expected)
    assert (expected["wins"], expected["ties"], expected["losses"]) == (1, 1, 1)
    assert expected["mean_diff"] == pytest.approx((0.5 + 0 - 1.0) / 3)
    assert comparison(units, ["recall@5"], seed=7, engine="bm25") == out  # seeded: reproducible
    assert comparison([unit("a", 1.0)], ["recall@5"], seed=0, engine="bm25") is None


def test_gate_on_common_commits_with_the_largest_fall_first():
    baseline = [unit("a", 1.0), unit("b", 0.5), unit("c", 1.0), unit("gone", 1.0)]
    current = [unit("a", 0.5), unit("b", 0.5), unit("c", 0.0), unit("new", 0.0)]
    out = gate(current, baseline, ["recall@5"], max_drop=0.2, baseline_id="run-1")
    assert out.commits == 3 and out.baseline == "run-1"
    (line,) = out.lines
    assert line.baseline == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    assert line.current == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert line.drop == pytest.approx(1.5 / 3) and not line.holds and not out.passed
    assert line.worse == ["c", "a"]
    assert gate(current, baseline, ["recall@5"], max_drop=0.5).passed


def test_gate_refuses_a_baseline_without_common_commits():
    with pytest.raises(UserError, match="scored none of these commits"):
        gate([unit("a", 1.0)], [unit("b", 1.0)], ["recall@5"], max_drop=0.0)


def _ctx(sha, coverage, pair):
    from ctxgauge.results import UnitContext

    return ReplayUnit(id=sha, status="ok", figures={"recall@5": 1.0, "line_coverage_tokens@4000": coverage},
                      context=UnitContext(pairs={"line_coverage_tokens_micro@4000": list(pair)}))


def test_gate_on_context_metrics_macro_means_and_micro_ratios():
    # Macro: the mean of the commits' values; micro: the ratio of sums of their [numerator, denominator].
    baseline = [_ctx("a", 1.0, (4, 4)), _ctx("b", 0.5, (1, 2)), _ctx("c", None, (0, 0))]
    current = [_ctx("a", 0.25, (1, 4)), _ctx("b", 0.5, (1, 2)), _ctx("c", None, (0, 0))]
    out = gate(current, baseline, ["line_coverage_tokens@4000", "line_coverage_tokens_micro@4000"], max_drop=0.3)
    macro, micro = out.lines
    assert (macro.baseline, macro.current) == ((1.0 + 0.5) / 2, (0.25 + 0.5) / 2)
    assert macro.drop == 0.375 and not macro.holds and macro.worse == ["a"]
    assert (micro.baseline, micro.current) == ((4 + 1 + 0) / (4 + 2 + 0), (1 + 1 + 0) / (4 + 2 + 0))
    assert micro.drop == pytest.approx(0.5) and micro.worse == ["a"]


def test_gate_metrics_are_checked_against_what_the_run_scores():
    from ctxgauge.suites._retrieval import ContextSpec
    from ctxgauge.suites.replay._compare import gate_metrics

    ctx = ContextSpec((5,), (1000, 4000))
    assert gate_metrics([], ["recall@5", "mrr"], ctx) == ["recall@5", "mrr"]
    assert gate_metrics(["line_coverage_tokens@4000", "block_coverage_micro@5", "mrr"], ["recall@5", "mrr"],
                        ctx) == ["line_coverage_tokens@4000", "block_coverage_micro@5", "mrr"]
    with pytest.raises(UserError, match="--gate line_coverage_tokens@2000: not a figure this replay scores"):
        gate_metrics(["line_coverage_tokens@2000"], ["recall@5"], ctx)
    with pytest.raises(UserError, match="--gate nonsense"):
        gate_metrics(["nonsense"], ["recall@5"], ctx)


def test_gate_names_pack_recall_which_the_registry_does_not_hold():
    from ctxgauge.suites.replay._compare import gate_metrics

    assert gate_metrics(["pack_recall@5"], ["recall@5", "pack_recall@5"], None) == ["pack_recall@5"]
    base = [ReplayUnit(id="a", status="ok", figures={"pack_recall@5": 1.0})]
    now = [ReplayUnit(id="a", status="ok", figures={"pack_recall@5": 0.5})]
    assert gate(now, base, ["pack_recall@5"], max_drop=0.0).lines[0].drop == 0.5
