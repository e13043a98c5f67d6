"""What a suite view hands the leaderboard, and the leaderboard's cross-run figures.

A view hands attempts of systems, each with its figures (`Attempt`, `Value`); `ctxgauge.export._summaries`
groups them by suite x dataset x system x model (and what else makes runs comparable) and metric. The
figures over several runs are computed here, once: `cross_interval` (the interval and the rule it follows,
`ci_basis`) and `cross_groups` (which systems are statistically tied).

Intervals (seeded 95% percentile bootstrap of the mean; `ci_basis` names the rule):
  units                  replay, cases (and any suite whose attempts carry per-unit values): runs on the same
                         units are one measurement, so the interval resamples the newest run's units (seeded
                         by its --seed), however many runs repeat it.
  pooled-units           runs on different sets of units: each set (its newest run) is a cluster, and the
                         interval resamples clusters, then units within them, as `replay --repos` pools
                         repositories (`clustered_bootstrap_ci`, seeded by the newest run's --seed).
  questions-repetitions  qa: the interval resamples questions, then the repetitions (of every run) within
                         each question.
  (empty)                nothing to resample: no per-unit values (determinism's figures, qa's tokens and
                         costs), or fewer than two units (qa: two questions).
The row's runs, valid, scored, dnf, mean, min and max keep their per-run meaning (over the attempts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxgauge.metrics.ranking import mean_over


@dataclass(frozen=True)
class Value:
    """One figure of one attempt, as the leaderboard averages it."""

    metric: str
    """The metric's name (`recall@5`, `ctl`, `accuracy`, ...)."""
    value: float | None
    """The attempt's value (None: not measured, never counted as zero)."""
    units: tuple[float, ...] = ()
    """Per-unit values behind `value`, resampled for the interval (empty: nothing to resample)."""
    seed: int = 0
    """Seed of that resampling (the run's own)."""
    unit_ids: tuple[str, ...] = ()
    """The units' ids, parallel to `units`: what tells runs on the same units from runs on different ones,
    and what pairs systems for `cross_groups`."""
    repetitions: bool = False
    """True when attempts are repetitions over the same units (qa: its questions): the interval resamples
    units, then the repetitions within each (`questions-repetitions`)."""
    higher_is_better: bool = True
    """The metric's direction (which system is best for `cross_groups`)."""


@dataclass(frozen=True)
class Attempt:
    """One attempt of one system in a finished run, as the leaderboard counts it."""

    system: str
    """The engine or arm."""
    outcome: str | None
    """`valid`, `skipped` (unavailable: never a pass, never a zero) or `dnf`; None adds `values` to the
    system's figures without counting an attempt (a figure measured once for all repetitions)."""
    values: tuple[Value, ...] = ()
    """Its figures (only for a valid attempt, or with outcome None)."""


@dataclass(frozen=True)
class Scored:
    """A scored figure of one attempt, with where it comes from."""

    value: Value
    order: tuple
    """Sorts the runs oldest first (the run's start time, then its path): the last is the newest."""


def _measurements(scored: Sequence[Scored]) -> list[Scored]:
    # One per set of units: the newest run on that set, oldest set first.
    newest: dict[frozenset, Scored] = {}
    for s in sorted(scored, key=lambda s: s.order):
        if s.value.units:
            newest[frozenset(s.value.unit_ids or range(len(s.value.units)))] = s
    return sorted(newest.values(), key=lambda s: s.order)


def _questions(scored: Sequence[Scored]) -> dict[str, list[float]]:
    # qa: unit id -> every repetition's value, oldest first.
    out: dict[str, list[float]] = {}
    for s in sorted(scored, key=lambda s: s.order):
        for uid, v in zip(s.value.unit_ids, s.value.units):
            out.setdefault(uid, []).append(float(v))
    return out


def cross_interval(scored: Sequence[Scored], n_resamples: int = 10000) -> tuple[float | None, float | None, str]:
    """(ci_low, ci_high, ci_basis) of one leaderboard row from its scored attempts (the module's docstring)."""
    from ctxgauge.metrics.stats import bootstrap_ci, clustered_bootstrap_ci

    with_units = [s for s in scored if s.value.units]
    if not with_units:
        return None, None, ""
    seed = max(with_units, key=lambda s: s.order).value.seed
    if any(s.value.repetitions for s in with_units):
        questions = _questions(with_units)
        if len(questions) < 2:
            return None, None, ""
        _, low, high = clustered_bootstrap_ci([questions[q] for q in sorted(questions)], seed)
        return low, high, "questions-repetitions"
    sets = _measurements(with_units)
    if len(sets) == 1:
        units = sets[0].value.units
        if len(units) < 2:
            return None, None, ""
        _, low, high = bootstrap_ci(list(units), seed=seed, n_resamples=n_resamples)
        return low, high, "units"
    _, low, high = clustered_bootstrap_ci([list(s.value.units) for s in sets], seed)
    return low, high, "pooled-units"


def per_unit(scored: Sequence[Scored]) -> dict[str, float]:
    """A system's value per unit id over its scored attempts: the newest run's value of each unit
    (repetitions of a unit averaged, `repetitions`); {} when its attempts carry no unit ids."""
    with_ids = [s for s in scored if s.value.unit_ids]
    if any(s.value.repetitions for s in with_ids):
        return {q: v for q, vals in _questions(with_ids).items() if (v := mean_over(vals)) is not None}
    out: dict[str, float] = {}
    for s in _measurements(with_ids):
        out.update(zip(s.value.unit_ids, (float(v) for v in s.value.units)))
    return out


def cross_groups(systems: dict[str, Sequence[Scored]], seed: int = 0) -> tuple[dict[str, int], int]:
    """(system -> rank group, n units shared) over the systems of one comparison (same suite, dataset,
    model, what else makes them comparable, and metric): `metrics.groups.tied_groups` on each system's
    `per_unit` values over the units every one of them has; ({}, 0) unless more than two systems have
    per-unit values and share at least one unit."""
    from ctxgauge.metrics.groups import tied_groups

    values = {name: per_unit(s) for name, s in sorted(systems.items())}
    values = {name: v for name, v in values.items() if v}
    if len(values) <= 2:
        return {}, 0
    shared = sorted(set.intersection(*(set(v) for v in values.values())))
    if not shared:
        return {}, 0
    higher = all(s.value.higher_is_better for ss in systems.values() for s in ss)
    got = tied_groups({name: [v[u] for u in shared] for name, v in values.items()}, seed,
                      higher_is_better=higher)
    return got.group, got.n
