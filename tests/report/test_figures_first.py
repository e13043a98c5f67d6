"""Figures first, the Runs table last, in every view (issue 39, item 4; walkthrough at 80 columns: the terminal
printed Runs last while Markdown and HTML put it first). Each view of the same runs: every section comes
before the Runs table, nothing follows it, and its caption points up to the figures."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from ctxgauge.report import build_report, load_runs, render_html, render_markdown, render_terminal

V2 = Path(__file__).parents[1] / "records" / "fixtures" / "v2"


@pytest.fixture(scope="module")
def model():
    return build_report(load_runs([V2]))


def test_markdown_runs_last(model):
    md = render_markdown(model)
    runs = md.index("\n## Runs\n")
    assert [m.start() for m in re.finditer(r"^## ", md, re.M)][-1] == runs + 1  # its own level, the last heading
    for sec in model.sections:
        assert md.index(f"\n## {sec.title}\n") < runs
    assert "mean above." in md[runs:] and "mean below." not in md


def test_html_runs_last(model):
    html = render_html(model)
    runs = html.index("<h3>Runs</h3>")
    sections = [m.start() for m in re.finditer('<section class="suite"', html)]
    assert len(sections) == len(model.sections) and max(sections) < runs
    assert html.index("</section>", max(sections)) < runs < html.index("<footer>")
    assert "mean above." in html[runs:] and "mean below." not in html


def test_terminal_runs_last(model):
    buf = io.StringIO()
    render_terminal(model, Console(file=buf, width=120, color_system=None))
    out = buf.getvalue()
    runs = out.index("\nRuns\n")
    assert all(out.index(sec.title) < runs for sec in model.sections)
    assert "mean above." in out[runs:] and "mean below." not in out
