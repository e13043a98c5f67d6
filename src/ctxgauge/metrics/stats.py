"""Paired statistics for comparing two engines (or two settings) on the same units.

Every random procedure takes a `seed` and draws only from its own ``numpy.random.default_rng(seed)``;
nothing here touches numpy's or Python's global RNG, so the same inputs and seed give bit-identical
outputs, and measuring one engine's determinism cannot be disturbed by another's statistics.

Resampling is vectorised: a block of resamples is one index (or sign) matrix and one row-wise reduction.
Blocks bound memory for large inputs; they are drawn in sequence from the one generator, so the result
does not depend on the block size (tested).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = [
    "ClusteredDraws",
    "PairedComparison",
    "bootstrap_ci",
    "cohens_d",
    "clustered_bootstrap_ci",
    "paired_comparison",
    "paired_randomization_test",
    "paired_ratio_comparison",
    "win_tie_loss",
]

# Upper bound on matrix cells per block (about 32 MiB of int64 indices, plus as much for the values).
_BLOCK_CELLS = 1 << 22


def _as_values(values: Sequence[float], what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)  # a copy or a read-only view: inputs are never modified
    if array.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{what} is empty: nothing to compare")
    if not np.all(np.isfinite(array)):
        # A None turned NaN (an undefined metric) must be dropped by the caller for both sides of a pair,
        # not averaged into a NaN interval.
        raise ValueError(f"{what} holds NaN or infinite values; drop undefined units from both sides first")
    return array


def _as_pairs(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = _as_values(a, "a"), _as_values(b, "b")
    if x.size != y.size:
        raise ValueError(f"paired samples differ in length: {x.size} vs {y.size}")
    return x, y


def _check_count(n: int, what: str) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{what} must be an int >= 1, got {n!r}")


def _check_seed(seed: int) -> int:
    # A plain int only: it goes into run records, and a Generator or SeedSequence there could not be replayed.
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    return int(seed)


def _mean(data: np.ndarray) -> float:
    # The point estimate is the same float as the suite's own mean (`ranking.mean_over`, math.fsum): numpy's
    # pairwise sum differs in the last bit, and 0.1175 then read 0.118 in one table and 0.117 in the next.
    return math.fsum(data.tolist()) / data.size


def _blocks(total: int, width: int) -> list[tuple[int, int]]:
    rows = max(1, _BLOCK_CELLS // width)
    return [(start, min(start + rows, total)) for start in range(0, total, rows)]


def bootstrap_ci(
    values: Sequence[float], seed: int, n_resamples: int = 10000, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Percentile bootstrap interval for the mean of `values`: ``(mean, low, high)``.

    For a paired comparison pass the per-unit differences a - b. Each of `n_resamples` resamples draws
    len(values) units with replacement; low and high are the (1 - confidence)/2 and (1 + confidence)/2
    quantiles (linear interpolation) of the resampled means. `mean` is the plain mean of `values`.
    """
    data = _as_values(values, "values")
    _check_count(n_resamples, "n_resamples")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    rng = np.random.default_rng(_check_seed(seed))
    n = data.size
    means = np.empty(n_resamples)
    for start, stop in _blocks(n_resamples, n):
        index = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = data[index].mean(axis=1)
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1.0 - alpha / 2])
    return _mean(data), float(low), float(high)


def clustered_bootstrap_ci(
    groups: Sequence[Sequence[float]], seed: int, n_resamples: int = 2000, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Two-stage percentile bootstrap of the pooled mean of grouped values: ``(mean, low, high)``.

    For units nested in clusters (commits within repositories): each resample draws len(groups) groups with
    replacement, then, within each group drawn, as many of its values as it holds, with replacement; the
    statistic is the mean of everything drawn. So the interval widens when groups disagree, which a
    bootstrap over the pooled values alone would hide. `mean` is the plain mean of all values. The draws
    come from one generator in a fixed order (per resample: the group choices, then each drawn group's values).
    """
    arrays = [_as_values(g, f"group {i}") for i, g in enumerate(groups)]
    if not arrays:
        raise ValueError("groups is empty: nothing to resample")
    _check_count(n_resamples, "n_resamples")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    rng = np.random.default_rng(_check_seed(seed))
    r = len(arrays)
    means = np.empty(n_resamples)
    # One resample at a time (a few draws each): memory stays that of the data however large the groups.
    for b in range(n_resamples):
        total = count = 0.0
        for g in rng.integers(0, r, size=r):
            data = arrays[g]
            total += float(data[rng.integers(0, data.size, size=data.size)].sum())
            count += data.size
        means[b] = total / count
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1.0 - alpha / 2])
    pooled = np.concatenate(arrays)
    return _mean(pooled), float(low), float(high)


class ClusteredDraws:
    """The draws `clustered_bootstrap_ci` makes for groups of the given sizes and seed, made once and read
    for many figures: every figure whose defined values have those group sizes gets the interval
    `clustered_bootstrap_ci` gives it (the same generator calls in the same order; sums taken with numpy,
    so equal to a few ulps), and a ratio of sums (`ratio_ci`) is resampled on the very same draws."""

    def __init__(self, sizes: Sequence[int], seed: int, n_resamples: int = 2000, confidence: float = 0.95):
        if not sizes or any(int(n) < 1 for n in sizes):
            raise ValueError("every group needs at least one value")
        _check_count(n_resamples, "n_resamples")
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
        rng = np.random.default_rng(_check_seed(seed))
        self.sizes = tuple(int(n) for n in sizes)
        self.n_resamples, self.confidence = n_resamples, confidence
        offsets = np.cumsum((0, *self.sizes))
        r = len(self.sizes)
        which: list[np.ndarray] = []
        owner: list[np.ndarray] = []
        for b in range(n_resamples):
            for g in rng.integers(0, r, size=r):
                n = self.sizes[g]
                which.append(offsets[g] + rng.integers(0, n, size=n))
                owner.append(np.full(n, b))
        self._which = np.concatenate(which)
        self._owner = np.concatenate(owner)

    def _sums(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self._owner, weights=values[self._which], minlength=self.n_resamples)

    def _interval(self, stats: np.ndarray) -> tuple[float, float]:
        alpha = 1.0 - self.confidence
        low, high = np.quantile(stats, [alpha / 2, 1.0 - alpha / 2])
        return float(low), float(high)

    def _flat(self, groups: Sequence[Sequence[float]], what: str) -> np.ndarray:
        if tuple(len(g) for g in groups) != self.sizes:
            raise ValueError(f"{what}: group sizes differ from the draws'")
        return np.concatenate([_as_values(g, f"group {i}") for i, g in enumerate(groups)])

    def mean_ci(self, groups: Sequence[Sequence[float]]) -> tuple[float, float, float]:
        """`clustered_bootstrap_ci(groups, seed)` on these draws: `(mean, low, high)`."""
        values = self._flat(groups, "values")
        counts = self._sums(np.ones_like(values))
        return _mean(values), *self._interval(self._sums(values) / counts)

    def ratio_ci(self, num: Sequence[Sequence[float]], den: Sequence[Sequence[float]]) -> tuple[float, float, float]:
        """A ratio of sums (a micro average) over the groups, `(ratio, low, high)`: each resample's ratio
        is the sum of the numerators drawn over the sum of their denominators (0 over a zero sum)."""
        n, d = self._flat(num, "numerators"), self._flat(den, "denominators")
        total = float(math.fsum(d))
        sn, sd = self._sums(n), self._sums(d)
        ratios = np.divide(sn, sd, out=np.zeros_like(sn), where=sd != 0)
        return (float(math.fsum(n)) / total if total else 0.0), *self._interval(ratios)


def paired_randomization_test(
    a: Sequence[float], b: Sequence[float], seed: int, n_permutations: int = 10000
) -> float:
    """Two-sided paired randomization (sign-flip) test of mean(a - b) = 0; returns the p-value.

    Under the null each unit's difference is as likely to have either sign, so each permutation flips
    every difference's sign with probability 1/2 and the statistic is |mean of the flipped differences|.
    The observed assignment is counted as one of the permutations, p = (1 + #extreme) / (1 + n_permutations),
    so p is never 0 and the test stays valid with few permutations.
    """
    x, y = _as_pairs(a, b)
    _check_count(n_permutations, "n_permutations")
    diffs = x - y
    n = diffs.size
    observed = abs(float(diffs.sum()))
    # A flip pattern that reproduces the observed statistic must count as extreme, but the row sums below
    # and the 1-D sum above may round differently; without this slack an exact tie could be missed.
    slack = 1e-9 * max(1.0, float(np.abs(diffs).sum()))
    rng = np.random.default_rng(_check_seed(seed))
    extreme = 0
    for start, stop in _blocks(n_permutations, n):
        signs = rng.integers(0, 2, size=(stop - start, n)) * 2 - 1
        flipped = np.abs((signs * diffs).sum(axis=1))
        extreme += int(np.count_nonzero(flipped >= observed - slack))
    return (1 + extreme) / (1 + n_permutations)


def win_tie_loss(
    a: Sequence[float], b: Sequence[float], tol: float = 0.0, *, higher_is_better: bool = True
) -> tuple[int, int, int]:
    """Count units where `a` beats, ties or loses to `b`: ``(wins, ties, losses)`` from a's side.

    A unit is a tie when |a - b| <= tol. With higher_is_better=False (a cost such as latency), lower wins.
    """
    x, y = _as_pairs(a, b)
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol!r}")
    diffs = x - y if higher_is_better else y - x
    wins = int(np.count_nonzero(diffs > tol))
    losses = int(np.count_nonzero(diffs < -tol))
    return wins, diffs.size - wins - losses, losses


@dataclass(frozen=True)
class PairedComparison:
    """A paired comparison of system A against system B over the same n units (differences are a - b)."""

    n: int
    """Number of paired units."""
    mean_a: float
    """Mean score of A."""
    mean_b: float
    """Mean score of B."""
    mean_diff: float
    """Mean of the per-unit differences a - b (equal to mean_a - mean_b up to rounding)."""
    ci_low: float
    """Lower end of the percentile bootstrap interval of mean_diff (see `bootstrap_ci`)."""
    ci_high: float
    """Upper end of that interval."""
    p_value: float
    """Two-sided paired randomization test p-value (see `paired_randomization_test`)."""
    wins: int
    """Units where A beats B by more than the tie tolerance."""
    ties: int
    """Units within the tie tolerance."""
    losses: int
    """Units where B beats A by more than the tie tolerance."""
    seed: int
    """Seed given to both the bootstrap and the randomization test; rerunning with it reproduces them."""
    n_resamples: int
    """Bootstrap resamples, also used as the number of random sign-flip permutations."""
    confidence: float
    """Confidence level of [ci_low, ci_high]."""

    def to_dict(self) -> dict[str, int | float]:
        """Plain JSON-ready dict of every field, in declaration order."""
        return asdict(self)


def paired_comparison(
    a: Sequence[float],
    b: Sequence[float],
    seed: int,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    tol: float = 0.0,
    *,
    higher_is_better: bool = True,
) -> PairedComparison:
    """Compare paired scores of A and B: means, bootstrap interval and p-value of a - b, win/tie/loss.

    Equivalent to calling `bootstrap_ci(a - b, seed, n_resamples, confidence)`,
    `paired_randomization_test(a, b, seed, n_resamples)` and `win_tie_loss(a, b, tol, ...)`; the one seed
    is recorded so a report can be reproduced exactly.
    """
    x, y = _as_pairs(a, b)
    seed = _check_seed(seed)
    mean_diff, low, high = bootstrap_ci(x - y, seed, n_resamples, confidence)
    p_value = paired_randomization_test(x, y, seed, n_resamples)
    wins, ties, losses = win_tie_loss(x, y, tol, higher_is_better=higher_is_better)
    return PairedComparison(
        n=int(x.size),
        mean_a=_mean(x),
        mean_b=_mean(y),
        mean_diff=mean_diff,
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        wins=wins,
        ties=ties,
        losses=losses,
        seed=seed,
        n_resamples=n_resamples,
        confidence=confidence,
    )


def cohens_d(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cohen's d of paired scores A against B: the mean difference over the pooled standard deviation,
    sqrt((var(a) + var(b)) / 2) with sample variances (ddof 1), so it reads on the scores' own spread
    (Cohen's d_av, comparable across designs) rather than on the spread of the differences.

    0.0 when both sides are constant and equal; None when it is undefined: fewer than two pairs, or
    constant sides that differ (an infinite effect is not a number to publish)."""
    x, y = _as_pairs(a, b)
    if x.size < 2:
        return None
    diff = float((x - y).mean())
    pooled = float(np.sqrt((x.var(ddof=1) + y.var(ddof=1)) / 2))
    if pooled == 0.0:
        return 0.0 if diff == 0.0 else None
    return diff / pooled


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Row-wise sum(num) / sum(den), 0 where the denominator sums to 0 (an empty context scores 0)."""
    n, d = num.sum(axis=-1), den.sum(axis=-1)
    return np.divide(n, d, out=np.zeros_like(n, dtype=float), where=d != 0)


def paired_ratio_comparison(
    a: Sequence[tuple[float, float]],
    b: Sequence[tuple[float, float]],
    seed: int,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    *,
    higher_is_better: bool = True,
) -> PairedComparison:
    """`paired_comparison` of a micro average: each unit gives each side a (numerator, denominator) pair,
    and a side's figure is the ratio of sums (sum of numerators / sum of denominators, 0 over a zero sum).

    mean_a and mean_b are those ratios, mean_diff their difference. The interval resamples units with
    replacement and recomputes both ratios on each resample (percentile bootstrap of the difference of
    ratios); the p-value swaps the two sides' pairs within each unit with probability 1/2 (the paired
    randomization test of a ratio statistic, the observed assignment counted once); wins, ties and losses
    compare the units' own ratios. One seed, drawn from in that order, as `paired_comparison` does.
    """
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    pa = np.asarray(a, dtype=float).reshape(-1, 2)
    pb = np.asarray(b, dtype=float).reshape(-1, 2)
    for arr, what in ((pa, "a"), (pb, "b")):
        _as_values(arr.ravel(), what)
    _check_count(n_resamples, "n_resamples")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    seed = _check_seed(seed)
    na, da, nb, db = pa[:, 0], pa[:, 1], pb[:, 0], pb[:, 1]
    n = na.size
    ra, rb = float(_ratio(na, da)), float(_ratio(nb, db))
    observed = ra - rb
    rng = np.random.default_rng(seed)
    diffs = np.empty(n_resamples)
    for start, stop in _blocks(n_resamples, n):
        index = rng.integers(0, n, size=(stop - start, n))
        diffs[start:stop] = _ratio(na[index], da[index]) - _ratio(nb[index], db[index])
    alpha = 1.0 - confidence
    low, high = np.quantile(diffs, [alpha / 2, 1.0 - alpha / 2])
    rng = np.random.default_rng(seed)
    slack = 1e-9 * max(1.0, abs(observed))
    extreme = 0
    for start, stop in _blocks(n_resamples, n):
        swap = rng.integers(0, 2, size=(stop - start, n)).astype(bool)
        sa = _ratio(np.where(swap, nb, na), np.where(swap, db, da))
        sb = _ratio(np.where(swap, na, nb), np.where(swap, da, db))
        extreme += int(np.count_nonzero(np.abs(sa - sb) >= abs(observed) - slack))
    p_value = (1 + extreme) / (1 + n_resamples)
    ua = np.divide(na, da, out=np.zeros_like(na), where=da != 0)
    ub = np.divide(nb, db, out=np.zeros_like(nb), where=db != 0)
    wins, ties, losses = win_tie_loss(ua, ub, higher_is_better=higher_is_better)
    return PairedComparison(n=int(n), mean_a=ra, mean_b=rb, mean_diff=observed, ci_low=float(low),
                            ci_high=float(high), p_value=p_value, wins=wins, ties=ties, losses=losses, seed=seed,
                            n_resamples=n_resamples, confidence=confidence)
