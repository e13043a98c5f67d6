"""Green means one thing in the HTML report: a state (`hit`, `pass`, a good badge), never a system, so a
paired figure's "X better" key is never the grid's "hit" colour (issue 39, item 9)."""

from __future__ import annotations

import colorsys

from ctxgauge.report._svg import GRID_COLOURS, PALETTE, Colours


def _hue(colour: str) -> float:
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return colorsys.rgb_to_hsv(r, g, b)[0] * 360


def test_no_system_colour_is_green():
    greens = [c for c in PALETTE if 75 <= _hue(c) <= 170]
    assert greens == []
    assert _hue(GRID_COLOURS["hit"]) == _hue(GRID_COLOURS["pass"])  # the one green, meaning a good state
    assert 75 <= _hue(GRID_COLOURS["hit"]) <= 170


def test_eight_systems_get_eight_colours_none_a_state():
    colours = Colours()
    drawn = [colours(f"engine{i}") for i in range(len(PALETTE))]
    assert len(set(drawn)) == len(PALETTE)
    assert not set(drawn) & set(GRID_COLOURS.values())
