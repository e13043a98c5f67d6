"""`--baseline`: the regression gate (and `comparison`, the retrieval pipeline's `--vs`, re-exported).

Both read units only. A commit counts in a comparison when both sides scored it (a failed unit has no
figures for either engine, so the two engines are always compared on exactly the same commits).
"""

from __future__ import annotations

import math
from typing import Sequence

from ctxgauge.errors import UserError
from ctxgauge.metrics import get_metric_kind, parse_metric
from ctxgauge.metrics.ranking import mean_over
from ctxgauge.metrics.scoring import higher_is_better
from ctxgauge.results import Gate, GateLine, ReplayComparison, ReplayUnit
from ctxgauge.suites._retrieval import ContextSpec, compared_names, macro_names, micro_names
from ctxgauge.suites._retrieval import comparison as _comparison

__all__ = ["comparison", "gate", "gate_metrics"]


def comparison(units: Sequence[ReplayUnit], metrics: Sequence[str], seed: int, engine: str,
               context: ContextSpec | None = None) -> ReplayComparison | None:
    """`--vs`: the paired comparison over the commits both engines scored (None when none), context
    metrics included with `context`."""
    if context is None:
        return _comparison(units, metrics, seed, engine, ReplayComparison, "commits")
    macro, micro = compared_names(context)
    return _comparison(units, [*metrics, *macro], seed, engine, ReplayComparison, "commits", micro)


def is_micro(name: str) -> bool:
    """Whether a metric is a ratio of sums over units (a `_micro` context family)."""
    if not name.partition("@")[0].endswith("_micro"):
        return False  # a ranking metric (pack_recall is not in the registry) or a macro context one
    return get_metric_kind(parse_metric(name).name).aggregate == "ratio"


def _figure(units: Sequence[ReplayUnit], name: str) -> dict[str, float | tuple[float, float]]:
    """Commit -> its value of `name` (a `_micro` metric: its [numerator, denominator] pair) where defined."""
    out: dict[str, float | tuple[float, float]] = {}
    for u in units:
        if not u.ok:
            continue
        if is_micro(name):
            pair = u.context.pairs.get(name) if u.context is not None else None
            if pair is not None:
                out[u.id] = (float(pair[0]), float(pair[1]))
        elif u.figures.get(name) is not None:
            out[u.id] = float(u.figures[name])
    return out


def _mean(values: Sequence[float | tuple[float, float]]) -> float:
    """The suite's one mean (`metrics.ranking.mean_over`: math.fsum), or a ratio of sums for pairs."""
    if values and isinstance(values[0], tuple):
        den = math.fsum(d for _, d in values)  # type: ignore[misc]
        return math.fsum(n for n, _ in values) / den if den else 0.0  # type: ignore[misc]
    return mean_over(values)  # type: ignore[arg-type, return-value]


def _value(v: float | tuple[float, float]) -> float:
    return (v[0] / v[1] if v[1] else 0.0) if isinstance(v, tuple) else v


def gate_metrics(names: Sequence[str], metrics: Sequence[str], context: ContextSpec | None) -> list[str]:
    """The metrics `--gate` names, checked against what the run scores (the ranking metrics, then with
    `context` the context ones, `_micro` included); none named: the ranking metrics. UserError otherwise."""
    if not names:
        return list(metrics)
    known = [*metrics, *(macro_names(context) + micro_names(context) if context is not None else [])]
    out = []
    for raw in names:
        try:
            name = raw if raw in known else str(parse_metric(raw))
        except ValueError as exc:
            raise UserError(f"--gate {raw}: {exc}") from None
        if name not in known:
            raise UserError(f"--gate {raw}: not a figure this replay scores; name one of its -k or --budget "
                            f"figures, e.g. --gate {known[0]} or --gate line_coverage_tokens@"
                            f"{context.budgets[0] if context is not None else 4000}")
        if name not in out:
            out.append(name)
    return out


def gate(units: Sequence[ReplayUnit], baseline_units: Sequence[ReplayUnit], metrics: Sequence[str],
         max_drop: float, baseline_id: str | None = None) -> Gate:
    """Compare each metric's mean with a stored run's on the commits both scored.

    `metrics` may name context metrics (`--gate`): a macro one compares means like a ranking metric, a
    `_micro` one its ratio of sums over the commits both define. A line fails when the mean falls by more
    than `max_drop` (for a lower-is-better metric, rises by more); `worse` names the commits whose value got
    worse, the largest change first. A metric the baseline does not hold (a run before context figures)
    has no line.
    """
    ours = {u.id for u in units if u.ok}
    theirs = {u.id for u in baseline_units if u.ok}
    common = [u.id for u in units if u.ok and u.id in theirs]
    if not common:
        raise UserError("the baseline run scored none of these commits: replay the same repository, --rev and "
                        "--commits as the baseline")
    lines = []
    for name in metrics:
        mine, base = _figure(units, name), _figure(baseline_units, name)
        pairs = [(sha, base[sha], mine[sha]) for sha in common if sha in ours and sha in base and sha in mine]
        if not pairs:
            continue
        before = _mean([b for _, b, _ in pairs])
        cur = _mean([c for _, _, c in pairs])
        sign = 1.0 if higher_is_better(name) else -1.0
        drop = sign * (before - cur)
        changes = [(sha, sign * (_value(b) - _value(c))) for sha, b, c in pairs]
        worse = sorted((x for x in changes if x[1] > 0), key=lambda x: -x[1])
        # A tiny slack: equal runs must pass a zero tolerance whatever the order the means were summed in.
        lines.append(GateLine(metric=name, baseline=before, current=cur, drop=drop, holds=drop <= max_drop + 1e-12,
                              worse=[sha for sha, _ in worse]))
    return Gate(baseline=baseline_id, max_drop=max_drop, commits=len(common),
                passed=all(line.holds for line in lines), lines=lines)
