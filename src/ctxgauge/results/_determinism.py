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


@dataclass
class FamilyResult(Record):
    """One family's result for one engine."""

    status: str
    """`ok`, `failed`, `skipped` or `not-measured`."""
    figures: dict[str, Any] = field(default_factory=dict)
    """Its figures (see the module docstring)."""
    reason: str | None = None
    """Why it was not measured."""


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
