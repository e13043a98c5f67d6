"""The Markdown and terminal renderings show the same numbers as the model."""

from __future__ import annotations

import io

from rich.console import Console

from ctxgauge.report import build_report, discover_runs, render_markdown, render_terminal
from ctxgauge.report._terminal import text_bar


def test_markdown_has_tables_links_and_grids(all_runs, tmp_path):
    md = render_markdown(build_report(discover_runs(all_runs)), all_runs)
    assert md.startswith("<!-- generator: ctxgauge -->\n# ctxgauge report\n")  # the report marker, then the title
    assert "## Replay: the repository's own commits as requests" in md
    assert "| metric | bm25 | grep |" in md
    assert "[replay-a](replay-a/run.json)" in md
    assert "[fingerprint](det-a/fingerprints/bm25.fingerprint.json)" in md
    assert "request \\<0\\>" not in md and "```" in md
    assert "**did not finish (started)**" in md


def test_terminal_prints_every_section(all_runs):
    buf = io.StringIO()
    render_terminal(build_report(discover_runs(all_runs)), Console(file=buf, width=160, color_system=None))
    text = buf.getvalue()
    for needle in ("Runs", "Replay", "Cases", "Determinism", "QA", "CTL 3", "skipped", "75.0%", "from replay-a"):
        assert needle in text, needle


def test_only_the_html_grid_says_hover(all_runs):
    # A terminal or a Markdown page has no tooltip: "hover a cell" there was an instruction nobody could follow.
    from ctxgauge.report import render_html

    report = build_report(discover_runs(all_runs))
    buf = io.StringIO()
    render_terminal(report, Console(file=buf, width=160, color_system=None))
    for text in (buf.getvalue(), render_markdown(report, all_runs)):
        assert "One cell per commit." in text and "One cell per question." in text
        assert "hover" not in text.lower()
    html = render_html(report)
    assert "One cell per commit. Hover a cell for its id and request." in html
    assert "One cell per question. Hover a cell for its id, difficulty and categories." in html


def test_text_bar_in_eighths():
    assert text_bar(1.0, 1.0, 4) == "████"
    assert text_bar(0.5, 1.0, 4) == "██  "
    assert text_bar(1 / 16, 1.0, 4) == "▎   "  # 2 of 32 eighths
    assert text_bar(1 / 8, 1.0, 4) == "▌   "  # 4 of 32
    assert text_bar(None, 1.0, 4) == "    "
