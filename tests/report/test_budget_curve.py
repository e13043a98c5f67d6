"""The budget curve (issue 37, item 9): a replay or cases run recording `results.budget_curve` gets a figure
of line coverage against context tokens per engine (log x, interval bands) in the HTML page and its table in
the terminal and Markdown; a run without it gets none (the v2 fixtures stay byte for byte)."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

from rich.console import Console

from ctxgauge.report import build_report, load_runs, render_html, render_markdown, render_terminal
from ctxgauge.report._model import CurveFigure

V2 = Path(__file__).parents[1] / "records" / "fixtures" / "v2"
BUDGETS = [250 * 2 ** i for i in range(8)]


def curve(base: float) -> list[dict]:
    out = []
    for i, b in enumerate(BUDGETS):
        mean = min(1.0, base + i / 10)
        out.append({"budget": b, "mean": mean, "low": max(0.0, mean - 0.1), "high": min(1.0, mean + 0.05)})
    return out


def run_with_curve(tmp_path: Path, name: str = "replay-vs") -> Path:
    run = tmp_path / "runs" / name
    shutil.copytree(V2 / name, run)
    record = json.loads((run / "run.json").read_text())
    record["results"]["budget_curve"] = {"grep": curve(0.1), "bm25": curve(0.25)}
    (run / "run.json").write_text(json.dumps(record))
    return run


def _curves(model) -> list[CurveFigure]:
    return [b for s in model.sections for b in s.blocks if isinstance(b, CurveFigure)]


def test_the_curve_is_read_exactly_from_the_record(tmp_path):
    run = run_with_curve(tmp_path)
    [fig] = _curves(build_report(load_runs([run])))
    assert [c.label for c in fig.series] == ["grep", "bm25"]
    assert [(p.budget, p.mean, p.low, p.high) for p in fig.series[1].points] == \
        [(c["budget"], c["mean"], c["low"], c["high"]) for c in curve(0.25)]
    assert fig.sources == ["replay-vs"] and all(c.run == "replay-vs" for c in fig.series)
    assert [r[0].text for r in fig.rows] == [f"{b:,}" for b in BUDGETS]
    assert fig.rows[0][2].text == "0.250 [0.150, 0.300]"


def test_html_draws_a_line_band_and_dots_per_engine(tmp_path):
    html = render_html(build_report(load_runs([run_with_curve(tmp_path)])))
    svg = re.search(r'<svg class="curve".*?</svg>', html, re.S).group(0)
    assert svg.count("<polyline") == 2 and svg.count("<polygon") == 2 and svg.count("<circle") == 16
    assert [t for t in re.findall(r'class="tick" text-anchor="middle">([^<]+)<', svg)][:8] == \
        ["250", "500", "1k", "2k", "4k", "8k", "16k", "32k"]
    # log x: the budgets are evenly spaced.
    xs = [float(x) for x in re.findall(r'<line x1="([\d.]+)" y1="14" x2="[\d.]+" y2="214"', svg)]
    gaps = [b - a for a, b in zip(xs, xs[1:])]
    assert len(xs) == 8 and max(gaps) - min(gaps) < 0.2  # one decimal per coordinate
    assert 'data-kind="curve"' in html and "bm25: 0.2500 at 250 tokens (95% interval 0.1500 to 0.3000)" in svg


def test_terminal_and_markdown_show_its_table(tmp_path):
    model = build_report(load_runs([run_with_curve(tmp_path)]))
    buf = io.StringIO()
    render_terminal(model, Console(file=buf, width=120, color_system=None))
    out = buf.getvalue()
    assert "line coverage by context budget" in out and "32,000" in out and "[0.850, 1.000]" in out
    assert "line coverage by context budget" in render_markdown(model)


def test_no_curve_without_the_field():
    model = build_report(load_runs([V2 / "replay-vs"]))
    assert _curves(model) == []
    assert '<svg class="curve"' not in render_html(model)
