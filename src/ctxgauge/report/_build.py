"""Building the report model from runs: the runs table, then one section per suite present."""

from __future__ import annotations

from typing import Callable, Sequence

from ctxgauge.report import _determinism, _qa, _retrieval
from ctxgauge.report._common import dnf_note, status_cell
from ctxgauge.report._model import Cell, Report, Section, Table
from ctxgauge.report._runs import RunRef

SUITE_ORDER = ("replay", "cases", "determinism", "qa")
"""Sections appear in this order; a suite this ctxgauge does not know gets a plain list at the end."""


def systems(run: RunRef) -> list[str]:
    """What a run measured: engines (retrieval, determinism) or arms (qa)."""
    if run.suite in ("replay", "cases"):
        return _retrieval.systems(run)
    if run.suite == "determinism":
        return _determinism.systems(run)
    if run.suite == "qa":
        return _qa.systems(run)
    return [str(run.spec.get("engine"))] if run.spec.get("engine") else []


def dataset(run: RunRef) -> str:
    """What a run measured on: a repository, a corpus or a battery."""
    if run.suite in ("replay", "cases"):
        return _retrieval.dataset(run)
    if run.suite == "determinism":
        return _determinism.dataset(run) if run.results else str((run.spec.get("corpus") or {}).get("name") or "-")
    if run.suite == "qa":
        return _qa.dataset(run)
    return "-"


def model(run: RunRef) -> str:
    """The answer model of a qa run ('' for the suites that use none)."""
    return _qa.model(run) if run.suite == "qa" else ""


def _overview(runs: Sequence[RunRef]) -> Table:
    rows = []
    for r in runs:
        counts = r.record.get("counts") or {}
        units = "/".join(str(counts.get(k, 0)) for k in ("ok", "failed", "skipped")) if counts else "-"
        timing = r.record.get("timing") or {}
        when = str(timing.get("finished_at") or timing.get("started_at") or "-").replace("T", " ").rstrip("Z")
        rows.append([Cell(r.rel, run=r.rel), Cell(r.suite), status_cell(r), Cell(", ".join(systems(r)) or "-"),
                     Cell(dataset(r)), Cell(when, wrap=False), Cell(units, num=True)])
    return Table("Runs", ["run", "suite", "status", "engines / arms", "dataset", "finished (UTC)",
                          "units ok/failed/skipped"], rows, sources=[r.rel for r in runs],
                 caption="Every run read. A run that did not finish is published here and left out of every "
                 "figure and mean below.")


def _other(suite: str, runs: Sequence[RunRef]) -> Section:
    return Section(suite, f"{suite}: a suite this version of ctxgauge cannot draw",
                   notes=[f"{r.rel}: {r.status}" for r in runs] + dnf_note([]))


SECTIONS: dict[str, Callable[[Sequence[RunRef]], Section]] = {
    "replay": lambda runs: _retrieval.section("replay", runs),
    "cases": lambda runs: _retrieval.section("cases", runs),
    "determinism": _determinism.section,
    "qa": _qa.section,
}


def build_report(runs: Sequence[RunRef], title: str = "ctxgauge report") -> Report:
    """The report model of `runs` (finished or not); deterministic: the same runs give the same model."""
    runs = sorted(runs, key=lambda r: r.rel.encode())
    suites = [s for s in SUITE_ORDER if any(r.suite == s for r in runs)]
    suites += sorted({r.suite for r in runs} - set(SUITE_ORDER))
    sections = []
    for suite in suites:
        group = [r for r in runs if r.suite == suite]
        sections.append(SECTIONS.get(suite, lambda g, s=suite: _other(s, g))(group))
    return Report(title=title, runs={r.rel: r.suite for r in runs}, overview=_overview(runs), sections=sections,
                  run_paths={r.rel: str(r.path) for r in runs})
