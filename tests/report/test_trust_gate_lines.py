"""The trust gate collapses what was not measured into one line (issue 39, item 9: a demo without a model
showed a four-line bold title naming every check over one row per not-measured check)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from ctxgauge.report import Table, build_report, load_runs, render_html, render_terminal

DEMO = Path(__file__).parents[1] / "records" / "fixtures" / "v2" / "demo"


def _trust(model) -> list[Table]:
    return [b for s in model.sections for b in s.blocks if isinstance(b, Table) and b.title.startswith("Trust gate")]


def test_not_measured_checks_are_one_line():
    model = build_report(load_runs([DEMO]))
    main, why = _trust(model)
    checks = load_runs([DEMO / "qa"])[0].results.trust.checks
    missing = [c for c in checks if c.status == "not-measured"]
    measured = [c for c in checks if c.status != "not-measured"]
    assert len(missing) == 8 and len(measured) == 1
    assert main.title == f"Trust gate: pass on 1 of {len(checks)} checks; 8 not measured"
    assert [r[0].text for r in main.rows] == [c.name for c in measured]
    assert main.caption.startswith("Not measured (8): questions_scored, zero_score_share, "
                                   "context_arm_mean[context:bm25@5], ")
    assert why.detail and [r[0].text for r in why.rows] == [c.name for c in missing]
    assert [r[3].text for r in why.rows] == [c.detail for c in missing]

    buf = io.StringIO()
    render_terminal(model, Console(file=buf, width=120, color_system=None))
    lines = buf.getvalue().splitlines()
    title = [i for i, line in enumerate(lines) if line.startswith("Trust gate")]
    assert len(title) == 1 and lines[title[0] + 1].startswith("┏")  # a one-line title, then the table
    assert sum("not-measured" in line for line in lines) == 0  # no row per check not measured

    html = render_html(model)
    assert html.count("<summary>Trust gate: why 8 checks were not measured</summary>") == 1
