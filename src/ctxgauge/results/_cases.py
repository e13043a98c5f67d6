"""cases' record, typed: its settings (`CasesSpec`), one case (`CasesUnit`) and its results
(`CasesResults`). Written by `ctxgauge.suites.cases`, read by every reader of a cases run.

Layout history: records before schema 2 named a unit's request `query` (migrated by `ctxgauge.records`
before these classes see it) and kept `suite_version` in `spec` (likewise); an external-run score
(`cases --score`) writes `run` and a null `engine` in its spec and `ranked` in its units. suite_version 2
adds the context figures as replay's do (units' `gold_lines` and `context`, ranking `spans`, the spec's
`budgets` and `tokenizer`, `results.budget_curve`); a version 1 record reads with those empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxgauge.results._base import OMIT_EMPTY, OMIT_NONE, Record, omit_unless
from ctxgauge.results._retrieval import Comparison, CurvePoint, EngineIdentity, RetrievalUnit, TokenizerRef

SUITE = "cases"
"""The suite's name: what run.json's `suite` says."""


@dataclass
class CasesSpec(Record):
    """Every option of a cases run that changes a figure (run.json's `spec`)."""

    source: str | None = None
    """The case file's name (never its path)."""
    engine: str | None = None
    """The measured engine's spec (None when scoring an external run)."""
    engine_identity: EngineIdentity | None = field(default=None, metadata=OMIT_NONE)
    """The measured engine's identity."""
    vs: str | None = field(default=None, metadata=omit_unless("engine_identity"))
    """The compared engine's spec (`--vs`), or None (not written by `--score`, which runs no engine)."""
    run: str | None = field(default=None, metadata=OMIT_NONE)
    """The external run file's name (`--score` only)."""
    cases: list[str] | None = field(default=None, metadata=OMIT_NONE)
    """The case names, in file order."""
    corpora: list[str] | None = field(default=None, metadata=OMIT_NONE)
    """The corpora the cases run on (`name@rev` or a directory's name), each with its content hash."""
    ks: list[int] = field(default_factory=list)
    """Cutoffs every metric is scored at."""
    depth: int | None = field(default=None, metadata=OMIT_NONE)
    """How many files each case's query asks for."""
    seed: int = 0
    """Seed of the bootstrap and the randomization test."""
    metrics: list[str] = field(default_factory=list)
    """The metrics scored, in order."""
    pass_lines: dict[str, float] = field(default_factory=dict, metadata={"key": "pass"})
    """Metric -> its pass threshold (JSON key `pass`)."""
    missing_as_miss: bool | None = field(default=None, metadata=OMIT_NONE)
    """`--missing-as-miss`: expected files absent from the corpus stay in the labels (misses); written only
    when set."""
    budgets: list[int] | None = field(default=None, metadata=OMIT_NONE)
    """Token budgets the contexts were packed under (`--budget`); None in records before context metrics
    (and for an external run scored without an engine)."""
    tokenizer: TokenizerRef | None = field(default=None, metadata=OMIT_NONE)
    """The tokenizer the budgets are counted in, `{name, version}` (None where `budgets` is)."""


@dataclass
class CorpusRef(Record):
    """Which corpus a case ran on."""

    name: str
    """The corpus: a repository's name or a directory's."""
    rev: str | None = None
    """The revision (None for a plain directory)."""
    hash: str | None = None
    """The corpus's content hash."""


@dataclass
class CasesUnit(RetrievalUnit):
    """One hand-labelled case (a units.jsonl line)."""

    corpus: CorpusRef | None = field(default=None, metadata=OMIT_NONE)
    """The corpus it ran on."""
    known_gap: bool | None = field(default=None, metadata=OMIT_NONE)
    """Whether the case is in the known-gaps lane (reported, never counted in pass lines)."""
    missing: list[str] | None = field(default=None, metadata=OMIT_NONE)
    """Expected files absent from the corpus revision."""
    expected_any_of: list[list[str]] | None = field(default=None, metadata=OMIT_NONE)
    """Groups of files of which any one answers (SWE-bench-style alternatives)."""
    ranked: bool | None = field(default=None, metadata=OMIT_NONE)
    """`--score` only: whether the external run ranked this query at all."""

    def any_of_members(self) -> list[str]:
        """Files of the unit's any-of groups, in order."""
        return [p for group in self.expected_any_of or [] for p in group]

    @property
    def in_known_gaps(self) -> bool:
        """Whether the case is in the known-gaps lane (reported, never averaged)."""
        return bool(self.known_gap)


@dataclass
class PassLine(Record):
    """One pass line and whether it held."""

    metric: str
    """The metric."""
    threshold: float
    """Its pass threshold."""
    value: float | None
    """The run's mean of it (None when undefined)."""
    higher_is_better: bool = True
    """The direction the threshold is held in."""
    holds: bool = False
    """Whether the line holds."""


@dataclass
class CasesComparison(Comparison):
    """`--vs` over the counted cases both engines scored."""

    cases: int = 0
    """How many cases were paired."""


@dataclass
class CasesResults(Record):
    """What a cases run measured (run.json's `results`); the cases themselves are the units."""

    summary: dict[str, float | None] = field(default_factory=dict)
    """Metric -> mean over the counted cases (ok, not in the known-gaps lane)."""
    known_gap_summary: dict[str, float | None] = field(default_factory=dict)
    """The same over the known-gaps lane."""
    pass_lines: list[PassLine] = field(default_factory=list, metadata={"key": "pass"})
    """Every pass line (JSON key `pass`)."""
    passed: bool = True
    """Whether every pass line holds and no counted case failed."""
    failed: int = 0
    """Counted cases whose engine call failed."""
    comparison: CasesComparison | None = field(default=None, metadata=OMIT_NONE)
    """With `--vs`: the paired comparison per metric over the counted cases."""
    budget_curve: dict[str, list[CurvePoint]] = field(default_factory=dict, metadata=OMIT_EMPTY)
    """Engine spec -> its line coverage under each budget of `metrics.spans.AUC_BUDGETS`, each
    `{budget, mean, low, high}` over the units with gold lines (seeded 95% bootstrap interval), for the
    report's budget curve; an engine no unit had gold lines for is absent (empty in older records)."""


CLASSES = (CasesSpec, CasesUnit, CasesResults)
"""(settings, unit, results) of the suite: its entry in `ctxgauge.results.SUITES`."""
