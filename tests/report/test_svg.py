"""The hand-written SVG: bars with whiskers, not-measured bars, wrapped grids, stable colours and axes."""

from __future__ import annotations

import re

import pytest

from ctxgauge.report import Bar, GridFigure, GridRow, Panel
from ctxgauge.report._common import nice_top
from ctxgauge.report._svg import PALETTE, PLOT_W, Colours, bars_panel, grid, system_key


def _no_link(rel):
    return None


def test_a_bar_with_an_interval_draws_a_whisker_and_none_says_not_measured():
    panel = Panel("mrr", [Bar("bm25", 0.5, 0.25, 0.75, run="r"), Bar("grep", None, run="r")])
    svg = bars_panel(panel, Colours(), lambda rel: f"{rel}/run.json", label_chars=4)
    assert svg.count("<rect") == 1 and svg.count('class="whisker"') == 1
    assert "not measured" in svg and 'href="r/run.json"' in svg
    assert "(95% interval 0.2500 to 0.7500)" in svg
    # The bar spans half the plot width: the axis runs from 0 to panel.top (1.0).
    width = float(re.search(r'class="bar-row"><a [^>]*><title>[^<]*</title><text[^>]*>[^<]*</text><rect x="(\d+)" '
                            r'y="[\d.]+" width="([\d.]+)"', svg).group(2))
    x0 = int(re.search(r'<rect x="(\d+)"', svg).group(1))
    assert width == pytest.approx(PLOT_W / 2, abs=0.1) and x0 == 56  # the narrowest label column


def test_grid_wraps_long_rows():
    fig = GridFigure("g", [(str(i), f"c{i}") for i in range(250)], [GridRow("bm25", ["hit"] * 250)], {"hit": "hit"}, [])
    svg = grid(fig, _no_link, max_columns=100)
    assert svg.count("<rect") == 250
    assert ">1–100<" in svg and ">201–250<" in svg


def test_an_engine_keeps_its_colour_across_runs_and_arms():
    colours = Colours()
    assert colours("bm25") == PALETTE[0] and colours("grep · r2") == PALETTE[1]
    assert colours("context:bm25@5") == colours("tool:bm25") == colours("bm25 · r1") == PALETTE[0]
    assert system_key("none") == "none" and system_key("bm25(k1=1.2)") == "bm25(k1=1.2)"


@pytest.mark.parametrize("values, top", [([0.3], 0.5), ([0.018], 0.05), ([0.0], 0.05), ([1080.0, 720.0], 2000.0),
                                         ([0.00019], 0.05), ([None, 2.4], 2.5), ([1.0], 1.0)])
def test_axis_ends_are_round(values, top):
    assert nice_top(values) == pytest.approx(top)


def test_a_long_label_fits_its_column_and_is_never_cut_on_the_left():
    from ctxgauge.report._svg import CHAR_W

    label = "bm25 · cases-20261201-235959-ab12cd"
    panel = Panel("mrr", [Bar(label, 0.5, run="r")])
    svg = bars_panel(panel, Colours(), _no_link, label_chars=len(label))
    x = float(re.search(r'<text x="([\d.]+)" y="[\d.]+" class="label" text-anchor="end">([^<]*)</text>', svg).group(1))
    shown = re.search(r'class="label" text-anchor="end">([^<]*)</text>', svg).group(1)
    assert shown.startswith("bm25 · ") and shown.endswith("…")
    # The text ends at x and runs leftwards: its estimated width must fit inside the column from 0.
    assert len(shown) * CHAR_W <= x
