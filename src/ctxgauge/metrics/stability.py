"""Stability of an engine's answers across repeated trials, after ContextBenchmark's determinism family.

A trial is the ranking (unique paths, best first) an engine returned for one query; a determinism suite
asks the same query T times and compares the trials. Definitions follow ContextBenchmark's
`lib/metrics.mjs`, so levels computed here and there agree:
  - exact match rate (EMR): share of trials identical to the first (the first counts itself);
  - Jaccard: |A ∩ B| / |A ∪ B| of the path sets, 1.0 when both are empty;
  - Kendall tau-a over the paths both rankings share, taken in the first ranking's order,
    (concordant - discordant) / (n(n-1)/2), 1.0 when fewer than two paths are shared;
  - mean pairwise X: mean of X over all unordered pairs of trials, 1.0 when there are fewer than two.
ContextBenchmark's trials are already cut to the top k; here `jaccard_at_k` cuts explicitly, and the tau
functions score the lists as given (cut them first to compare top-k orders).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import combinations

from ctxgauge.metrics._validate import check_ranking

__all__ = [
    "exact_match",
    "exact_match_rate",
    "jaccard_at_k",
    "kendall_tau_a",
    "mean_pairwise_jaccard",
    "mean_pairwise_tau",
]


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    return k


def exact_match(a: Sequence[str], b: Sequence[str]) -> bool:
    """True when the two rankings list the same paths in the same order (list vs tuple does not matter)."""
    return check_ranking(a, what="a") == check_ranking(b, what="b")


def jaccard_at_k(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """Jaccard similarity of the sets of the first k paths of `a` and `b`; 1.0 when both are empty."""
    _check_k(k)
    top_a = set(check_ranking(a, what="a")[:k])
    top_b = set(check_ranking(b, what="b")[:k])
    union = top_a | top_b
    # Two empty answers are the same answer: ContextBenchmark scores them 1, and so do we.
    return len(top_a & top_b) / len(union) if union else 1.0


def _count_inversions(values: list[int]) -> int:
    """Pairs i < j with values[i] > values[j], by merge sort: O(n log n), so long rankings stay cheap."""
    inversions = 0
    width = 1
    run = list(values)
    n = len(run)
    while width < n:
        merged: list[int] = []
        for lo in range(0, n, 2 * width):
            left, right = run[lo : lo + width], run[lo + width : lo + 2 * width]
            i = j = 0
            while i < len(left) and j < len(right):
                if left[i] <= right[j]:
                    merged.append(left[i])
                    i += 1
                else:
                    # right[j] jumps ahead of every left item still waiting: each is one inversion.
                    inversions += len(left) - i
                    merged.append(right[j])
                    j += 1
            merged.extend(left[i:])
            merged.extend(right[j:])
        run = merged
        width *= 2
    return inversions


def kendall_tau_a(a: Sequence[str], b: Sequence[str]) -> float:
    """Kendall's tau-a between `a` and `b` over the paths both contain, taken in `a`'s order.

    With n shared paths, tau = (concordant - discordant) / (n(n-1)/2): 1.0 when the shared paths keep
    their relative order, -1.0 when it is reversed. Paths are unique, so there are no ties and tau-a
    equals tau-b here. Returns 1.0 when fewer than two paths are shared (no pair can disagree), as
    ContextBenchmark does; pair it with `jaccard_at_k` to see how much was shared at all.
    """
    ranked_a = check_ranking(a, what="a")
    position_in_b = {path: i for i, path in enumerate(check_ranking(b, what="b"))}
    positions = [position_in_b[path] for path in ranked_a if path in position_in_b]
    n = len(positions)
    if n < 2:
        return 1.0
    pairs = n * (n - 1) // 2
    discordant = _count_inversions(positions)
    return (pairs - 2 * discordant) / pairs


def _check_trials(trials: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    if isinstance(trials, (str, bytes)):
        raise TypeError("trials must be a sequence of rankings, not a string")
    return [check_ranking(t, what=f"trial {i}") for i, t in enumerate(trials)]


def exact_match_rate(trials: Sequence[Sequence[str]]) -> float:
    """Share of trials identical to the first (the first counts itself, so one trial gives 1.0).

    Raises ValueError for no trials: there is no first answer to compare with.
    """
    checked = _check_trials(trials)
    if not checked:
        raise ValueError("exact_match_rate needs at least one trial")
    return sum(1 for t in checked if t == checked[0]) / len(checked)


def _mean_pairwise(
    trials: list[tuple[str, ...]], similarity: Callable[[tuple[str, ...], tuple[str, ...]], float]
) -> float:
    values = [similarity(x, y) for x, y in combinations(trials, 2)]
    # Fewer than two trials: nothing can differ, 1.0 as in ContextBenchmark's meanPairwise.
    return math.fsum(values) / len(values) if values else 1.0


def mean_pairwise_jaccard(trials: Sequence[Sequence[str]], k: int) -> float:
    """Mean `jaccard_at_k` over all unordered pairs of trials; 1.0 with fewer than two trials."""
    _check_k(k)
    return _mean_pairwise(_check_trials(trials), lambda x, y: jaccard_at_k(x, y, k))


def mean_pairwise_tau(trials: Sequence[Sequence[str]]) -> float:
    """Mean `kendall_tau_a` over all unordered pairs of trials (earlier trial as `a`); 1.0 with fewer than two."""
    return _mean_pairwise(_check_trials(trials), kendall_tau_a)
