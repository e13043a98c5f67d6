"""`replay --repos`'s combined summary, typed: what `DIR/summary.json` holds and `--json` prints (plus
`out`). Written by `ctxgauge.suites.replay._many`, read by the `--repos` printer of `cli/replay.py`.

Not a run record: each repository's run is an ordinary replay run (`ctxgauge.results._replay`); this is
the file beside them that pools their commits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxgauge.results._base import OMIT_EMPTY, OMIT_NONE, Record
from ctxgauge.results._replay import ReplayCounts

KIND = "ctxgauge.replay-many"
"""What `summary.json`'s `kind` says."""


@dataclass
class PooledFigure(Record):
    """One metric over every repository's scored commits."""

    mean: float = 0.0
    """Every scored commit weighs the same: the mean over all of them (a `_micro` metric: the ratio of its
    numerators' sum to its denominators' sum over all of them)."""
    macro_mean: float = 0.0
    """Every repository weighs the same: the mean of the repositories' own figures (means, or ratios)."""
    ci_low: float = 0.0
    """Lower end of the 95% two-stage bootstrap interval of `mean`: repositories resampled, then commits
    within each (`metrics.stats.clustered_bootstrap_ci`, seeded; a ratio recomputed on each resample)."""
    ci_high: float = 0.0
    """Upper end of that interval."""
    commits: int = 0
    """Commits where the metric is defined (context metrics: those with gold at the metric's level)."""
    repositories: int = 0
    """Repositories with at least one such commit."""


@dataclass
class RepoFigures(Record):
    """One repository's run, as the combined summary names it."""

    label: str = ""
    """The `--repos` line's label (or the repository's name)."""
    run: str = ""
    """Its run folder inside the `--out` folder."""
    counts: ReplayCounts = field(default_factory=ReplayCounts)
    """Its commits walked, replayed, ok, scored, failed, skipped."""
    summary: dict[str, float | None] = field(default_factory=dict)
    """Its run's `results.summary` (ranking and context metrics, `coverage_gap`)."""
    vs_summary: dict[str, float | None] | None = None
    """Its run's `results.vs_summary` (None without `--vs`)."""


@dataclass
class ReplayManySummary(Record):
    """`summary.json`: each repository's figures and the pooled ones, from the units only."""

    kind: str = KIND
    """Always `ctxgauge.replay-many`."""
    engine: str | None = None
    """The measured engine's spec."""
    vs: str | None = None
    """The compared engine's spec, or None."""
    seed: int = 0
    """Seed of every pooled interval."""
    metrics: list[str] = field(default_factory=list)
    """The ranking metrics, in report order (the first ones make the headline)."""
    context_metrics: list[str] = field(default_factory=list, metadata=OMIT_EMPTY)
    """The context metrics pooled too, macro families then `_micro` ones (docs/replay.md, "Context"); empty
    (not written) in summaries written before them."""
    budgets: list[int] | None = field(default=None, metadata=OMIT_NONE)
    """The token budgets of the context metrics (None in summaries written before them)."""
    repositories: list[RepoFigures] = field(default_factory=list)
    """One entry per `--repos` line, in the file's order."""
    pooled: dict[str, PooledFigure | None] = field(default_factory=dict)
    """Metric (ranking and context) -> its pooled figure for the measured engine; None where no commit of
    any repository defines it."""
    vs_pooled: dict[str, PooledFigure | None] | None = None
    """The same for the `--vs` engine (None without one)."""
