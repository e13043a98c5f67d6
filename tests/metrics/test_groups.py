"""Rank groups of tied systems (issue 35 item 5), against p-values counted by hand."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

from ctxgauge.metrics.groups import holm, sign_flip_p, tied_groups
from ctxgauge.metrics.stats import paired_randomization_test


def brute_p(a, b) -> Fraction:
    """Exact two-sided sign-flip p over every one of the 2**n patterns (zeros included), in exact fractions."""
    diffs = [Fraction(x) - Fraction(y) for x, y in zip(a, b)]
    observed = abs(sum(diffs))
    patterns = list(product((1, -1), repeat=len(diffs)))
    extreme = sum(1 for s in patterns if abs(sum(si * d for si, d in zip(s, diffs))) >= observed)
    return Fraction(extreme, len(patterns))


# Four systems over 13 units: A perfect, B misses one unit, C misses the first seven, D misses everything.
A = [1] * 13
B = [1] * 12 + [0]
C = [0] * 7 + [1] * 6
D = [0] * 13


def test_four_systems_fall_into_the_groups_counted_by_hand():
    # By hand: A-B has one nonzero difference, so both of its 2 sign patterns are as extreme: p = 1.
    # A-C: seven +1s, only all-plus and all-minus reach |7|: p = 2/2**7. A-D: 2/2**13.
    assert brute_p(A, B) == 1
    assert brute_p(A, C) == Fraction(2, 2 ** 7)
    assert brute_p(A, D) == Fraction(2, 2 ** 13)
    # Holm over the three tests against A: smallest x3, next x2, last x1 (monotone): D 6/8192, C 1/32, B 1.
    # So group 1 = {A, B}; then C anchors: C-D has six +1s, p = 2/64 = 1/32 < 0.05 (one test, no adjustment),
    # so D is not tied with C: group 3.
    assert brute_p(C, D) == Fraction(1, 32)
    got = tied_groups({"A": A, "B": B, "C": C, "D": D}, seed=0)
    assert got.group == {"A": 1, "B": 1, "C": 2, "D": 3}
    assert got.n == 13
    assert got.anchors == ["A", "C", "D"]
    assert got.p_adjusted == {"A": None, "B": 1.0, "C": None, "D": None}
    # The p of each pair, as the function computes it, equals the exact count.
    for x, y in ((A, B), (A, C), (A, D), (C, D)):
        assert sign_flip_p(x, y) == float(brute_p(x, y))


def test_mixed_signs_and_zeros_match_the_exhaustive_count():
    a = [0.5, 0.25, 1.0, 0.75, 0.3, 0.0, 0.9, 0.4]
    b = [0.0, 0.5, 0.25, 0.0, 0.3, 0.5, 0.1, 0.4]
    assert sign_flip_p(a, b) == float(brute_p(a, b))
    assert 0.0 < sign_flip_p(a, b) < 1.0


def test_groups_where_the_runner_up_is_tied_only_after_holm():
    # Three challengers against a best system: raw p of the two close ones is below 0.05, but Holm's x3/x2
    # lifts one of them above it.
    best = [1] * 7 + [0] * 3
    close = [0] * 6 + [1, 0, 0, 0] + [0] * 0  # six +1 differences: p = 2/64
    far = [0] * 10  # seven +1 differences: p = 2/128
    near = [1] * 7 + [0, 0, 0]  # identical: p = 1
    raw = {"close": brute_p(best, close), "far": brute_p(best, far), "near": brute_p(best, near)}
    assert raw == {"close": Fraction(1, 32), "far": Fraction(1, 64), "near": 1}
    # Holm: far 3/64 (< .05), close max(2/32, 3/64) = 1/16 (>= .05), near 1.
    assert holm([float(raw["close"]), float(raw["far"]), 1.0]) == [1 / 16, 3 / 64, 1.0]
    got = tied_groups({"best": best, "close": close, "far": far, "near": near})
    assert got.group == {"best": 1, "close": 1, "near": 1, "far": 2}
    assert got.p_adjusted["close"] == 1 / 16


def test_holm_by_hand():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]
    assert holm([]) == []
    assert holm([0.9, 0.9]) == [1.0, 1.0]


def test_lower_is_better_ranks_the_cheapest_first():
    cost = {"cheap": [1] * 13, "dear": [2] * 13, "mid": [1] * 12 + [2]}
    got = tied_groups(cost, higher_is_better=False)
    assert got.group == {"cheap": 1, "mid": 1, "dear": 2}


def test_many_units_use_the_seeded_randomization_test():
    a = [float(i % 3) for i in range(40)]
    b = [float((i + 1) % 3) for i in range(40)]
    assert sign_flip_p(a, b, seed=7, n_resamples=500) == paired_randomization_test(a, b, 7, 500)
    assert tied_groups({"a": a, "b": b, "c": b}, seed=7) == tied_groups({"c": b, "b": b, "a": a}, seed=7)


def test_systems_must_share_the_units():
    with pytest.raises(ValueError):
        tied_groups({"a": [1, 0], "b": [1]})
    with pytest.raises(ValueError):
        tied_groups({"a": [], "b": []})
