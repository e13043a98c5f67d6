"""The HTML page: self-contained (no script, no request, no external resource), every figure drawn as SVG
and linked to existing run records, deterministic bytes, escaped text."""

from __future__ import annotations

import re
from pathlib import Path

from ctxgauge.report import build_report, discover_runs, render_html, write_html


def test_page_is_self_contained(all_runs, tmp_path):
    page = write_html(build_report(discover_runs(all_runs)), tmp_path / "out" / "report.html").read_text()
    assert "<script" not in page and "<link" not in page and "@import" not in page and "url(" not in page
    assert not re.search(r"\bsrc=", page)
    # The only absolute URL is the SVG namespace, a name that is never fetched.
    assert set(re.findall(r"https?://[^\"' )]+", page)) == {"http://www.w3.org/2000/svg"}
    assert "default-src 'none'" in page


def test_every_figure_is_svg_and_links_to_its_run(all_runs, tmp_path):
    out = tmp_path / "out" / "report.html"
    page = write_html(build_report(discover_runs(all_runs)), out).read_text()
    figures = re.findall(r'<figure class="card plot" id="fig-\d+" data-kind="(\w+)" data-runs="([^"]*)">(.*?)</figure>',
                         page, flags=re.S)
    kinds = [k for k, _, _ in figures]
    assert {"bars", "paired", "grid"} <= set(kinds)
    for kind, runs, body in figures:
        assert "<svg" in body, kind
        assert runs, kind
        for rel in runs.split():
            assert f"{rel}/run.json" in body  # the source line links each run
    for href in set(re.findall(r'href="([^"#]+)"', page)):
        assert not href.startswith("/"), href  # relative, so the page survives being moved with its runs
        assert (out.parent / href).resolve().is_file(), href


def test_did_not_finish_runs_are_listed_not_drawn(all_runs):
    page = render_html(build_report(discover_runs(all_runs)))
    assert "did not finish (started)" in page and "did not finish (error)" in page
    assert "6 runs: 4 finished, 2 did not finish" in page


def test_same_runs_same_bytes_and_text_is_escaped(tmp_path, factory):
    factory.replay_run(tmp_path, "r", [1, 2], [1, None])
    page = render_html(build_report(discover_runs(tmp_path)), Path(tmp_path))
    assert page == render_html(build_report(discover_runs(tmp_path)), Path(tmp_path))
    assert "request &lt;0&gt;" in page and "request <0>" not in page
