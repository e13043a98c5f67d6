"""Reports: one model built from run records, rendered for a terminal, as Markdown and as one HTML file.

    from ctxgauge.report import load_runs, build_report, render_terminal, write_html, write_markdown
    report = build_report(load_runs(["ctxgauge-runs"]))
    write_html(report, "report.html")      # self-contained: inline CSS and SVG, no script, no request

The model (`_model`) is sections of tables and figures, each naming the runs it comes from. Each suite is
read through its entry in the one registry of suite views (`_views`: section, leaderboard attempts,
per-item rows); the suites' parts live in their own modules (`_retrieval`, `_determinism`, `_qa` and
`_qa_rows`). Every run a command reads is checked once, the same way (`_check.check_run`: its suite's
typed classes, foreign unit lines); `load_runs` here is the checked one, and hands out
`ctxgauge.results.TypedRun`s: every view reads a run's spec, results and units as its suite's typed
classes, by attribute. Nothing here runs an engine or a model, and nothing here knows the export that
publishes it.

    cli ─▶ export ─▶ report ─▶ results ─▶ records
"""

from ctxgauge.records import FINISHED, RunRef, discover_runs, is_export_dir
from ctxgauge.report._check import RunCheck, check_run, load_runs, read_checked
from ctxgauge.report._build import build_report
from ctxgauge.report._common import interval
from ctxgauge.report._html import render_html, write_html
from ctxgauge.report._leaderboard import Attempt, Value
from ctxgauge.report._markdown import render_markdown, write_markdown
from ctxgauge.report._model import (
    Bar, BarsFigure, Cell, GridFigure, GridRow, Panel, PairedFigure, PairedRow, Report, Section, Table,
)
from ctxgauge.report._misses import ExpectedFile, Miss, misses
from ctxgauge.report._terminal import render_details, render_terminal
from ctxgauge.report._views import VIEWS, SuiteView, dataset, headline, model, register, systems, view

__all__ = [
    "Attempt", "Bar", "BarsFigure", "Cell", "ExpectedFile", "FINISHED", "Miss", "GridFigure", "GridRow", "Panel", "PairedFigure", "PairedRow",
    "Report", "RunCheck", "check_run", "read_checked", "RunRef", "Section", "SuiteView", "Table", "VIEWS", "Value", "build_report", "dataset", "discover_runs",
    "headline", "interval", "is_export_dir", "load_runs", "misses", "model", "register", "render_html", "render_markdown",
    "render_details", "render_terminal", "systems", "view", "write_html", "write_markdown",
]
