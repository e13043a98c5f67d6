"""Building the report model from runs: the runs table, then one section per suite present (`_views`)."""

from __future__ import annotations

from typing import Sequence

from ctxgauge.records import RunRef
from ctxgauge.results import TypedRun, typed
from ctxgauge.report._common import status_cell
from ctxgauge.report._model import Cell, Report, Table
from ctxgauge.report._views import UNKNOWN, dataset, suite_order, systems, view


RUNS_CAPTION = "Every run read. A run that did not finish is published here and left out of every figure and mean above."
"""The Runs table's caption. Every view shows the figures first and this table last (issue 39, item 4: the
terminal did, Markdown and HTML put it first), so the figures it speaks of are above it."""


def _overview(runs: Sequence[TypedRun]) -> Table:
    rows = []
    for r in runs:
        counts = r.record.counts
        units = "/".join(str(counts.get(k, 0)) for k in ("ok", "failed", "skipped")) if counts else "-"
        timing = r.record.timing
        when = str(timing.get("finished_at") or timing.get("started_at") or "-").replace("T", " ").rstrip("Z")
        rows.append([Cell(r.rel, run=r.rel), Cell(r.suite), status_cell(r), Cell(", ".join(systems(r)) or "-"),
                     Cell(dataset(r)), Cell(when, wrap=False), Cell(units, num=True)])
    return Table("Runs", ["run", "suite", "status", "engines / arms", "dataset", "finished (UTC)",
                          "units ok/failed/skipped"], rows, sources=[r.rel for r in runs],
                 caption=RUNS_CAPTION)


def build_report(runs: Sequence[RunRef | TypedRun], title: str = "ctxgauge report") -> Report:
    """The report model of `runs` (finished or not); deterministic: the same runs give the same model.
    Each run is read through its suite's typed classes here (`ctxgauge.results.typed`; a run from
    `load_runs` already is), and every section receives those."""
    runs = sorted((typed(r) for r in runs), key=lambda r: r.rel.encode())
    sections = []
    for suite in suite_order({r.suite for r in runs}):
        v = view(suite)
        heading = f"{suite}: {v.title}" if v is UNKNOWN else v.title
        sections.append(v.section(suite, heading, [r for r in runs if r.suite == suite]))
    return Report(title=title, runs={r.rel: r.suite for r in runs}, overview=_overview(runs), sections=sections,
                  run_paths={r.rel: str(r.path) for r in runs})
