"""Reports: one model built from run records, rendered for a terminal, as Markdown and as one HTML file.

    from ctxgauge.report import load_runs, build_report, render_terminal, write_html, write_markdown
    report = build_report(load_runs(["ctxgauge-runs"]))
    write_html(report, "report.html")      # self-contained: inline CSS and SVG, no script, no request

The model (`_model`) is sections of tables and figures, each naming the runs it comes from; each suite's
part lives in its own module (`_retrieval` for replay and cases, `_determinism`, `_qa`); the derived
summaries an export publishes (leaderboard, per-question, per-case, runs) are in `_summaries`. Reports read
run records only: nothing here runs an engine or a model.
"""

from ctxgauge.report._build import build_report, dataset, model, systems
from ctxgauge.report._html import render_html, write_html
from ctxgauge.report._markdown import render_markdown, write_markdown
from ctxgauge.report._model import (
    Bar, BarsFigure, Cell, GridFigure, GridRow, Panel, PairedFigure, PairedRow, Report, Section, Table,
)
from ctxgauge.report._runs import FINISHED, RunRef, discover_runs, is_export_dir, load_runs
from ctxgauge.report._summaries import SUMMARY_FILES, summaries
from ctxgauge.report._terminal import render_terminal

__all__ = [
    "Bar", "BarsFigure", "Cell", "FINISHED", "GridFigure", "GridRow", "Panel", "PairedFigure", "PairedRow", "Report",
    "RunRef", "SUMMARY_FILES", "Section", "Table", "build_report", "dataset", "discover_runs", "is_export_dir",
    "load_runs", "model", "render_html", "render_markdown", "render_terminal", "summaries", "systems", "write_html",
    "write_markdown",
]
