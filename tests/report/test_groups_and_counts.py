"""Issue 35 in the report: tied groups where more than two engines are compared (item 5), and the counts of
the summary line, the every-metric table and the misses titles agreeing, per engine, with the stored means
rendered rather than recomputed (item 2)."""

from __future__ import annotations

import io
import json

from rich.console import Console

from ctxgauge.report import Table, build_report, discover_runs, render_html, render_markdown, render_terminal


def _report(root):
    return build_report(discover_runs(root))


def _table(report, suite="replay") -> Table:
    sec = next(s for s in report.sections if s.suite == suite)
    return next(b for b in sec.blocks if isinstance(b, Table) and b.title.startswith("Every metric"))


def _terminal(report) -> str:
    buf = io.StringIO()
    render_terminal(report, Console(file=buf, width=200, color_system=None, force_terminal=False), details=True)
    return buf.getvalue()


def test_four_engines_get_a_tied_group_row_in_every_rendering(tmp_path, factory):
    # hit@1 per unit as in tests/metrics/test_groups.py, counted by hand there: A and B tied (group 1),
    # C group 2, D group 3, over the 13 units all four share.
    ranks = {"A": [1] * 13, "B": [1] * 12 + [5], "C": [5] * 7 + [1] * 6, "D": [5] * 13}
    for engine, r in ranks.items():
        factory.replay_run(tmp_path, f"run-{engine}", r, vs=None, engine=engine)
    report = _report(tmp_path)
    table = _table(report)
    assert table.columns == ["metric", "A", "B", "C", "D"]
    assert [c.text for c in table.rows[-1]] == ["hit@1 tied group (n 13)", "1", "1", "2", "3"]
    assert "Holm-adjusted" in table.caption
    assert "│ hit@1 tied group (n 13) │ 1 │ 1 │ 2 │ 3 │" in _terminal(report).replace("     ", " ").replace("  ", " ")
    assert "| hit@1 tied group (n 13) | 1 | 1 | 2 | 3 |" in render_markdown(report)
    html = render_html(report)
    assert "hit@1 tied group (n 13)" in html


def test_two_engines_have_no_group_row(tmp_path, factory):
    factory.replay_run(tmp_path, "r", [1, 2, 1], [2, 2, 1])
    assert not any("tied group" in c.text for row in _table(_report(tmp_path)).rows for c in row)


def test_counts_agree_per_engine(tmp_path, factory):
    # Unit 1 has nothing to score (rank 0: only a coverage gap): it is ok but not scored, so the table,
    # the misses titles and the suite's counts.scored all say 3. The factory records no rankings, so each
    # engine missed all 3 (5d251ae's table said 4 and its misses title "6 missed of 4 commits x engines",
    # summed over both engines).
    path = factory.replay_run(tmp_path, "r", [1, 0, 5, 5], [5, 0, 1, 5])
    data = json.loads((path / "run.json").read_text())
    data["results"]["counts"]["scored"] = 3  # as replay counts it (the factory counts every ok unit)
    (path / "run.json").write_text(json.dumps(data))
    report = _report(tmp_path)
    assert [c.text for c in _table(report).rows[0]] == ["commits scored", "3", "3"]
    sec = next(s for s in report.sections if s.suite == "replay")
    misses = next(b for b in sec.blocks if isinstance(b, Table) and b.title.startswith("Misses"))
    assert misses.title == "Misses at 1: r (bm25: 3 missed of 3 scored commits; grep: 3 missed of 3 scored commits)"
    assert any("scored 3," in n for n in sec.notes)


def test_the_table_renders_the_stored_mean(tmp_path, factory):
    # The suite computed each mean once (math.fsum) and stored it; the table formats that figure.
    path = factory.replay_run(tmp_path, "r", [1, 2], [1, 1])
    data = json.loads((path / "run.json").read_text())
    data["results"]["summary"]["mrr"] = 0.123456
    (path / "run.json").write_text(json.dumps(data))
    mrr = next(row for row in _table(_report(tmp_path)).rows if row[0].text == "mrr")
    assert [c.text for c in mrr] == ["mrr", "0.123", "1.000"]
