"""Hand-written inline SVG for the HTML report: bars with intervals, paired differences, win/tie/loss, grids.

Why not a plotting library: the page must be one self-contained file with no network, and must come out
byte for byte the same from the same runs (exports are checked by re-generating them). Inline SVG needs no
script at all, so the page is ~50 kB where altair's inlined Vega bundle is ~0.9 MB and plotly's ~4.8 MB,
and it draws even with JavaScript off. Every coordinate is printed with fixed decimals, so equal input
gives equal bytes.
"""

from __future__ import annotations

from html import escape
from typing import Callable, Sequence

from ctxgauge.report._model import Bar, GridFigure, Panel, PairedRow

PALETTE = ("#3b6fb6", "#e8833a", "#c2569b", "#9467bd", "#2b9da6", "#b8912f", "#8c6d5a", "#c9504c")
"""System colours (colour-blind safe order); a system keeps its colour across every figure. No green: green
is a state (a grid's `hit` and `pass`, a good badge), and a third system drawn green made "hit" and "X
better" (a paired figure's key) look alike (issue 39); a system's colour says which system, never how well."""

GRID_COLOURS = {
    "hit": "#2f8f46", "near": "#a8d5a2", "miss": "#f1b8b2", "unscorable": "#dcdcdc", "failed": "#3a3a3a",
    "absent": "#ffffff", "pass": "#2f8f46", "fail": "#e06b61", "adjudicate": "#f0b54a", "infra": "#8e7cc3",
    "not-judged": "#c4c4c4", "skipped": "#e4e4e4",
}
MUTED = "#8a8f98"
INK = "#1f2430"
CHAR_W = 7.3  # widest average advance of a 12px system sans glyph, to size label columns without a font engine

Link = Callable[[str | None], str | None]


def f(x: float) -> str:
    """A coordinate with one decimal: fixed text, so the same figure always gives the same bytes."""
    return f"{x:.1f}"


LABEL_CHARS = 28
"""Longest label drawn in full; longer ones end in `…`. The label column is sized for it, so the column's
width and the clip agree (a 200 px cap under 28 characters cut labels off on the left: `n25 · cases-20…`)."""


def _label_w(chars: int) -> int:
    return max(int(min(chars, LABEL_CHARS) * CHAR_W) + 14, 56)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _a(link: str | None, body: str) -> str:
    return f'<a href="{escape(link)}">{body}</a>' if link else body


def system_key(label: str) -> str:
    """What a colour stands for: the engine of a label (`grep · r2` -> grep, qa arm `context:bm25@5` -> bm25)."""
    key = label.split(" · ")[0]
    if ":" in key and key.split(":", 1)[0] in ("context", "tool", "mcp-tools"):
        key = key.split(":", 1)[1].rsplit("@", 1)[0]
    return key


class Colours:
    """System -> palette colour, assigned in order of first use, so an engine keeps one colour on the page
    (its replay bars, its determinism bars and the qa arms that use it)."""

    def __init__(self) -> None:
        self._map: dict[str, str] = {}

    def __call__(self, label: str) -> str:
        key = system_key(label)
        if key not in self._map:
            self._map[key] = PALETTE[len(self._map) % len(PALETTE)]
        return self._map[key]


PLOT_W = 200
"""Width of a panel's plot area: fixed, so long labels widen the panel instead of squeezing the bars."""


def bars_panel(panel: Panel, colours: Colours, link: Link, label_chars: int) -> str:
    """One metric's horizontal bars from 0 to `panel.top`, each with its interval as a whisker."""
    row, top_pad = 26, 24
    label_w = _label_w(label_chars)
    value_w = 62
    plot_w = PLOT_W
    width = label_w + plot_w + value_w
    height = top_pad + row * len(panel.bars) + 18
    scale = plot_w / panel.top if panel.top > 0 else 0.0
    out = [f'<svg class="bars" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'xmlns="http://www.w3.org/2000/svg"><title>{escape(panel.metric)}</title>',
           f'<text x="0" y="14" class="panel-title">{escape(panel.metric)}</text>']
    for gx in (0.0, 0.5, 1.0):  # light gridlines at 0, half and the top of the axis
        x = label_w + gx * plot_w
        out.append(f'<line x1="{f(x)}" y1="{top_pad - 4}" x2="{f(x)}" y2="{height - 16}" class="grid"/>')
        out.append(f'<text x="{f(x)}" y="{height - 4}" class="tick" text-anchor="middle">'
                   f'{escape(_tick(gx * panel.top))}</text>')
    for i, bar in enumerate(panel.bars):
        y = top_pad + i * row
        colour = colours(bar.label)
        tip = _bar_tip(panel.metric, bar)
        parts = [f'<title>{escape(tip)}</title>',
                 f'<text x="{label_w - 8}" y="{f(y + 15)}" class="label" text-anchor="end">'
                 f'{escape(_clip(bar.label, LABEL_CHARS))}</text>']
        if bar.value is None:
            parts.append(f'<text x="{label_w + 4}" y="{f(y + 15)}" class="na">not measured</text>')
        else:
            w = max(bar.value * scale, 0.0)
            parts.append(f'<rect x="{label_w}" y="{f(y + 5)}" width="{f(min(w, plot_w))}" height="14" rx="2" '
                         f'fill="{colour}" class="bar"/>')
            if bar.low is not None and bar.high is not None:
                lo, hi = label_w + bar.low * scale, label_w + min(bar.high * scale, plot_w)
                parts.append(f'<path d="M{f(lo)} {f(y + 12)}H{f(hi)}M{f(lo)} {f(y + 7)}V{f(y + 17)}'
                             f'M{f(hi)} {f(y + 7)}V{f(y + 17)}" class="whisker"/>')
            text = bar.text or f"{bar.value:.3f}"
            parts.append(f'<text x="{width - 2}" y="{f(y + 15)}" class="value" text-anchor="end">'
                         f'{escape(text)}</text>')
        out.append(f'<g class="bar-row">{_a(link(bar.run), "".join(parts))}</g>')
    out.append("</svg>")
    return "".join(out)


def _tick(v: float) -> str:
    if v == 0:
        return "0"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 1:
        return f"{v:g}"
    return f"{v:.3g}"


def _bar_tip(metric: str, bar: Bar) -> str:
    if bar.value is None:
        return f"{bar.label}: {metric} not measured"
    text = f"{bar.label}: {metric} {bar.text or f'{bar.value:.4f}'}"
    if bar.low is not None and bar.high is not None:
        text += f" (95% interval {bar.low:.4f} to {bar.high:.4f})"
    return text + (f" · run {bar.run}" if bar.run else "")


def diff_plot(row: PairedRow, span: float, colour_a: str, colour_b: str, width: int = 220) -> str:
    """The mean difference A − B as a point with its interval, on an axis symmetric around zero."""
    h, pad = 26, 10
    mid = width / 2
    scale = (mid - pad) / span if span > 0 else 0.0
    lo, hi, x = mid + row.low * scale, mid + row.high * scale, mid + row.diff * scale
    # Coloured by the side the whole interval lies on; grey when it covers zero (no clear winner).
    colour = colour_a if row.low > 0 else colour_b if row.high < 0 else MUTED
    return (f'<svg class="diff" role="img" width="{width}" height="{h}" viewBox="0 0 {width} {h}" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{escape(row.metric)}: difference {row.diff:+.4f} '
            f'(95% interval {row.low:+.4f} to {row.high:+.4f})</title>'
            f'<line x1="{f(mid)}" y1="2" x2="{f(mid)}" y2="{h - 2}" class="zero"/>'
            f'<line x1="{f(lo)}" y1="{h / 2}" x2="{f(hi)}" y2="{h / 2}" stroke="{colour}" stroke-width="3" '
            f'stroke-linecap="round"/><circle cx="{f(x)}" cy="{h / 2}" r="5" fill="{colour}"/></svg>')


def wtl_bar(row: PairedRow, colour_a: str, colour_b: str, width: int = 200) -> str:
    """Wins, ties and losses of A as one stacked bar, with the counts written in."""
    n = row.wins + row.ties + row.losses
    h = 22
    out = [f'<svg class="wtl" role="img" width="{width}" height="{h}" viewBox="0 0 {width} {h}" '
           f'xmlns="http://www.w3.org/2000/svg"><title>{escape(row.metric)}: {row.wins} wins, {row.ties} ties, '
           f'{row.losses} losses of {n}</title>']
    x = 0.0
    for count, colour, cls in ((row.wins, colour_a, "w"), (row.ties, "#d9dce1", "t"), (row.losses, colour_b, "l")):
        w = width * count / n if n else 0.0
        if w > 0:
            out.append(f'<rect x="{f(x)}" y="2" width="{f(w)}" height="{h - 4}" fill="{colour}" class="{cls}"/>')
            if w >= 18:
                fill = INK if cls == "t" else "#ffffff"
                out.append(f'<text x="{f(x + w / 2)}" y="{h - 7}" text-anchor="middle" class="count" '
                           f'fill="{fill}">{count}</text>')
        x += w
    out.append("</svg>")
    return "".join(out)


def grid(fig: GridFigure, link: Link, max_columns: int = 100) -> str:
    """A categorical grid, wrapped every `max_columns` columns; every cell has a tooltip."""
    n = len(fig.columns)
    label_chars = max([len(r.label) for r in fig.rows] + [4])
    label_w = _label_w(label_chars)
    per_line = min(n, max_columns) or 1
    cell_w = max(5.0, min(16.0, 700.0 / per_line))
    cell_h, gap = 16, 3
    chunks = [list(range(s, min(s + per_line, n))) for s in range(0, n, per_line)] or [[]]
    block_h = len(fig.rows) * (cell_h + gap) + 16
    width = int(label_w + per_line * cell_w + 4)
    height = int(block_h * len(chunks))
    out = [f'<svg class="grid" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'xmlns="http://www.w3.org/2000/svg"><title>{escape(fig.title)}</title>']
    for c, cols in enumerate(chunks):
        y0 = c * block_h
        if cols:
            out.append(f'<text x="{label_w}" y="{y0 + 11}" class="tick">{cols[0] + 1}–{cols[-1] + 1}</text>')
        for r, row in enumerate(fig.rows):
            y = y0 + 16 + r * (cell_h + gap)
            cells = []
            for j, col in enumerate(cols):
                state = row.cells[col]
                tip = f"{fig.columns[col][1]} — {row.label}: {fig.legend.get(state, state)}"
                cells.append(f'<rect x="{f(label_w + j * cell_w)}" y="{y}" width="{f(cell_w - 1)}" height="{cell_h}" '
                             f'fill="{GRID_COLOURS.get(state, "#cccccc")}" class="cell {escape(state)}">'
                             f'<title>{escape(tip)}</title></rect>')
            label = (f'<text x="{label_w - 8}" y="{y + 12}" class="label" text-anchor="end">'
                     f'{escape(_clip(row.label, LABEL_CHARS))}</text>')
            out.append(f'<g class="grid-row">{_a(link(row.run), label)}{"".join(cells)}</g>')
    out.append("</svg>")
    return "".join(out)


def legend(states: dict[str, str]) -> str:
    """Swatches naming each grid state."""
    items = [f'<span class="key"><i style="background:{GRID_COLOURS.get(s, "#cccccc")}"></i>{escape(d)}</span>'
             for s, d in states.items()]
    return f'<div class="legend">{"".join(items)}</div>'


def label_chars(panels: Sequence[Panel]) -> int:
    """The longest bar label of a figure, in characters (one label column for every panel)."""
    return max([min(len(b.label), LABEL_CHARS) for p in panels for b in p.bars] + [4])
