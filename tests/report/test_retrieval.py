"""The replay and cases part of the report: means and intervals recomputed from units, paired comparison,
hit map, known gaps and runs that did not finish. Expected values are written as formulas."""

from __future__ import annotations

import math

from ctxgauge.metrics import bootstrap_ci
from ctxgauge.report import BarsFigure, GridFigure, PairedFigure, Table, build_report, discover_runs
from ctxgauge.report._common import N_RESAMPLES


def _section(root, suite):
    report = build_report(discover_runs(root))
    return next(s for s in report.sections if s.suite == suite)


def test_bars_are_unit_means_with_seeded_intervals(tmp_path, factory):
    factory.replay_run(tmp_path, "r", [1, 2, 5, None], [2, 2, None, None], seed=7)
    bars = next(b for b in _section(tmp_path, "replay").blocks if isinstance(b, BarsFigure))
    assert [p.metric for p in bars.panels] == ["hit@1", "recall@1", "ndcg@1", "mrr"]
    mrr = next(p for p in bars.panels if p.metric == "mrr")
    bm25, grep = mrr.bars
    assert (bm25.label, grep.label) == ("bm25", "grep")
    values = [1 / 1, 1 / 2, 1 / 5, 0.0]
    assert math.isclose(bm25.value, sum(values) / 4)
    _, low, high = bootstrap_ci(values, seed=7, n_resamples=N_RESAMPLES)
    assert (bm25.low, bm25.high) == (low, high)
    assert math.isclose(grep.value, (1 / 2 + 1 / 2) / 4)
    assert bm25.run == grep.run == "r"


def test_failed_units_stay_out_of_means_and_show_in_the_grid(tmp_path, factory):
    factory.replay_run(tmp_path, "r", [1, None, 1], [1, 1, 1], failed=[1])
    sec = _section(tmp_path, "replay")
    hit = next(b for b in sec.blocks if isinstance(b, BarsFigure)).panels[0]
    assert hit.bars[0].value == 1.0  # (1 + 1) / 2: the failed unit is in no denominator
    grid = next(b for b in sec.blocks if isinstance(b, GridFigure))
    assert grid.rows[0].cells == ["hit", "failed", "hit"]
    assert len(grid.columns) == 3 and "request <0>" in grid.columns[0][1]


def test_grid_states_follow_the_smallest_and_largest_k(tmp_path, factory):
    factory.replay_run(tmp_path, "r", [1, 3, None, 0], vs=None)
    grid = next(b for b in _section(tmp_path, "replay").blocks if isinstance(b, GridFigure))
    assert grid.rows[0].cells == ["hit", "near", "miss", "unscorable"]
    assert "top 1" in grid.legend["hit"] and "top 3" in grid.legend["near"]


def test_paired_comparison_keeps_the_runs_metric_order(tmp_path, factory):
    factory.replay_run(tmp_path, "r", [1, 1, 2, None], [2, None, 2, None])
    paired = next(b for b in _section(tmp_path, "replay").blocks if isinstance(b, PairedFigure))
    assert [r.metric for r in paired.rows] == factory.METRICS
    mrr = paired.rows[-1]
    assert (mrr.wins, mrr.ties, mrr.losses) == (2, 2, 0)
    assert paired.n == 4 and (paired.a, paired.b) == ("bm25", "grep")
    assert math.isclose(mrr.diff, ((1 - 0.5) + (1 - 0) + 0 + 0) / 4)


def test_every_metric_table_has_a_column_per_engine(tmp_path, factory):
    factory.replay_run(tmp_path, "r1", [1, 2], [2, 2])
    factory.replay_run(tmp_path, "r2", [1, 1], vs=None, engine="grep")
    table = next(b for b in _section(tmp_path, "replay").blocks if isinstance(b, Table))
    # grep appears in two runs: each column names its run.
    assert table.columns == ["metric", "bm25", "grep · r1", "grep · r2"]
    assert [c.text for c in table.rows[0]] == ["commits scored", "2", "2", "2"]


def test_known_gap_cases_are_drawn_but_never_averaged(tmp_path, factory):
    factory.replay_run(tmp_path, "c", [1, None, None], [1, 1, None], suite="cases", repo="cases.yaml", gaps=[1])
    sec = _section(tmp_path, "cases")
    hit = next(b for b in sec.blocks if isinstance(b, BarsFigure)).panels[0]
    assert hit.bars[0].value == 1 / 2  # cases 0 and 2 only
    grid = next(b for b in sec.blocks if isinstance(b, GridFigure))
    assert len(grid.columns) == 3 and "known gap" in grid.columns[1][1]
    lines = next(b for b in sec.blocks if isinstance(b, Table) and b.title.startswith("Pass lines"))
    assert [c.text for c in lines.rows[0]][1:] == ["recall@3", ">= 0.5", "0.500", "holds"]


def test_a_run_that_did_not_finish_is_named_and_left_out(tmp_path, factory):
    factory.replay_run(tmp_path, "done", [1, 1], vs=None)
    factory.unfinished_run(tmp_path, "crashed")
    sec = _section(tmp_path, "replay")
    assert any(n.startswith("crashed: did not finish (started") for n in sec.notes)
    for block in sec.blocks:
        assert "crashed" not in block.sources


def test_a_regression_gate_is_shown_with_its_verdict(tmp_path, factory):
    path = factory.replay_run(tmp_path, "r", [1, 2], vs=None)
    import json

    record = json.loads((path / "run.json").read_text())
    record["results"]["gate"] = {"baseline": "old-run", "max_drop": 0.02, "commits": 2, "passed": False,
                                 "lines": [{"metric": "mrr", "baseline": 0.9, "current": 0.75, "drop": 0.15,
                                            "holds": False, "worse": ["01" + "c0ffee" * 6 + "01"]}]}
    (path / "run.json").write_text(json.dumps(record))
    gate = next(b for b in _section(tmp_path, "replay").blocks if isinstance(b, Table) and "gate" in b.title)
    assert gate.title.startswith("Regression gate against old-run: FAILED")
    assert [c.text for c in gate.rows[0]] == ["mrr", "0.900", "0.750", "+0.150", "fails", "01c0ffeec0"]


def test_an_engine_measured_alike_in_two_runs_is_shown_once_and_different_ones_by_their_run(tmp_path, factory):
    # The demo's case: bm25 replayed alone and again against grep on the same commits is one measurement.
    ranks = [1, 2, None, 3]
    factory.replay_run(tmp_path / "demo1", "replay-bm25", ranks, None)
    factory.replay_run(tmp_path / "demo1", "replay-bm25-vs-grep", ranks, [2, 2, 1, None])
    # Another folder's run of the same name measured something else: told apart by its path, not its id.
    factory.replay_run(tmp_path / "demo2", "replay-bm25", [None, 1, 1, 1], None)
    sec = _section(tmp_path, "replay")
    bars = next(b for b in sec.blocks if isinstance(b, BarsFigure))
    mrr = next(p for p in bars.panels if p.metric == "mrr")
    assert [b.label for b in mrr.bars] == ["bm25 · demo1/replay-bm25", "grep", "bm25 · demo2/replay-bm25"]
    assert [b.value for b in mrr.bars] == [(1 + 1 / 2 + 0 + 1 / 3) / 4, (1 / 2 + 1 / 2 + 1 + 0) / 4, (0 + 1 + 1 + 1) / 4]
    assert mrr.bars[0].run == "demo1/replay-bm25"  # the merged bar links to the first run measuring it
    assert bars.sources == ["demo1/replay-bm25", "demo1/replay-bm25-vs-grep", "demo2/replay-bm25"]
    table = next(b for b in sec.blocks if isinstance(b, Table))
    assert table.columns == ["metric", "bm25 · demo1/replay-bm25", "grep", "bm25 · demo2/replay-bm25"]
    grid = next(b for b in sec.blocks if isinstance(b, GridFigure))
    assert [r.label for r in grid.rows] == table.columns[1:]


def test_a_repeated_engines_label_keeps_the_end_of_a_long_run_name(tmp_path, factory):
    from ctxgauge.report._svg import LABEL_CHARS

    names = ["replay-20261202T013012Z-ab12cd", "replay-20261202T093512Z-ef34gh", "replay-20261202T093512Z-0a1b2c"]
    for name, ranks in zip(names, ([1, 2], [2, 2], [3, 3])):
        factory.replay_run(tmp_path, name, ranks, None)
    bars = next(b for b in _section(tmp_path, "replay").blocks if isinstance(b, BarsFigure))
    labels = [b.label for b in bars.panels[0].bars]
    # The front the runs share (`replay-`) goes, then the name's end is kept: the time and the random id.
    room = LABEL_CHARS - len("bm25 · ")
    assert labels == ["bm25 · …" + n[len("replay-"):][-(room - 1):] for n in sorted(names)]
    assert labels[0] == "bm25 · …61202T013012Z-ab12cd" and all(len(x) == LABEL_CHARS for x in labels)


def test_the_code_and_rest_table_shows_a_twin_runs_engine_once_and_names_read_alike(tmp_path, factory):
    import json

    from ctxgauge.records import discover_runs as runs_of
    from ctxgauge.report._common import label_systems

    ranks = [1, 2, None, 3]
    for name, vs in (("replay-hybrid", None), ("replay-hybrid-vs-minilm", [2, 2, 1, None])):
        path = factory.replay_run(tmp_path, name, ranks, vs, engine="hybrid", vs="minilm")
        record = json.loads((path / "run.json").read_text())  # the factory writes no by_kind: add one
        record["results"]["by_kind"] = {"code": {"commits": 2, "summary": {"hit@1": 0.5, "recall@1": 0.5, "mrr": 0.75}}}
        (path / "run.json").write_text(json.dumps(record))
    table = next(b for b in _section(tmp_path, "replay").blocks
                 if isinstance(b, Table) and b.title.startswith("Commits touching code"))
    assert [row[0].text for row in table.rows] == ["hybrid"]
    assert table.sources == ["replay-hybrid", "replay-hybrid-vs-minilm"]
    # Two labels of one name, one too long for the column: both drop the front their runs share.
    a, b = sorted(runs_of(tmp_path), key=lambda r: r.rel)
    assert label_systems([("hybrid", a), ("hybrid", b)]) == ["hybrid · hybrid", "hybrid · hybrid-vs-minilm"]


def test_a_comparison_without_a_p_value_is_drawn_with_a_dash(tmp_path):
    # Found by `make fuzz` (report): a null p-value in a record raised TypeError in all three renderers.
    import io
    import json
    import shutil
    from pathlib import Path

    from rich.console import Console

    from ctxgauge.report import load_runs, render_html, render_markdown, render_terminal

    run = tmp_path / "runs" / "cases"
    shutil.copytree(Path(__file__).resolve().parents[1] / "records" / "fixtures" / "v1" / "cases", run)
    doc = json.loads((run / "run.json").read_text())
    doc["results"]["comparison"]["metrics"]["mrr"]["p_value"] = None
    (run / "run.json").write_text(json.dumps(doc))
    model = build_report(load_runs([tmp_path / "runs"]))
    out = Console(file=io.StringIO(), width=200)
    render_terminal(model, out)
    (row,) = [line for line in out.file.getvalue().splitlines() if "│ mrr " in line and "0/0/2" in line]
    assert row.split("│")[6].strip() == "-"  # the p column of the paired table
    assert "| mrr | 0.167 | 0.750 | -0.583 [-0.667, -0.500] | - | 0 / 0 / 2 |" in render_markdown(model)
    assert render_html(model)
