"""Phase 5 of a replay, results: the summary, the code-vs-rest split, counts, and the `--json` shape.

Everything here is derived from units, so a resumed run's earlier units count exactly like new ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ctxgauge.metrics.scoring import summarise
from ctxgauge.suites.replay._select import SKIP_REASONS

COVERAGE_GAP = "coverage_gap"
"""Summary key of the coverage-gap share: expected files not indexed / all expected files, over the
commits replayed (a ratio of totals, so a commit with eight expected files weighs eight times one with one)."""


def _gap_share(units: Sequence[dict]) -> float | None:
    gap = sum(len(u.get("coverage_gap") or ()) for u in units)
    expected = sum(len(u.get("expected") or ()) for u in units)
    return gap / expected if expected else None


def summary(units: Sequence[dict], metrics: Sequence[str]) -> dict[str, float | None]:
    """Metric -> mean over the ok units where it is defined, plus `coverage_gap`."""
    ok = [u for u in units if u.get("status") == "ok"]
    out = summarise([u["figures"] for u in ok], metrics)
    out[COVERAGE_GAP] = _gap_share(ok)
    return out


def vs_summary(units: Sequence[dict], metrics: Sequence[str]) -> dict[str, float | None] | None:
    """The same summary for the `--vs` engine (None without one)."""
    ok = [u for u in units if u.get("status") == "ok" and "vs" in u]
    if not ok:
        return None
    out = summarise([u["vs"]["figures"] for u in ok], metrics)
    out[COVERAGE_GAP] = _gap_share(ok)
    return out


def by_kind(units: Sequence[dict], metrics: Sequence[str]) -> dict[str, dict]:
    """`{code: {commits, summary}, other: {commits, summary}}`: commits touching code files vs the rest."""
    out = {}
    for kind, flag in (("code", True), ("other", False)):
        group = [u for u in units if u.get("status") == "ok" and bool(u.get("code")) is flag]
        out[kind] = {"commits": len(group), "summary": summary(group, metrics)}
    return out


def skipped_counts(units: Sequence[dict]) -> dict[str, int]:
    """Reason -> number of skipped commits, every reason present."""
    out = {r: 0 for r in SKIP_REASONS}
    for u in units:
        if u.get("status") == "skipped":
            out[u["reason"]] = out.get(u["reason"], 0) + 1
    return out


def counts(units: Sequence[dict]) -> dict[str, int]:
    """walked, eligible (replayed or failed), ok, scored (ok with something to score), failed, skipped."""
    ok = [u for u in units if u.get("status") == "ok"]
    failed = [u for u in units if u.get("status") == "failed"]
    scored = [u for u in ok if any(v is not None for v in u["figures"].values())]
    return {"walked": len(units), "replayed": len(ok) + len(failed), "ok": len(ok), "scored": len(scored),
            "failed": len(failed), "skipped": len(units) - len(ok) - len(failed)}


def commit_entry(unit: dict) -> dict:
    """One element of `commits` in the `--json` shape."""
    entry = {
        "sha": unit["id"], "status": unit["status"], "reason": unit.get("reason"),
        "request": unit.get("request"), "expected": unit.get("expected", []),
        "tests": unit.get("tests", []), "coverage_gap": unit.get("coverage_gap", []),
        "coverage_gap_share": _gap_share([unit]), "code": unit.get("code"),
        "figures": unit.get("figures") or {}, "ranking": unit.get("ranking", []),
    }
    if "vs" in unit:
        entry["vs"] = unit["vs"]
    return entry


@dataclass
class ReplayResult:
    """What a replay measured; `to_dict()` is the `--json` shape."""

    run_dir: Path
    """Where the run is recorded."""
    engine: str
    """The measured engine's spec."""
    vs: str | None
    """The compared engine's spec, if any."""
    summary: dict[str, float | None]
    """Metric -> mean over the replayed commits (and `coverage_gap`)."""
    vs_summary: dict[str, float | None] | None
    """The same for the `--vs` engine."""
    by_kind: dict[str, dict]
    """The summary split into commits touching code and the rest."""
    commits: list[dict]
    """One entry per replayed commit (ok or failed), newest first."""
    skipped: dict[str, int]
    """Reason -> skipped commits."""
    counts: dict[str, int]
    """How many commits were walked, replayed, scored, failed, skipped."""
    comparison: dict | None
    """With --vs: the paired comparison per metric."""
    gate: dict | None
    """With --baseline: the regression gate's lines."""

    @property
    def passed(self) -> bool:
        """False only when a baseline gate line fails."""
        return self.gate is None or bool(self.gate["passed"])

    def results(self) -> dict:
        """What the run record keeps under `results` (commits live in the units)."""
        out = {"engine": self.engine, "vs": self.vs, "summary": self.summary, "vs_summary": self.vs_summary,
               "by_kind": self.by_kind, "skipped": self.skipped, "counts": self.counts}
        if self.comparison is not None:
            out["comparison"] = self.comparison
        if self.gate is not None:
            out["gate"] = self.gate
        return out

    def to_dict(self) -> dict:
        """The `--json` shape: summary, commits, skipped (+ comparison with --vs), run_dir, and the rest."""
        return {**self.results(), "commits": self.commits, "run_dir": str(self.run_dir)}
