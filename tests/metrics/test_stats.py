"""Tests for ctxgauge.metrics.stats.

Exact cases are written as formulas; random procedures are checked against independent oracles (full
enumeration of sign flips, scipy.stats.bootstrap and scipy.stats.permutation_test) within Monte Carlo
tolerances stated next to each check, and for bit-identical repeats under one seed.
"""

from __future__ import annotations

import json
import random
import time
from itertools import product

import numpy as np
import pytest

from ctxgauge.metrics import (
    PairedComparison,
    bootstrap_ci,
    paired_comparison,
    paired_randomization_test,
    win_tie_loss,
)
from ctxgauge.metrics import stats as stats_module


def _paired_scores(seed: int, n: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.clip(a - shift + rng.normal(0.0, 0.2, n), 0.0, 1.0)
    return a, b


def _exact_sign_flip_p(diffs) -> float:
    """Two-sided p over all 2^n sign patterns: the exact null distribution the random test samples."""
    diffs = np.asarray(diffs, dtype=float)
    observed = abs(diffs.sum())
    flips = np.array(list(product((-1.0, 1.0), repeat=diffs.size)))
    return float(np.mean(np.abs(flips @ diffs) >= observed - 1e-9))


# ---------------------------------------------------------------- determinism and RNG hygiene


def test_same_inputs_and_seed_give_identical_outputs():
    a, b = _paired_scores(1, 60, shift=0.05)
    assert bootstrap_ci(a - b, seed=3) == bootstrap_ci(a - b, seed=3)
    assert paired_randomization_test(a, b, seed=3) == paired_randomization_test(a, b, seed=3)
    assert paired_comparison(a, b, seed=3) == paired_comparison(list(a), list(b), seed=3)


def test_another_seed_gives_another_draw():
    a, b = _paired_scores(1, 60, shift=0.05)
    assert bootstrap_ci(a - b, seed=3)[1:] != bootstrap_ci(a - b, seed=4)[1:]


def test_global_rngs_are_neither_used_nor_changed():
    np.random.seed(123)
    random.seed(123)
    numpy_state, python_state = np.random.get_state(), random.getstate()
    a, b = _paired_scores(2, 40)
    first = paired_comparison(a, b, seed=9)
    np.random.seed(999)  # a different global state must not change a seeded result
    random.seed(999)
    assert paired_comparison(a, b, seed=9) == first
    np.random.set_state(numpy_state)
    random.setstate(python_state)
    paired_comparison(a, b, seed=9)
    after = np.random.get_state()
    assert after[0] == numpy_state[0] and np.array_equal(after[1], numpy_state[1]) and after[2:] == numpy_state[2:]
    assert random.getstate() == python_state


def test_block_size_does_not_change_results(monkeypatch):
    a, b = _paired_scores(5, 37, shift=0.02)
    whole = (bootstrap_ci(a - b, seed=8, n_resamples=1000), paired_randomization_test(a, b, seed=8, n_permutations=1000))
    monkeypatch.setattr(stats_module, "_BLOCK_CELLS", 37 * 7)  # blocks of 7 resamples, the last one short
    blocked = (bootstrap_ci(a - b, seed=8, n_resamples=1000), paired_randomization_test(a, b, seed=8, n_permutations=1000))
    assert blocked == whole


def test_inputs_are_not_modified():
    a, b = _paired_scores(6, 30)
    a_copy, b_copy = a.copy(), b.copy()
    paired_comparison(a, b, seed=1)
    assert np.array_equal(a, a_copy) and np.array_equal(b, b_copy)


# ---------------------------------------------------------------- bootstrap


def test_bootstrap_of_constant_values_is_a_point():
    assert bootstrap_ci([0.25] * 12, seed=0) == (0.25, 0.25, 0.25)
    assert bootstrap_ci([0.7], seed=0) == pytest.approx((0.7, 0.7, 0.7))


def test_bootstrap_mean_and_bracketing():
    values = [0.0, 1.0, 0.5, 0.25, 1.0]
    mean, low, high = bootstrap_ci(values, seed=1, n_resamples=2000)
    assert mean == pytest.approx((0.0 + 1.0 + 0.5 + 0.25 + 1.0) / 5)
    assert min(values) <= low <= mean <= high <= max(values)


def test_bootstrap_interval_widens_with_confidence():
    diffs = np.subtract(*_paired_scores(4, 80))
    _, low90, high90 = bootstrap_ci(diffs, seed=2, confidence=0.90)
    _, low99, high99 = bootstrap_ci(diffs, seed=2, confidence=0.99)
    assert low99 < low90 < high90 < high99


def test_bootstrap_matches_scipy_percentile_method():
    scipy_stats = pytest.importorskip("scipy.stats")
    diffs = np.subtract(*_paired_scores(7, 50, shift=0.03))
    mean, low, high = bootstrap_ci(diffs, seed=11, n_resamples=20000)
    ref = scipy_stats.bootstrap(
        (diffs,), np.mean, n_resamples=20000, confidence_level=0.95, method="percentile",
        rng=np.random.default_rng(12),
    ).confidence_interval
    # Monte Carlo error of a 2.5% quantile from 20k resamples is about 0.03 standard errors of the mean
    # per side; 0.2 standard errors is over 4 sigma of the difference of two independent estimates.
    tolerance = 0.2 * diffs.std(ddof=1) / np.sqrt(diffs.size)
    assert low == pytest.approx(ref.low, abs=tolerance)
    assert high == pytest.approx(ref.high, abs=tolerance)
    assert mean == pytest.approx(diffs.mean())


def test_bootstrap_is_close_to_the_normal_interval_for_a_large_sample():
    diffs = np.random.default_rng(3).normal(0.1, 1.0, 2000)
    mean, low, high = bootstrap_ci(diffs, seed=5)
    half_width = 1.959963984540054 * diffs.std(ddof=0) / np.sqrt(diffs.size)
    assert low == pytest.approx(mean - half_width, rel=0.05)
    assert high == pytest.approx(mean + half_width, rel=0.05)


# ---------------------------------------------------------------- randomization test


def test_p_value_of_no_difference_is_one():
    # Every flip of all-zero differences is as extreme as the observed 0: p = (1 + n) / (1 + n).
    assert paired_randomization_test([0.5] * 10, [0.5] * 10, seed=0, n_permutations=500) == 1.0


def test_p_value_floor_is_one_over_n_plus_one():
    a, b = np.ones(200), np.zeros(200)  # no flip but all-plus (or all-minus) reaches |mean| = 1
    p = paired_randomization_test(a, b, seed=0, n_permutations=999)
    assert p == pytest.approx((1 + 0) / (1 + 999))


def test_p_value_matches_exact_enumeration():
    diffs = [0.3, -0.1, 0.25, 0.0, 0.4, -0.2, 0.15, 0.05, 0.35, -0.05]
    exact = _exact_sign_flip_p(diffs)
    p = paired_randomization_test(diffs, [0.0] * len(diffs), seed=21, n_permutations=20000)
    # Exact p = 0.129; its standard error from 20k draws is about 0.0024, so 0.01 is about 4 sigma.
    assert p == pytest.approx(exact, abs=0.01)


def test_p_value_of_identical_shifts_matches_its_formula():
    # Ten equal differences: only all-plus and all-minus reach the observed |mean|, exact p = 2 / 2^10.
    p = paired_randomization_test([0.2] * 10, [0.0] * 10, seed=4, n_permutations=50000)
    assert p == pytest.approx(2 / 2**10, abs=0.001)


def test_p_value_matches_scipy_permutation_test():
    scipy_stats = pytest.importorskip("scipy.stats")
    a, b = _paired_scores(8, 30, shift=0.04)
    p = paired_randomization_test(a, b, seed=13, n_permutations=20000)
    ref = scipy_stats.permutation_test(
        (a, b), lambda x, y, axis: np.abs(np.mean(x - y, axis=axis)), permutation_type="samples",
        vectorized=True, n_resamples=20000, alternative="greater", rng=np.random.default_rng(14),
    )
    # permutation_type="samples" swaps a_i and b_i: a sign flip of a_i - b_i. 2^30 patterns, so scipy
    # samples too; two independent estimates of a p near 0.37 differ with sd 0.005, so 0.02 is 4 sigma.
    assert p == pytest.approx(ref.pvalue, abs=0.02)


def test_p_value_is_symmetric_in_a_and_b():
    a, b = _paired_scores(9, 25, shift=0.03)
    assert paired_randomization_test(a, b, seed=1) == paired_randomization_test(b, a, seed=1)


# ---------------------------------------------------------------- win / tie / loss


def test_win_tie_loss():
    a = [0.9, 0.5, 0.5, 0.1, 0.30]
    b = [0.1, 0.5, 0.6, 0.2, 0.31]
    assert win_tie_loss(a, b) == (1, 1, 3)
    assert win_tie_loss(a, b, tol=0.05) == (1, 2, 2)  # 0.30 vs 0.31 becomes a tie
    assert win_tie_loss(a, b, higher_is_better=False) == (3, 1, 1)
    assert sum(win_tie_loss(a, b, tol=0.2)) == len(a)
    with pytest.raises(ValueError):
        win_tie_loss(a, b, tol=-0.1)


# ---------------------------------------------------------------- paired comparison


def test_paired_comparison_fields():
    a = [1.0, 0.5, 0.0, 1.0, 0.25]
    b = [0.5, 0.5, 0.0, 0.0, 0.75]
    result = paired_comparison(a, b, seed=17, n_resamples=2000)
    assert isinstance(result, PairedComparison)
    assert result.n == 5
    assert result.mean_a == pytest.approx((1.0 + 0.5 + 0.0 + 1.0 + 0.25) / 5)
    assert result.mean_b == pytest.approx((0.5 + 0.5 + 0.0 + 0.0 + 0.75) / 5)
    assert result.mean_diff == pytest.approx((0.5 + 0 + 0 + 1.0 - 0.5) / 5)
    assert (result.wins, result.ties, result.losses) == (2, 2, 1)
    assert (result.seed, result.n_resamples, result.confidence) == (17, 2000, 0.95)
    # The same as the parts, with the same seed: a report can be reproduced piece by piece.
    diffs = np.subtract(a, b)
    assert (result.mean_diff, result.ci_low, result.ci_high) == bootstrap_ci(diffs, seed=17, n_resamples=2000)
    assert result.p_value == paired_randomization_test(a, b, seed=17, n_permutations=2000)


def test_paired_comparison_detects_a_real_difference_and_not_a_null_one():
    better = paired_comparison(*_paired_scores(10, 200, shift=0.1), seed=1)
    assert better.ci_low > 0 and better.p_value < 0.01 and better.wins > better.losses
    same = paired_comparison(*_paired_scores(10, 200, shift=0.0), seed=1)
    assert same.ci_low < 0 < same.ci_high and same.p_value > 0.05


def test_to_dict_is_plain_json():
    result = paired_comparison(*_paired_scores(11, 20), seed=2, n_resamples=500)
    data = result.to_dict()
    assert list(data) == [
        "n", "mean_a", "mean_b", "mean_diff", "ci_low", "ci_high", "p_value", "wins", "ties", "losses",
        "seed", "n_resamples", "confidence",
    ]
    assert all(type(v) in (int, float) for v in data.values())  # no numpy scalars in records
    assert PairedComparison(**json.loads(json.dumps(data))) == result


def test_ten_thousand_resamples_over_two_hundred_pairs_is_fast():
    a, b = _paired_scores(12, 200)
    start = time.perf_counter()
    paired_comparison(a, b, seed=0, n_resamples=10000)
    # About 0.1 s vectorised; a per-resample Python loop takes several seconds.
    assert time.perf_counter() - start < 2.0


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call",
    [
        lambda: bootstrap_ci([], seed=0),
        lambda: bootstrap_ci([0.1, float("nan")], seed=0),
        lambda: bootstrap_ci([[0.1, 0.2]], seed=0),
        lambda: bootstrap_ci([0.1], seed=0, confidence=1.0),
        lambda: bootstrap_ci([0.1], seed=0, n_resamples=0),
        lambda: bootstrap_ci([0.1], seed=-1),
        lambda: bootstrap_ci([0.1], seed=np.random.default_rng(0)),
        lambda: paired_randomization_test([0.1, 0.2], [0.1], seed=0),
        lambda: paired_randomization_test([], [], seed=0),
        lambda: paired_randomization_test([0.1], [float("inf")], seed=0),
        lambda: paired_comparison([0.1], [0.1, 0.2], seed=0),
        lambda: paired_comparison([0.1], [0.2], seed=1.5),
        lambda: win_tie_loss([0.1], [0.1, 0.2]),
    ],
)
def test_bad_input_is_refused(call):
    with pytest.raises(ValueError):
        call()


def test_cohens_d_is_the_mean_difference_over_the_pooled_sd():
    from statistics import fmean, variance

    from ctxgauge.metrics import cohens_d

    a, b = [100.0, 100.0, 0.0, 100.0, 0.0], [0.0, 100.0, 0.0, 0.0, 0.0]
    pooled = ((variance(a) + variance(b)) / 2) ** 0.5
    assert cohens_d(a, b) == pytest.approx((fmean(a) - fmean(b)) / pooled)
    assert cohens_d(b, a) == pytest.approx(-cohens_d(a, b))
    assert cohens_d([1.0, 1.0], [1.0, 1.0]) == 0.0  # no difference, no spread
    assert cohens_d([1.0, 1.0], [0.0, 0.0]) is None  # an infinite effect is not published
    assert cohens_d([1.0], [0.0]) is None  # one pair has no spread to measure


def test_clustered_bootstrap_of_one_group_is_the_plain_bootstrap():
    from ctxgauge.metrics.stats import bootstrap_ci, clustered_bootstrap_ci

    values = [1.0, 0.0, 1.0, 1.0, 0.0, 0.5, 1.0]
    assert clustered_bootstrap_ci([values], 7, 500) == bootstrap_ci(values, 7, 500)


def test_clustered_bootstrap_widens_when_groups_disagree_and_is_seeded():
    from ctxgauge.metrics.stats import bootstrap_ci, clustered_bootstrap_ci

    groups = [[0.1, 0.2, 0.15] * 10, [0.8, 0.9, 0.85] * 10]
    mean, low, high = clustered_bootstrap_ci(groups, 3, 400)
    _, flat_low, flat_high = bootstrap_ci(groups[0] + groups[1], 3, 400)
    assert mean == pytest.approx(0.5)
    # A quarter of the resamples draw the low group twice (and a quarter the high one), so the 2.5% and
    # 97.5% quantiles fall inside the groups' own ranges, far outside the pooled bootstrap's interval.
    assert low < flat_low and high > flat_high and 0.1 <= low <= 0.2 and 0.8 <= high <= 0.9
    assert clustered_bootstrap_ci(groups, 3, 400) == (mean, low, high)
    with pytest.raises(ValueError):
        clustered_bootstrap_ci([], 0)


def test_the_point_means_are_the_suites_own_means_to_the_last_bit():
    # A logrus replay showed precision@10 0.118 in "Every metric" and 0.117 in the paired table: the summary
    # is `mean_over` (math.fsum), the comparison was numpy's pairwise mean, 0.1175 either side of the bit.
    from ctxgauge.metrics.ranking import mean_over
    from ctxgauge.metrics.stats import bootstrap_ci, clustered_bootstrap_ci, paired_comparison

    rng = np.random.default_rng(3)
    differed = 0
    for _ in range(50):
        a = [float(v) for v in rng.integers(0, 3, 40) / 10]
        b = [float(v) for v in rng.integers(0, 3, 40) / 10]
        differed += float(np.asarray(a).mean()) != mean_over(a)
        c = paired_comparison(a, b, seed=0, n_resamples=20)
        assert (c.mean_a, c.mean_b) == (mean_over(a), mean_over(b))
        assert bootstrap_ci(a, seed=0, n_resamples=20)[0] == mean_over(a)
        assert clustered_bootstrap_ci([a[:15], a[15:]], seed=0, n_resamples=20)[0] == mean_over(a)
    assert differed  # the inputs do tell the two sums apart
