"""The report's paired comparison lists the context figures `results.comparison` holds (line and block
coverage at the run's middle budget, the area under line coverage), and still fits 80 columns."""

from __future__ import annotations

import io

from rich.console import Console

from ctxgauge.report import PairedFigure, build_report, discover_runs
from ctxgauge.report._terminal import render_terminal
from ctxgauge.suites.replay import ReplayConfig, replay

CALC = ("import math\n\ndef area(r):\n    return math.pi * r * r\n\ndef volume(r):\n    h = 2\n"
        "    return area(r) * h\n")


def test_paired_table_lists_context_figures_at_80_columns(tmp_path, repo_builder):
    b = repo_builder("calc")
    b.commit("Add calc", {"lib/calc.py": CALC, "lib/notes.md": "Shelving notes.\n"})
    b.commit("Raise the volume height", {"lib/calc.py": CALC.replace("h = 2", "h = 3")})
    b.commit("Shelving notes wording", {"lib/notes.md": "Shelving notes, reworded.\n"})
    result = replay(ReplayConfig(repo=b.path, engine="bm25(spans=true)", vs="grep", ks=(1,), depth=5,
                                 budgets=(500, 2000, 8000), out=tmp_path / "runs" / "r"))
    comp = result.results.comparison.metrics
    report = build_report(discover_runs(tmp_path / "runs"))
    section = next(s for s in report.sections if s.suite == "replay")
    paired = next(x for x in section.blocks if isinstance(x, PairedFigure))
    names = [r.metric for r in paired.rows]
    # The ranking metrics first, then the middle budget's (2000) line and block coverage and the area.
    assert names[-3:] == ["line_coverage_tokens@2000", "block_coverage_tokens@2000", "line_coverage_auc"]
    row = paired.rows[-1]
    assert (row.diff, row.low, row.high) == (comp["line_coverage_auc"].mean_diff,
                                              comp["line_coverage_auc"].ci_low, comp["line_coverage_auc"].ci_high)
    out = io.StringIO()
    render_terminal(report, Console(file=out, width=80, force_terminal=False, color_system=None))
    text = out.getvalue()
    assert "block_coverage_tokens@2000" in text
    assert max(len(line) for line in text.splitlines()) <= 80
