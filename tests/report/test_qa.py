"""The qa part of the report: accuracy with its interval, tokens and cost per correct answer, verdicts."""

from __future__ import annotations

import math

from ctxgauge.metrics import bootstrap_ci
from ctxgauge.report import BarsFigure, GridFigure, Table, build_report, discover_runs
from ctxgauge.report._common import N_RESAMPLES
from ctxgauge.report._qa import ACCURACY_SEED


def _section(root):
    return next(s for s in build_report(discover_runs(root)).sections if s.suite == "qa")


def _run(tmp_path, factory):
    factory.qa_run(tmp_path, "q", {"none": ["fail", "pass", "fail", "fail"],
                                   "context:bm25@5": ["pass", "pass", "pass", "fail"],
                                   "tool:bm25": [None, None, None, None]},
                   tokens={"none": 400, "context:bm25@5": 3000}, cost={"none": 0.001, "context:bm25@5": None},
                   skipped=["tool:bm25"])
    return _section(tmp_path)


def test_accuracy_bars_carry_a_bootstrap_interval_over_questions(tmp_path, factory):
    sec = _run(tmp_path, factory)
    acc = next(b for b in sec.blocks if isinstance(b, BarsFigure)).panels[0]
    bars = {b.label: b for b in acc.bars}
    assert bars["context:bm25@5"].value == 3 / 4
    _, low, high = bootstrap_ci([1.0, 1.0, 1.0, 0.0], seed=ACCURACY_SEED, n_resamples=N_RESAMPLES)
    assert (bars["context:bm25@5"].low, bars["context:bm25@5"].high) == (low, high)
    assert bars["tool:bm25"].value is None  # skipped: not measured, never 0


def test_tokens_and_cost_per_correct_answer(tmp_path, factory):
    sec = _run(tmp_path, factory)
    cost = next(b for b in sec.blocks if isinstance(b, BarsFigure) and "costs" in b.title)
    tpc = {b.label: b.value for b in cost.panels[0].bars}
    cpc = {b.label: b.value for b in cost.panels[1].bars}
    assert tpc == {"none": 400 / 1, "context:bm25@5": 3000 / 3, "tool:bm25": None}
    assert cpc["none"] == 0.001 / 1 and cpc["context:bm25@5"] is None  # an unpriced model is not free
    table = next(b for b in sec.blocks if isinstance(b, Table) and b.title.startswith("Arms"))
    row = {r[0].text: r for r in table.rows}
    assert [c.text for c in row["context:bm25@5"][2:8]] == ["75.0%", "3/4", "3,000", "1,000", "-", "-"]
    assert row["tool:bm25"][1].text == "skipped" and row["tool:bm25"][4].text == "-"
    assert any("tool:bm25: skipped: no model configured" in n for n in sec.notes)


def test_verdict_grid_has_a_cell_per_question(tmp_path, factory):
    grid = next(b for b in _run(tmp_path, factory).blocks if isinstance(b, GridFigure))
    rows = {r.label: r.cells for r in grid.rows}
    assert rows["context:bm25@5"] == ["pass", "pass", "pass", "fail"]
    assert rows["tool:bm25"] == ["absent"] * 4
    assert [c[0] for c in grid.columns] == ["q01", "q02", "q03", "q04"]
    assert math.isclose(len(grid.columns), 4)


def test_an_arm_measured_alike_in_two_runs_is_one_row_and_others_name_their_run(tmp_path, factory):
    same = {"none": ["fail", "pass"], "context:bm25@5": ["pass", "pass"]}
    factory.qa_run(tmp_path, "qa-1", same)
    factory.qa_run(tmp_path, "qa-2", same)  # a second run that measured exactly the same
    factory.qa_run(tmp_path, "qa-3", {"none": ["fail", "fail"], "context:bm25@5": ["pass", "pass"]})
    sec = _section(tmp_path)
    table = next(b for b in sec.blocks if isinstance(b, Table) and b.title.startswith("Arms"))
    assert [row[0].text for row in table.rows] == ["none · qa-1", "context:bm25@5", "none · qa-3"]
    assert table.sources == ["qa-1", "qa-2", "qa-3"]
    acc = next(b for b in sec.blocks if isinstance(b, BarsFigure)).panels[0]
    assert [(b.label, b.value) for b in acc.bars] == [("none · qa-1", 1 / 2), ("context:bm25@5", 1.0),
                                                      ("none · qa-3", 0.0)]


def test_an_arms_label_and_status_stay_whole_in_a_narrow_terminal(tmp_path, factory):
    import io

    from rich.console import Console

    from ctxgauge.report import render_terminal

    factory.qa_run(tmp_path, "q", {"none": [None, None], "context:bm25@5": ["pass", "fail"]}, skipped=["none"])
    console = Console(file=io.StringIO(), width=80, color_system=None)
    render_terminal(build_report(discover_runs(tmp_path)), console)
    arms_table = console.file.getvalue().split("Arms: accuracy")[1].split("Cost is estimated")[0]
    # Other columns fold to make room; `context:b` over `m25@5` would read as two things.
    assert "│ context:bm25@5 │ measured │" in arms_table and "│ none           │ skipped  │" in arms_table
