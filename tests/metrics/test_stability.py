"""Tests for ctxgauge.metrics.stability (ContextBenchmark's determinism metrics).

Hand-computed values are written as formulas; Kendall tau-a is checked against a brute-force pair count
written here and against scipy.stats.kendalltau on tie-free data (where tau-b equals tau-a).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from ctxgauge.metrics import (
    exact_match,
    exact_match_rate,
    jaccard_at_k,
    kendall_tau_a,
    mean_pairwise_jaccard,
    mean_pairwise_tau,
)

A = ["a", "b", "c", "d"]
B = ["b", "a", "c", "d"]  # first two swapped: one discordant pair of six
C = ["a", "b", "e", "f"]


# ---------------------------------------------------------------- exact match


def test_exact_match():
    assert exact_match(A, tuple(A))
    assert not exact_match(A, B)  # same set, other order
    assert not exact_match(A, A[:3])  # a prefix is not a match
    assert exact_match([], [])


def test_exact_match_rate_counts_trials_equal_to_the_first():
    assert exact_match_rate([A, A, B, A]) == 3 / 4
    assert exact_match_rate([B, A, A]) == 1 / 3  # the first trial is the reference, even when a minority
    assert exact_match_rate([A]) == 1.0
    assert exact_match_rate([[], []]) == 1.0
    with pytest.raises(ValueError):
        exact_match_rate([])


# ---------------------------------------------------------------- Jaccard


@pytest.mark.parametrize(
    ("a", "b", "k", "expected"),
    [
        (A, B, 4, 4 / 4),
        (A, B, 1, 0 / 2),  # {a} vs {b}
        (A, C, 4, 2 / 6),  # {a,b} shared of {a,b,c,d,e,f}
        (A, C, 2, 2 / 2),
        (A, C, 3, 2 / 4),  # {a,b,c} vs {a,b,e}
        (A, C, 100, 2 / 6),  # k beyond both lengths
        (A, [], 3, 0 / 3),
        ([], [], 10, 1.0),  # both empty: the same (empty) answer
    ],
)
def test_jaccard_at_k(a, b, k, expected):
    assert jaccard_at_k(a, b, k) == pytest.approx(expected)
    assert jaccard_at_k(b, a, k) == pytest.approx(expected)


@pytest.mark.parametrize("k", [0, -1, 1.5, True, None])
def test_jaccard_rejects_bad_k(k):
    with pytest.raises(ValueError):
        jaccard_at_k(A, B, k)


# ---------------------------------------------------------------- Kendall tau-a


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (A, A, 1.0),
        (A, A[::-1], -1.0),
        (A, B, (5 - 1) / (4 * 3 / 2)),
        # shared, in a's order: a, b (e, f and c, d unshared) and kept in order
        (A, C, 1.0),
        # shared in a's order: a, b, c; their positions in b are 3, 1, 0: all three pairs discordant
        (["a", "x", "b", "c"], ["c", "b", "y", "a"], (0 - 3) / 3),
        # shared a, b, c, d; b order d, a, b, c: pairs with d discordant (3), the rest concordant (3)
        (A, ["d", "a", "b", "c"], (3 - 3) / 6),
    ],
)
def test_kendall_tau_a_hand_computed(a, b, expected):
    assert kendall_tau_a(a, b) == pytest.approx(expected)


@pytest.mark.parametrize(("a", "b"), [(A, ["z"]), (A, ["c"]), ([], []), (A, []), (["a"], ["a"])])
def test_kendall_tau_a_is_one_with_fewer_than_two_shared(a, b):
    assert kendall_tau_a(a, b) == 1.0


def _brute_force_tau_a(a, b):
    """The definition, pair by pair: independent of the merge-sort count in the code under test."""
    in_b = {p: i for i, p in enumerate(b)}
    shared = [p for p in a if p in in_b]
    if len(shared) < 2:
        return 1.0
    score = sum(1 if in_b[x] < in_b[y] else -1 for x, y in combinations(shared, 2))
    return score / (len(shared) * (len(shared) - 1) / 2)


def _seeded_pairs(seed: int, count: int):
    rng = np.random.default_rng(seed)
    corpus = [f"f{i}.py" for i in range(80)]
    for _ in range(count):
        a = [str(p) for p in rng.choice(corpus, size=int(rng.integers(0, 61)), replace=False)]
        b = [str(p) for p in rng.choice(corpus, size=int(rng.integers(0, 61)), replace=False)]
        yield a, b


def test_kendall_tau_a_matches_the_pairwise_definition():
    for a, b in _seeded_pairs(7, 200):
        assert kendall_tau_a(a, b) == pytest.approx(_brute_force_tau_a(a, b), abs=1e-12)


def test_kendall_tau_a_matches_scipy_on_tie_free_data():
    scipy_stats = pytest.importorskip("scipy.stats")
    compared = 0
    for a, b in _seeded_pairs(11, 200):
        in_b = {p: i for i, p in enumerate(b)}
        positions = [in_b[p] for p in a if p in in_b]
        if len(positions) < 2:
            continue
        # Unique paths: no ties, so scipy's tau-b is tau-a.
        expected = scipy_stats.kendalltau(np.arange(len(positions)), positions).statistic
        assert kendall_tau_a(a, b) == pytest.approx(expected, abs=1e-12)
        compared += 1
    assert compared >= 150  # the comparison is not vacuous


def test_kendall_tau_a_is_symmetric():
    for a, b in _seeded_pairs(13, 50):
        assert kendall_tau_a(a, b) == pytest.approx(kendall_tau_a(b, a), abs=1e-12)


# ---------------------------------------------------------------- mean pairwise


def test_mean_pairwise_jaccard():
    expected = (jaccard_at_k(A, B, 3) + jaccard_at_k(A, C, 3) + jaccard_at_k(B, C, 3)) / 3
    assert expected == pytest.approx((1 + 2 / 4 + 2 / 4) / 3)  # {a,b,c},{b,a,c},{a,b,e}
    assert mean_pairwise_jaccard([A, B, C], 3) == pytest.approx(expected)


def test_mean_pairwise_tau():
    expected = ((5 - 1) / 6 + 1.0 + (0 - 1) / 1) / 3  # A~B, A~C share a,b in order, B~C share b,a reversed
    assert mean_pairwise_tau([A, B, C]) == pytest.approx(expected)


@pytest.mark.parametrize("trials", [[], [A]])
def test_mean_pairwise_is_one_with_fewer_than_two_trials(trials):
    assert mean_pairwise_jaccard(trials, 10) == 1.0
    assert mean_pairwise_tau(trials) == 1.0


def test_identical_trials_are_perfectly_stable():
    trials = [list(A)] * 5
    assert exact_match_rate(trials) == mean_pairwise_jaccard(trials, 4) == mean_pairwise_tau(trials) == 1.0


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call",
    [
        lambda: exact_match(["a", "a"], ["a"]),
        lambda: jaccard_at_k(["a"], ["b", "b"], 2),
        lambda: kendall_tau_a(["a", "b", "a"], ["a", "b"]),
        lambda: exact_match_rate([A, ["x", "x"]]),
        lambda: mean_pairwise_jaccard([A, ["x", "x"]], 3),
        lambda: mean_pairwise_tau([["x", "x"], A]),
    ],
)
def test_duplicated_paths_are_refused(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: exact_match("ab", ["a", "b"]),
        lambda: kendall_tau_a(A, [("a", 1.0)]),
        lambda: exact_match_rate("abc"),
        lambda: mean_pairwise_tau(["ab", "ba"]),
    ],
)
def test_wrong_input_types_are_refused(call):
    with pytest.raises(TypeError):
        call()
