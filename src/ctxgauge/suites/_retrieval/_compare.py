"""`--vs`: the paired comparison of two engines over the same cases, read from units only.

A case counts when both engines scored it (a failed unit has no figures for either engine, so the two
engines are always compared on exactly the same cases). Context metrics are compared like any figure,
except the `_micro` families: a ratio of sums on each side, resampled unit by unit
(`metrics.stats.paired_ratio_comparison`)."""

from __future__ import annotations

from typing import Sequence, TypeVar

from ctxgauge.metrics.scoring import compare, higher_is_better
from ctxgauge.metrics.stats import paired_ratio_comparison
from ctxgauge.results import Comparison, Paired, RetrievalUnit

C = TypeVar("C", bound=Comparison)


def comparison(units: Sequence[RetrievalUnit], metrics: Sequence[str], seed: int, engine: str,
               cls: type[C], counted: str, micro: Sequence[str] = ()) -> C | None:
    """The suite's typed comparison (`cls`, its count of paired units in the field `counted`: replay's
    commits, cases' cases) over the ok units holding both engines' figures; None when no unit does.
    `micro`: the `_micro` context metrics, compared as ratios of sums over the units both sides define."""
    paired = [u for u in units if u.ok and u.vs is not None]
    if not paired:
        return None
    result = compare([u.figures for u in paired], [u.vs.figures for u in paired], metrics, seed)
    for name in micro:
        both = [(u.context.pairs[name], u.vs.context.pairs[name]) for u in paired
                if u.context is not None and u.vs.context is not None
                and name in u.context.pairs and name in u.vs.context.pairs]
        if both:
            result[name] = paired_ratio_comparison([a for a, _ in both], [b for _, b in both], seed,
                                                   higher_is_better=higher_is_better(name)).to_dict()
    return cls(engine=engine, vs=paired[0].vs.engine, seed=seed,
               metrics={name: Paired.from_json(value, "comparison") for name, value in result.items()},
               **{counted: len(paired)})
