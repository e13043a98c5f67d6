"""determinism's record, typed: its settings (`DeterminismSpec`), one engine x family (`DeterminismUnit`)
and its results (`DeterminismResults`). Written by `ctxgauge.suites.determinism`, read by every reader of a
determinism run.

A family's figures differ by family (rebuild: distinct hashes over R builds; query: EMR, Jaccard, tau over
T trials; drift: per noise kind; update; cross-machine) and stay `name -> value` maps here; the family
classes that compute them (`ctxgauge.suites.determinism`) document each name.

Layout history: records before schema 2 had no `suite_version` for this suite (migrated to 1 by
`ctxgauge.records`). suite_version 2 (same layout): the query family's `span_exact_match_rate` enters the
level (CTL 3 needs it at 1.0) and built-in engines return spans by default; records of version 1
read as they are, their levels graded by files alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxgauge.results._base import OMIT_NONE, Record, omit_unless
from ctxgauge.results._retrieval import EngineIdentity, UnitBase

SUITE = "determinism"
"""The suite's name: what run.json's `suite` says."""
FAMILY_OK = "ok"
"""A family's status when it was measured."""


@dataclass
class CorpusId(Record):
    """The corpus measured on, by identity."""

    name: str
    """A repository's or directory's name."""
    kind: str | None = None
    """`git` or `dir`."""
    rev: str | None = None
    """The revision (git corpora)."""
    hash: str | None = None
    """The corpus's content hash."""


@dataclass
class Flag(Record):
    """A warning raised beside a level (e.g. an artifact identical while queries differ)."""

    flag: str
    """The flag's name."""
    reason: str | None = None
    """Why it was raised."""


@dataclass
class DeterminismSpec(Record):
    """Every option of a determinism run that changes a figure (run.json's `spec`)."""

    engines: list[str] = field(default_factory=list)
    """The engines measured, in order."""
    families: list[str] = field(default_factory=list)
    """The families run (rebuild, query, drift, update, cross-machine)."""
    corpus: CorpusId | None = None
    """The corpus measured on."""
    k: int = 10
    """Results per query compared."""
    queries: list[str] = field(default_factory=list)
    """The queries asked."""
    queries_from: str | None = None
    """Where the queries came from (a file's name, or how they were drawn)."""
    rebuilds: int = 0
    """Builds of the rebuild family."""
    trials: int = 0
    """Trials per query of the query family."""
    noise: list[str] = field(default_factory=list)
    """Noise kinds of the drift family."""
    noise_dir: str | None = None
    """A directory of noise files given by the user, by name, or None."""
    noise_seed: int = 0
    """Seed choosing the noise files."""
    update_from: str | None = None
    """The revision the update family updates from."""
    against: list[Any] = field(default_factory=list)
    """Fingerprints compared against (cross-machine family), by name."""


@dataclass
class DeterminismUnit(UnitBase):
    """One engine x family (a units.jsonl line)."""

    engine: str | None = None
    """The engine's spec."""
    family: str | None = None
    """The family."""
    figures: dict[str, Any] = field(default_factory=dict)
    """The family's figures (see the module docstring)."""
    engine_status: str | None = field(default=None, metadata=OMIT_NONE)
    """The engine's own status (`ok`, `skipped` when unavailable, `failed`): on its last family's unit only."""
    engine_reason: str | None = field(default=None, metadata=omit_unless("engine_status"))
    """Why the engine was skipped or failed (written with `engine_status`)."""
    identity: EngineIdentity | None = field(default=None, metadata=OMIT_NONE)
    """The engine's identity."""
    fingerprint: str | None = field(default=None, metadata=OMIT_NONE)
    """The engine's fingerprint file, relative to the run."""
    flags: list[Flag] | None = field(default=None, metadata=OMIT_NONE)
    """Flags raised for the engine (on its last family's unit only)."""


# -- a family's figures, typed per family (stored as a map under `figures`; read through
#    `FamilyResult.typed_figures(family)`) --------------------------------------------------------------
@dataclass
class RebuildFigures(Record):
    """The rebuild family: the same corpus built R times, each artifact hashed."""

    rebuilds: int | None = field(default=None, metadata=OMIT_NONE)
    """Builds made."""
    distinct_hashes: int | None = field(default=None, metadata=OMIT_NONE)
    """Distinct artifact hashes over them (1: identical artifacts)."""
    identical: bool | None = field(default=None, metadata=OMIT_NONE)
    """Whether every build's artifact hashed the same."""
    hashes: list[str] | None = field(default=None, metadata=OMIT_NONE)
    """The distinct hashes."""
    hashed: str | None = field(default=None, metadata=OMIT_NONE)
    """What was hashed (the engine's artifact file, or its whole out directory)."""
    work_cache: Any = field(default=None, metadata=OMIT_NONE)
    """Whether the work cache was used (`off`: every build was fresh)."""
    rebuilds_done: int | None = field(default=None, metadata=OMIT_NONE)
    """A failed family: builds finished before the failure."""


@dataclass
class QueryTrialFigures(Record):
    """One query asked T times against one build."""

    query: str
    """The query."""
    exact_match_rate: float | None = None
    """Share of trials whose ranking equals the first trial's."""
    span_exact_match_rate: float | None = field(default=None, metadata=OMIT_NONE)
    """Share of trials whose answer (ranking and spans) equals the first trial's."""
    jaccard: float | None = None
    """Mean pairwise Jaccard@k of the trials' rankings."""
    tau: float | None = None
    """Mean pairwise Kendall tau of the trials' rankings."""
    results: int | None = None
    """Results the first trial returned."""


@dataclass
class QueryFigures(Record):
    """The query family: every query asked T times against one build."""

    queries: int | None = field(default=None, metadata=OMIT_NONE)
    """Queries asked."""
    trials: int | None = field(default=None, metadata=OMIT_NONE)
    """Trials per query."""
    exact_match_rate: float | None = field(default=None, metadata=OMIT_NONE)
    """EMR: mean over queries of the share of trials equal to the first."""
    span_exact_match_rate: float | None = field(default=None, metadata=OMIT_NONE)
    """The same over whole answers (rankings and spans)."""
    mean_jaccard: float | None = field(default=None, metadata=OMIT_NONE)
    """Mean over queries of the trials' pairwise Jaccard@k."""
    mean_kendall_tau: float | None = field(default=None, metadata=OMIT_NONE)
    """Mean over queries of the trials' pairwise Kendall tau."""
    empty_results: int | None = field(default=None, metadata=OMIT_NONE)
    """Queries that returned nothing."""
    unstable_queries: int | None = field(default=None, metadata=OMIT_NONE)
    """Queries whose rankings differed between trials."""
    unstable_spans: int | None = field(default=None, metadata=OMIT_NONE)
    """Queries with stable rankings but differing spans."""
    per_query: list[QueryTrialFigures] = field(default_factory=list, metadata=OMIT_NONE)
    """Every query's own figures."""
    work_cache: Any = field(default=None, metadata=OMIT_NONE)
    """Whether the work cache was used."""
    queries_done: int | None = field(default=None, metadata=OMIT_NONE)
    """A failed family: queries finished before the failure."""


@dataclass
class UpdateFigures(Record):
    """The update family: an index built at an older revision and updated, against a fresh build."""

    from_rev: str | None = field(default=None, metadata=OMIT_NONE)
    """The revision updated from."""
    to_rev: str | None = field(default=None, metadata=OMIT_NONE)
    """The revision updated to (the corpus's)."""
    changes: dict[str, int] = field(default_factory=dict, metadata=OMIT_NONE)
    """Change kind (added, modified, deleted, ...) -> files."""
    update_hash: str | None = field(default=None, metadata=OMIT_NONE)
    """The updated artifact's hash."""
    rebuild_hash: str | None = field(default=None, metadata=OMIT_NONE)
    """The fresh build's artifact hash."""
    artifact_identical: bool | None = field(default=None, metadata=OMIT_NONE)
    """Whether the two artifacts hash the same."""
    queries: int | None = field(default=None, metadata=OMIT_NONE)
    """Queries compared."""
    queries_identical: int | None = field(default=None, metadata=OMIT_NONE)
    """Queries answered the same by both."""
    mean_jaccard: float | None = field(default=None, metadata=OMIT_NONE)
    """Mean Jaccard@k of the updated index's rankings against the fresh build's."""
    identical: bool | None = field(default=None, metadata=OMIT_NONE)
    """Whether artifacts and every answer are identical."""
    work_cache: Any = field(default=None, metadata=OMIT_NONE)
    """Whether the work cache was used, per path."""


@dataclass
class CrossMachineFigures(Record):
    """The cross-machine family: this machine's fingerprint against others'."""

    verdict: str | None = field(default=None, metadata=OMIT_NONE)
    """The overall verdict (`PASS`, ...)."""
    comparisons: list[dict[str, Any]] = field(default_factory=list, metadata=OMIT_NONE)
    """One comparison per fingerprint compared against (against, env, verdict, reasons, warnings)."""


@dataclass
class NoiseDrift(Record):
    """The drift family's figures for one noise kind."""

    drift: float | None = field(default=None, metadata=OMIT_NONE)
    """1 - mean Jaccard@k against the base build."""
    mean_jaccard_vs_base: float | None = field(default=None, metadata=OMIT_NONE)
    """Mean Jaccard@k of each query's results against the base build."""
    mean_kendall_tau: float | None = field(default=None, metadata=OMIT_NONE)
    """Mean Kendall tau against the base build."""
    about: str | None = field(default=None, metadata=OMIT_NONE)
    """What the noise file is."""
    noise_file: str | None = field(default=None, metadata=OMIT_NONE)
    """Where it was added in the corpus."""
    noise_bytes: int | None = field(default=None, metadata=OMIT_NONE)
    """Its size."""
    noise_in_top_k: int | None = field(default=None, metadata=OMIT_NONE)
    """Queries whose top k held the noise file."""
    queries: int | None = field(default=None, metadata=OMIT_NONE)
    """Queries asked."""
    work_cache: Any = field(default=None, metadata=OMIT_NONE)
    """Whether the work cache was used."""


FAMILY_FIGURES: dict[str, type[Record]] = {
    "rebuild": RebuildFigures, "query": QueryFigures, "update": UpdateFigures, "cross-machine": CrossMachineFigures,
}
"""Family -> the class of its figures (drift's are a map noise kind -> `NoiseDrift`, `drift_figures`)."""


@dataclass
class FamilyResult(Record):
    """One family's result for one engine."""

    status: str
    """`ok`, `failed`, `skipped` or `not-measured`."""
    figures: dict[str, Any] = field(default_factory=dict)
    """Its figures (see the module docstring)."""
    reason: str | None = None
    """Why it was not measured."""

    @property
    def measured(self) -> bool:
        """Whether the family was measured (status `ok`): only then are its figures read."""
        return self.status == FAMILY_OK

    def typed_figures(self, family: str) -> Record | None:
        """The figures as `FAMILY_FIGURES[family]` (None for a family without a class: drift, see
        `drift_figures`)."""
        cls = FAMILY_FIGURES.get(family)
        return None if cls is None else cls.from_json(self.figures, f"family {family}", "figures")

    def drift_figures(self) -> dict[str, NoiseDrift]:
        """The drift family's figures: noise kind -> its figures."""
        return {kind: NoiseDrift.from_json(v, "family drift", f"figures.{kind}") for kind, v in self.figures.items()}


@dataclass
class NotMeasured(Record):
    """A level the grade could not decide."""

    level: int
    """The CTL level."""
    reason: str
    """Why it was not measured."""


@dataclass
class Grade(Record):
    """The CTL grade and why."""

    level: int | None = None
    """CTL 0-4 (None: not measured)."""
    label: str | None = None
    """`CTL n` with its name."""
    name: str | None = None
    """The level's name."""
    reasons: list[str] = field(default_factory=list)
    """Why the level is what it is."""
    flags: list[Flag] = field(default_factory=list)
    """Flags shown beside the level."""
    not_measured: list[NotMeasured] = field(default_factory=list)
    """Levels that could not be decided, and why."""


@dataclass
class EngineResult(Record):
    """One engine's determinism."""

    status: str
    """`ok`, `skipped` (unavailable) or `failed`."""
    reason: str | None = None
    """Why it was skipped or failed."""
    level: int | None = None
    """Its CTL level (None: not measured)."""
    label: str | None = None
    """The level's label."""
    grade: Grade | None = None
    """The grade and its reasons."""
    drift: dict[str, float] = field(default_factory=dict)
    """Noise kind -> drift (1 - Jaccard@k against the base)."""
    families: dict[str, FamilyResult | None] = field(default_factory=dict)
    """Family -> its result."""
    flags: list[Flag] = field(default_factory=list)
    """Flags raised."""
    identity: EngineIdentity | None = None
    """The engine's identity."""
    fingerprint: str | None = None
    """Its fingerprint file, relative to the run."""

    def family(self, name: str) -> tuple[Any, str | None]:
        """(`name`'s typed figures, None) when the family was measured; (None, why not: its status, or `not
        measured` when the record has no result for it) otherwise."""
        fam = self.families.get(name)
        if fam is not None and fam.measured:
            return fam.typed_figures(name), None
        return None, (fam.status if fam is not None else None) or "not measured"


@dataclass
class DeterminismResults(Record):
    """What a determinism run measured (run.json's `results`)."""

    engines: dict[str, EngineResult] = field(default_factory=dict)
    """Engine spec -> its result."""
    corpus: dict[str, Any] = field(default_factory=dict)
    """The corpus summary (name, rev, hash, files, bytes, skipped ...)."""
    k: int | None = None
    """Results per query compared."""
    queries: list[str] = field(default_factory=list)
    """The queries asked."""


CLASSES = (DeterminismSpec, DeterminismUnit, DeterminismResults)
"""(settings, unit, results) of the suite: its entry in `ctxgauge.results.SUITES`."""
