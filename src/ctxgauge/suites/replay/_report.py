"""Phase 5 of a replay, results: the summary, the code-vs-rest split, counts, and the `--json` shape.

Everything here is derived from units (typed: `ctxgauge.results.ReplayUnit`), so a resumed run's earlier
units count exactly like new ones; what it builds is the typed `ReplayResults` the run records.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ctxgauge.metrics.scoring import summarise
from ctxgauge.results import KindSummary, ReplayCounts, ReplayResults, ReplayUnit
from ctxgauge.suites._retrieval import ContextSpec, context_summary
from ctxgauge.suites.replay._select import SKIP_REASONS

COVERAGE_GAP = "coverage_gap"
"""Summary key of the coverage-gap share: expected files not indexed / all expected files, over the
commits replayed (a ratio of totals, so a commit with eight expected files weighs eight times one with one)."""


def _gap_share(units: Sequence[ReplayUnit]) -> float | None:
    gap = sum(len(u.coverage_gap or ()) for u in units)
    expected = sum(len(u.expected or ()) for u in units)
    return gap / expected if expected else None


def _context(parts: Sequence, context: ContextSpec | None) -> dict[str, float | None]:
    """The context figures over the parts (the units, or their `vs`): macro means and micro ratios."""
    if context is None:
        return {}
    return context_summary([(p.figures, p.context.pairs if p.context is not None else {}) for p in parts], context)


def summary(units: Sequence[ReplayUnit], metrics: Sequence[str],
            context: ContextSpec | None = None) -> dict[str, float | None]:
    """Metric -> mean over the ok units where it is defined, plus `coverage_gap`, then, with `context`,
    the context metrics (`suites._retrieval.context_summary`)."""
    ok = [u for u in units if u.ok]
    out = summarise([u.figures for u in ok], metrics)
    out[COVERAGE_GAP] = _gap_share(ok)
    out.update(_context(ok, context))
    return out


def vs_summary(units: Sequence[ReplayUnit], metrics: Sequence[str],
               context: ContextSpec | None = None) -> dict[str, float | None] | None:
    """The same summary for the `--vs` engine (None without one)."""
    ok = [u for u in units if u.ok and u.vs is not None]
    if not ok:
        return None
    out = summarise([u.vs.figures for u in ok], metrics)
    out[COVERAGE_GAP] = _gap_share(ok)
    out.update(_context([u.vs for u in ok], context))
    return out


def by_kind(units: Sequence[ReplayUnit], metrics: Sequence[str],
            context: ContextSpec | None = None) -> dict[str, KindSummary]:
    """`code` and `other`: commits touching code files vs the rest."""
    out = {}
    for kind, flag in (("code", True), ("other", False)):
        group = [u for u in units if u.ok and bool(u.code) is flag]
        out[kind] = KindSummary(commits=len(group), summary=summary(group, metrics, context))
    return out


def skipped_counts(units: Sequence[ReplayUnit]) -> dict[str, int]:
    """Reason -> number of skipped commits, every reason present."""
    out = {r: 0 for r in SKIP_REASONS}
    for u in units:
        if u.status == "skipped":
            out[u.reason] = out.get(u.reason, 0) + 1
    return out


def counts(units: Sequence[ReplayUnit]) -> ReplayCounts:
    """walked, eligible (replayed or failed), ok, scored (ok with something to score), failed, skipped."""
    ok = [u for u in units if u.ok]
    failed = [u for u in units if u.status == "failed"]
    scored = [u for u in ok if any(v is not None for v in u.figures.values())]
    return ReplayCounts(walked=len(units), replayed=len(ok) + len(failed), ok=len(ok), scored=len(scored),
                        failed=len(failed), skipped=len(units) - len(ok) - len(failed))


def commit_entry(unit: ReplayUnit) -> dict:
    """One element of `commits` in the `--json` shape."""
    entry = {
        "sha": unit.id, "status": unit.status, "reason": unit.reason,
        "request": unit.request, "expected": unit.expected or [],
        "tests": unit.tests or [], "coverage_gap": unit.coverage_gap or [],
        "coverage_gap_share": _gap_share([unit]), "code": unit.code,
        "figures": unit.figures, "ranking": [r.to_json() for r in unit.ranking or []],
    }
    if unit.context is not None:
        entry["gold_lines"] = unit.gold_lines
        if unit.gold_blocks:
            entry["gold_blocks"] = unit.gold_blocks
        entry["context"] = unit.context.to_json()
    if unit.vs is not None:
        entry["vs"] = unit.vs.to_json()
    return entry


@dataclass
class ReplayResult:
    """What a replay measured: the typed results its run records, the commits and where it is;
    `to_dict()` is the `--json` shape."""

    run_dir: Path
    """Where the run is recorded."""
    results: ReplayResults
    """What the run record keeps under `results` (the one typed model its readers read too)."""
    commits: list[ReplayUnit]
    """Every replayed commit (ok or failed), newest first, as its unit (`commit_entry` is its `--json`
    entry)."""

    @property
    def passed(self) -> bool:
        """False only when a baseline gate line fails."""
        return self.results.gate is None or self.results.gate.passed

    def to_dict(self) -> dict:
        """The `--json` shape: the results (summary, skipped, counts, comparison with --vs, gate with
        --baseline ...), commits and run_dir."""
        return {**self.results.to_json(), "commits": [commit_entry(u) for u in self.commits],
                "run_dir": str(self.run_dir)}
