"""replay's record, typed: its settings (`ReplaySpec`), one commit (`ReplayUnit`) and its results
(`ReplayResults`). Written by `ctxgauge.suites.replay`, read by every reader of a replay run.

Layout history (the run.json schema's own history is in `ctxgauge.records`): records before schema 2 kept
`suite_version` inside `spec`; `ctxgauge.records` migrates that before these classes see it. suite_version
2 adds the context figures (issue 37): each unit's `gold_lines` and `context`, ranking entries' `spans`,
the spec's `budgets`, `tokenizer` and `gold_lines` rule, and `results.budget_curve`; a version 1 record
reads with those empty (None, `{}`, `[]`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxgauge.results._base import OMIT_EMPTY, OMIT_NONE, Record
from ctxgauge.results._retrieval import Comparison, CurvePoint, EngineIdentity, RetrievalUnit, TokenizerRef

SUITE = "replay"
"""The suite's name: what run.json's `suite` says."""


@dataclass
class ReplaySpec(Record):
    """Every option of a replay that changes a figure (run.json's `spec`); `--resume` needs the same."""

    repo: str | None = None
    """The repository's name (never its path)."""
    engine: str | None = None
    """The measured engine's spec."""
    head: str | None = None
    """The full commit id `rev` named when the run started."""
    rev: str = "HEAD"
    """The revision whose ancestors were walked."""
    engine_identity: EngineIdentity | None = None
    """The measured engine's identity."""
    vs: str | None = None
    """The compared engine's spec (`--vs`), or None."""
    vs_identity: EngineIdentity | None = None
    """The compared engine's identity, or None."""
    ks: list[int] = field(default_factory=list)
    """Cutoffs every metric is scored at."""
    depth: int = 100
    """How many files each commit's query asks for."""
    commits: int | None = None
    """The N newest eligible commits replayed (None: all)."""
    max_files: int = 8
    """Commits with more expected files were skipped as sweeps."""
    since: str | None = None
    """Only commits newer than this date (`git log --since`), or None."""
    seed: int = 0
    """Seed of the bootstrap and the randomization test."""
    metrics: list[str] = field(default_factory=list)
    """The metrics scored, in order (the first two make the headline)."""
    budgets: list[int] | None = field(default=None, metadata=OMIT_NONE)
    """Token budgets the contexts were packed under (`--budget`); None in records before context metrics
    (and for an external run scored without an engine)."""
    tokenizer: TokenizerRef | None = field(default=None, metadata=OMIT_NONE)
    """The tokenizer the budgets are counted in, `{name, version}` (None where `budgets` is)."""
    gold_lines: str | None = field(default=None, metadata=OMIT_NONE)
    """The gold-line rule the run used (docs/replay.md, "Gold lines"); None where `budgets` is."""
    subtree: str | None = field(default=None, metadata=OMIT_NONE)
    """The folder replayed when REPO is a folder inside a work tree (docs/replay.md, "SOURCE"), relative
    to the repository's top; None (not written) for a whole repository."""


@dataclass
class ReplayUnit(RetrievalUnit):
    """One commit as a labelled case (a units.jsonl line): its parent tree is the corpus, its subject the
    request, the files it modified, deleted or renamed the expected answer."""

    parent: str | None = field(default=None, metadata=OMIT_NONE)
    """The parent commit: the corpus's revision."""
    subject: str | None = field(default=None, metadata=OMIT_NONE)
    """The commit's subject line as written (the request drops a conventional-commit prefix)."""
    tests: list[str] | None = field(default=None, metadata=OMIT_NONE)
    """Changed test files: counted toward pack recall only."""
    code: bool | None = field(default=None, metadata=OMIT_NONE)
    """Whether the commit touched a code file (`results.by_kind` splits on it)."""


@dataclass
class KindSummary(Record):
    """The summary over one kind of commit (code, other)."""

    commits: int
    """Ok commits of that kind."""
    summary: dict[str, float | None] = field(default_factory=dict)
    """Metric -> mean over them, and `coverage_gap`."""


@dataclass
class ReplayCounts(Record):
    """How many commits went where."""

    walked: int = 0
    """Every commit looked at (eligible or skipped)."""
    replayed: int = 0
    """Eligible commits: ok or failed."""
    ok: int = 0
    """Commits measured."""
    scored: int = 0
    """Ok commits with at least one scorable figure."""
    failed: int = 0
    """Commits an engine failed on (never in a mean)."""
    skipped: int = 0
    """Commits skipped by rule (`results.skipped` says why)."""


@dataclass
class ReplayComparison(Comparison):
    """`--vs` over the commits both engines scored."""

    commits: int = 0
    """How many commits were paired."""


@dataclass
class GateLine(Record):
    """One metric of the `--baseline` gate."""

    metric: str
    """The metric."""
    baseline: float | None
    """Its mean in the baseline run over the common commits."""
    current: float | None
    """Its mean in this run over the same commits."""
    drop: float
    """How far it fell (rose, for a lower-is-better metric)."""
    holds: bool = True
    """Whether the drop is within `max_drop`."""
    worse: list[str] = field(default_factory=list)
    """Commits whose value got worse, the largest change first."""


@dataclass
class Gate(Record):
    """`--baseline`: this run's means against a stored run's, on the commits both scored."""

    baseline: str | None
    """The baseline run's id."""
    max_drop: float
    """Largest fall of a mean that still passes."""
    commits: int
    """Commits both runs scored."""
    passed: bool
    """Whether every line holds."""
    lines: list[GateLine] = field(default_factory=list)
    """One line per metric both runs scored."""


@dataclass
class ReplayResults(Record):
    """What a replay measured (run.json's `results`); the commits themselves are the units."""

    engine: str | None = None
    """The measured engine's spec."""
    vs: str | None = None
    """The compared engine's spec, or None."""
    summary: dict[str, float | None] = field(default_factory=dict)
    """Metric -> mean over the ok commits where it is defined (`math.fsum`), and `coverage_gap` (expected
    files not indexed over all expected files)."""
    vs_summary: dict[str, float | None] | None = None
    """The same for the `--vs` engine (None without one)."""
    by_kind: dict[str, KindSummary] = field(default_factory=dict)
    """`code` and `other`: the summary split into commits touching code and the rest."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Skip reason -> commits skipped for it (every reason present)."""
    counts: ReplayCounts = field(default_factory=ReplayCounts)
    """How many commits were walked, replayed, scored, failed, skipped."""
    comparison: ReplayComparison | None = field(default=None, metadata=OMIT_NONE)
    """With `--vs`: the paired comparison per metric."""
    gate: Gate | None = field(default=None, metadata=OMIT_NONE)
    """With `--baseline`: the regression gate."""
    budget_curve: dict[str, list[CurvePoint]] = field(default_factory=dict, metadata=OMIT_EMPTY)
    """Engine spec -> its line coverage under each budget of `metrics.spans.AUC_BUDGETS`, each
    `{budget, mean, low, high}` over the units with gold lines (seeded 95% bootstrap interval), for the
    report's budget curve; an engine no unit had gold lines for is absent (empty in older records)."""


CLASSES = (ReplaySpec, ReplayUnit, ReplayResults)
"""(settings, unit, results) of the suite: its entry in `ctxgauge.results.SUITES`."""
