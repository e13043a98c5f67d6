"""`--baseline`: the regression gate (and `comparison`, the retrieval pipeline's `--vs`, re-exported).

Both read units only. A commit counts in a comparison when both sides scored it (a failed unit has no
figures for either engine, so the two engines are always compared on exactly the same commits).
"""

from __future__ import annotations

from typing import Sequence

from ctxgauge.errors import UserError
from ctxgauge.metrics.scoring import higher_is_better
from ctxgauge.results import Gate, GateLine, ReplayComparison, ReplayUnit
from ctxgauge.suites._retrieval import ContextSpec, compared_names
from ctxgauge.suites._retrieval import comparison as _comparison

__all__ = ["comparison", "gate"]


def comparison(units: Sequence[ReplayUnit], metrics: Sequence[str], seed: int, engine: str,
               context: ContextSpec | None = None) -> ReplayComparison | None:
    """`--vs`: the paired comparison over the commits both engines scored (None when none), context
    metrics included with `context`."""
    if context is None:
        return _comparison(units, metrics, seed, engine, ReplayComparison, "commits")
    macro, micro = compared_names(context)
    return _comparison(units, [*metrics, *macro], seed, engine, ReplayComparison, "commits", micro)


def gate(units: Sequence[ReplayUnit], baseline_units: Sequence[ReplayUnit], metrics: Sequence[str],
         max_drop: float, baseline_id: str | None = None) -> Gate:
    """Compare each metric's mean with a stored run's on the commits both scored.

    A line fails when the mean falls by more than `max_drop` (for a lower-is-better metric, rises by more);
    `worse` names the commits whose value got worse, the largest change first.
    """
    ours = {u.id: u.figures for u in units if u.ok}
    theirs = {u.id: u.figures for u in baseline_units if u.ok}
    common = [sha for sha in ours if sha in theirs]
    if not common:
        raise UserError("the baseline run scored none of these commits: replay the same repository, --rev and "
                        "--commits as the baseline")
    lines = []
    for name in metrics:
        pairs = [(sha, theirs[sha].get(name), ours[sha].get(name)) for sha in common]
        pairs = [(sha, b, c) for sha, b, c in pairs if b is not None and c is not None]
        if not pairs:
            continue
        base = sum(b for _, b, _ in pairs) / len(pairs)
        cur = sum(c for _, _, c in pairs) / len(pairs)
        sign = 1.0 if higher_is_better(name) else -1.0
        drop = sign * (base - cur)
        worse = sorted(((sha, sign * (b - c)) for sha, b, c in pairs if sign * (b - c) > 0), key=lambda x: -x[1])
        # A tiny slack: equal runs must pass a zero tolerance whatever the order the means were summed in.
        lines.append(GateLine(metric=name, baseline=base, current=cur, drop=drop, holds=drop <= max_drop + 1e-12,
                              worse=[sha for sha, _ in worse]))
    return Gate(baseline=baseline_id, max_drop=max_drop, commits=len(common),
                passed=all(line.holds for line in lines), lines=lines)
