"""`--vs`: the paired comparison of two engines over the same cases, read from units only.

A case counts when both engines scored it (a failed unit has no figures for either engine, so the two
engines are always compared on exactly the same cases)."""

from __future__ import annotations

from typing import Sequence, TypeVar

from ctxgauge.metrics.scoring import compare
from ctxgauge.results import Comparison, Paired, RetrievalUnit

C = TypeVar("C", bound=Comparison)


def comparison(units: Sequence[RetrievalUnit], metrics: Sequence[str], seed: int, engine: str,
               cls: type[C], counted: str) -> C | None:
    """The suite's typed comparison (`cls`, its count of paired units in the field `counted`: replay's
    commits, cases' cases) over the ok units holding both engines' figures; None when no unit does."""
    paired = [u for u in units if u.ok and u.vs is not None]
    if not paired:
        return None
    result = compare([u.figures for u in paired], [u.vs.figures for u in paired], metrics, seed)
    return cls(engine=engine, vs=paired[0].vs.engine, seed=seed,
               metrics={name: Paired.from_json(value, "comparison") for name, value in result.items()},
               **{counted: len(paired)})
