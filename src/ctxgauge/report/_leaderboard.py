"""What a suite view hands the leaderboard: attempts of systems, each with its figures.

`ctxgauge.export._summaries` groups them by suite x dataset x system x model and averages each metric.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Value:
    """One figure of one attempt, as the leaderboard averages it."""

    metric: str
    """The metric's name (`recall@5`, `ctl`, `accuracy`, ...)."""
    value: float | None
    """The attempt's value (None: not measured, never counted as zero)."""
    units: tuple[float, ...] = ()
    """Per-unit values behind `value`, resampled for the interval when this is the only scored attempt."""
    seed: int = 0
    """Seed of that resampling (the run's own)."""


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
