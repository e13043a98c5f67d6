"""Which systems are statistically tied: rank groups over the units every system shares.

    groups = tied_groups({"bm25": [...], "grep": [...], "minilm": [...]}, seed=0)
    groups.group["bm25"]   # 1: tied with the best

Group 1 is the best system (highest mean; lowest where lower is better) and every system whose
Holm-adjusted paired p-value against it is at least `alpha` (0.05); those are removed and the rule is
repeated on the rest, the best of the rest anchoring group 2, and so on. Every system is in exactly one
group; group numbers rise as the means fall.

The paired test is the sign-flip (randomization) test of `stats.paired_randomization_test`: two-sided, on
the mean of the per-unit differences. When the differences that are not zero number `m` with 2**m at most
`n_resamples`, every sign pattern is enumerated and the p-value is exact (#patterns at least as extreme /
2**m; a unit with difference 0 flips to itself); otherwise it is that function's seeded Monte Carlo
estimate. Either way the same inputs give the same groups.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ctxgauge.metrics.ranking import mean_over
from ctxgauge.metrics.stats import paired_randomization_test

__all__ = ["TiedGroups", "holm", "sign_flip_p", "tied_groups"]

ALPHA = 0.05
"""Below this Holm-adjusted p a system is not tied with its group's best."""


def sign_flip_p(a: Sequence[float], b: Sequence[float], seed: int = 0, n_resamples: int = 10000) -> float:
    """Two-sided paired sign-flip p-value of mean(a - b) = 0: exact when the nonzero differences number m
    with 2**m <= n_resamples, else `paired_randomization_test(a, b, seed, n_resamples)`."""
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    nonzero = diffs[diffs != 0.0]
    m = int(nonzero.size)
    if m == 0:
        return 1.0
    if 2 ** m > n_resamples:
        return paired_randomization_test(a, b, seed, n_resamples)
    observed = abs(float(nonzero.sum()))
    slack = 1e-9 * max(1.0, float(np.abs(nonzero).sum()))  # as stats does: an exact tie must count as extreme
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=m)))
    flipped = np.abs(signs @ nonzero)
    return int(np.count_nonzero(flipped >= observed - slack)) / 2 ** m


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment, in the order given: the i-th smallest p (1-based) is multiplied by
    (m - i + 1), capped at 1, and made no smaller than the adjusted p before it."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: (pvalues[i], i))
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(pvalues[i])))
        out[i] = running
    return out


@dataclass(frozen=True)
class TiedGroups:
    """Rank groups of systems compared on the same n units."""

    group: dict[str, int]
    """System -> its group (1 = tied with the best)."""
    n: int
    """Units every system shares (the pairs each test was over)."""
    p_adjusted: dict[str, float | None]
    """System -> the Holm-adjusted p against its group's anchor (None for the anchors themselves)."""
    anchors: list[str]
    """The best system of each group, group 1 first."""


def tied_groups(scores: Mapping[str, Sequence[float]], seed: int = 0, n_resamples: int = 10000,
                alpha: float = ALPHA, *, higher_is_better: bool = True) -> TiedGroups:
    """Rank groups of systems whose `scores` are aligned over the same units (see the module docstring).

    The best system is the one with the highest mean (lowest with higher_is_better=False), a tie in the mean
    broken by name. Raises ValueError when the systems' lengths differ or hold nothing."""
    names = sorted(scores)
    values = {s: [float(v) for v in scores[s]] for s in names}
    lengths = {len(v) for v in values.values()}
    if len(lengths) != 1 or 0 in lengths:
        raise ValueError(f"every system needs values over the same units, got lengths {sorted(lengths)}")
    sign = 1.0 if higher_is_better else -1.0
    means = {s: sign * (mean_over(values[s]) or 0.0) for s in names}
    remaining = sorted(names, key=lambda s: (-means[s], s))
    group: dict[str, int] = {}
    adjusted: dict[str, float | None] = {}
    anchors: list[str] = []
    while remaining:
        best, rest = remaining[0], remaining[1:]
        anchors.append(best)
        number = len(anchors)
        group[best], adjusted[best] = number, None
        ps = holm([sign_flip_p(values[best], values[s], seed, n_resamples) for s in rest])
        tied = set()
        for s, p in zip(rest, ps):
            if p >= alpha:
                tied.add(s)
                group[s], adjusted[s] = number, p
        remaining = [s for s in rest if s not in tied]
        for s, p in zip(rest, ps):
            if s not in tied:
                adjusted[s] = p  # against this anchor; replaced when a later anchor ties it
    return TiedGroups(group, next(iter(lengths)), adjusted, anchors)
