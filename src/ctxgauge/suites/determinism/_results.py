"""The results of a determinism run: per engine its level, families, flags and fingerprint."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._levels import Evidence, Flag, Grade, grade
from ._work import FAILED, OK, FamilyResult

__all__ = ["DeterminismResult", "EngineResult", "evidence_of"]

MEASURED = "measured"
"""Engine status: it ran; its level says how it did (possibly `not measured` when families failed)."""
SKIPPED = "skipped"
"""Engine status: unavailable here (a missing optional dependency), with the reason. Never a pass."""
ENGINE_FAILED = "failed"
"""Engine status: its base build or base queries failed; the reason holds the error."""


def evidence_of(families: Mapping[str, FamilyResult], flags: list[Flag]) -> Evidence:
    """The grading's view of the family results."""
    missing = {}
    for name, fam in families.items():
        if fam.status != OK:
            missing[name] = f"{'failed: ' if fam.status == FAILED else ''}{fam.reason}"
    rebuild, query, cross = families.get("rebuild"), families.get("query"), families.get("cross-machine")
    rb = rebuild.figures if rebuild is not None and rebuild.status == OK else {}
    qs = query.figures if query is not None and query.status == OK else {}
    cm = cross.figures if cross is not None and cross.status == OK else {}
    first = (cm.get("comparisons") or [{}])[0].get("reasons") or [None]
    return Evidence(
        rebuild_identical=rb.get("identical"),
        rebuild_distinct=rb.get("distinct_hashes"),
        exact_match_rate=qs.get("exact_match_rate"),
        span_exact_match_rate=qs.get("span_exact_match_rate"),
        mean_jaccard=qs.get("mean_jaccard"),
        mean_tau=qs.get("mean_kendall_tau"),
        cross_machine=cm.get("verdict"),
        cross_machine_reason=first[0],
        missing=missing,
        flags=flags,
    )


@dataclass
class EngineResult:
    """One engine's outcome."""

    engine: str
    """The engine spec string (the key of `engines` in the JSON)."""
    status: str
    """measured, skipped or failed."""
    reason: str | None = None
    """Why it was skipped or failed."""
    identity: dict[str, Any] | None = None
    """The engine's `identity()`."""
    families: dict[str, FamilyResult] = field(default_factory=dict)
    """Family name -> its result (every family appears; unrun ones as not measured with the reason)."""
    flags: list[Flag] = field(default_factory=list)
    """Flags on the results (degenerate)."""
    fingerprint_record: str | None = None
    """The fingerprint's path relative to the run directory."""
    fingerprint_path: Path | None = None
    """The fingerprint file to show the user (in --fingerprint-dir when given)."""

    @property
    def grade(self) -> Grade:
        """The level the families support (Grade.level None: not measured)."""
        return grade(evidence_of(self.families, self.flags))

    @property
    def drift(self) -> dict[str, float]:
        """Noise kind -> drift (1 - mean Jaccard@k vs base), for the kinds measured."""
        fam = self.families.get("drift")
        if fam is None or fam.status != OK:
            return {}
        return {kind: fig["drift"] for kind, fig in fam.figures.items() if "drift" in fig}

    def to_json(self, *, record: bool = False) -> dict[str, Any]:
        """`{level, label, grade, drift, families, flags, fingerprint, status, reason, identity}`.

        `record` gives the run record's form, whose fingerprint path is relative to the run directory.
        """
        g = self.grade
        label = "skipped" if self.status == SKIPPED else g.label
        fingerprint = self.fingerprint_record if record else (
            str(self.fingerprint_path) if self.fingerprint_path is not None else None)
        return {
            "status": self.status,
            "reason": self.reason,
            "identity": self.identity,
            "level": None if self.status == SKIPPED else g.level,
            "label": label,
            "grade": g.to_json(),
            "drift": self.drift,
            "families": {name: fam.to_json() for name, fam in self.families.items()},
            "flags": [f.to_json() for f in self.flags],
            "fingerprint": fingerprint,
        }


@dataclass
class DeterminismResult:
    """A finished determinism run."""

    run_dir: Path
    """The run directory (run.json, units.jsonl, fingerprints/)."""
    corpus: dict[str, Any]
    """The corpus summary (name, rev, files, hash, skipped by reason)."""
    queries: list[str]
    """The queries, in order."""
    k: int
    """Results per query."""
    engines: dict[str, EngineResult]
    """Engine spec -> result, in the order given."""

    def to_json(self, *, record: bool = False) -> dict[str, Any]:
        """`{run_dir, corpus, queries, k, engines: {name: {level, families, flags, fingerprint, ...}}}`;
        the record form leaves out run_dir (a record names no local path)."""
        out: dict[str, Any] = {} if record else {"run_dir": str(self.run_dir)}
        out.update(corpus=self.corpus, queries=self.queries, k=self.k,
                   engines={name: e.to_json(record=record) for name, e in self.engines.items()})
        return out
