"""The determinism part of the report: CTL badges, family cells, drift bars; skipped is never a pass."""

from __future__ import annotations

from ctxgauge.report import BarsFigure, Table, build_report, discover_runs


def _section(root):
    return next(s for s in build_report(discover_runs(root)).sections if s.suite == "determinism")


def test_ctl_badges_family_cells_and_fingerprint_links(tmp_path, factory):
    factory.determinism_run(tmp_path, "d", {"bm25": {"level": 3, "drift": {"prose": 0.0}},
                                            "grep": {"level": 0, "drift": {"prose": 0.4}, "emr": 0.5},
                                            "minilm": {"status": "skipped", "reason": "torch missing"}})
    table = next(b for b in _section(tmp_path).blocks if isinstance(b, Table))
    rows = {r[0].text: r for r in table.rows}
    assert (rows["bm25"][1].text, rows["bm25"][1].style) == ("CTL 3", "ctl3")
    assert (rows["grep"][1].text, rows["grep"][1].style) == ("CTL 0", "ctl0")
    assert (rows["minilm"][1].text, rows["minilm"][1].style) == ("skipped", "muted")
    assert rows["minilm"][7].text == "torch missing"
    assert rows["grep"][3].text == "0.500 / 1.000 / 1.000"  # EMR / Jaccard / tau
    assert rows["bm25"][8].file == "fingerprints/bm25.fingerprint.json" and rows["bm25"][8].run == "d"
    assert rows["minilm"][8].file is None


def test_drift_bars_per_noise_kind(tmp_path, factory):
    factory.determinism_run(tmp_path, "d", {"bm25": {"level": 3, "drift": {"prose": 0.0, "large": 0.1}},
                                            "grep": {"level": 1, "drift": {"prose": 0.3}}})
    fig = next(b for b in _section(tmp_path).blocks if isinstance(b, BarsFigure))
    panels = {p.metric: p for p in fig.panels}
    assert set(panels) == {"drift (large noise)", "drift (prose noise)"}
    prose = panels["drift (prose noise)"]
    assert [(b.label, b.value) for b in prose.bars] == [("bm25", 0.0), ("grep", 0.3)]
    assert prose.top == 0.5  # the round axis end above 0.3
    assert [b.value for b in panels["drift (large noise)"].bars] == [0.1, None]


def test_not_measured_level_is_grey_and_reasons_become_notes(tmp_path, factory):
    factory.determinism_run(tmp_path, "d", {"bm25": {"level": None}})
    sec = _section(tmp_path)
    cell = next(b for b in sec.blocks if isinstance(b, Table)).rows[0][1]
    assert (cell.text, cell.style) == ("not measured", "muted")
    assert any("CTL 4 not measured" in n for n in sec.notes)


def test_query_figures_are_cut_never_rounded_up_to_a_pass(tmp_path, factory):
    # One differing trial in 25,000 is not an exact match: 0.99996 must not print as 1.000.
    factory.determinism_run(tmp_path, "d", {"bm25": {"level": 1, "emr": 0.99996}})
    row = next(b for b in _section(tmp_path).blocks if isinstance(b, Table)).rows[0]
    assert row[3].text == "0.999… / 1.000 / 1.000"


def test_span_emr_sits_beside_the_file_emr_in_every_rendering(tmp_path, factory):
    import io

    from rich.console import Console

    from ctxgauge.report import render_html, render_markdown, render_terminal

    # bm25: stable files, one query in five handing over other lines (span EMR 0.8); grep: a run from before
    # spans (no span figure), shown as not measured, never as 1.
    factory.determinism_run(tmp_path, "d", {"bm25": {"level": 2, "span_emr": 0.8},
                                            "grep": {"level": 3}})
    report = build_report(discover_runs(tmp_path))
    table = next(b for b in _section(tmp_path).blocks if isinstance(b, Table))
    assert table.columns[3] == "EMR / span EMR / Jaccard@10 / τ"
    rows = {r[0].text: r for r in table.rows}
    assert rows["bm25"][3].text == "1.000 / 0.800 / 1.000 / 1.000"
    assert rows["grep"][3].text == "1.000 / - / 1.000 / 1.000"
    buf = io.StringIO()
    render_terminal(report, Console(file=buf, width=250, color_system=None, force_terminal=False), details=True)
    for text in (buf.getvalue(), render_markdown(report), render_html(report)):
        assert "span EMR" in text and "1.000 / 0.800 / 1.000 / 1.000" in text


def test_runs_from_before_spans_keep_their_columns(tmp_path, factory):
    factory.determinism_run(tmp_path, "d", {"bm25": {"level": 3}})
    table = next(b for b in _section(tmp_path).blocks if isinstance(b, Table))
    assert table.columns[3] == "EMR / Jaccard@10 / τ" and table.rows[0][3].text == "1.000 / 1.000 / 1.000"
