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
