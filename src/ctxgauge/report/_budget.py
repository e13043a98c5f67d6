"""The budget curve of a retrieval run (issue 37): line coverage against context tokens, per engine.

Reads `results.budget_curve` of replay and cases runs, `{engine: [{budget, mean, low, high}, ...]}` over the
budgets 250·2^i, and nothing else: a run without it (every run recorded before spans) gets no figure, and
its report is unchanged byte for byte. The figure is a `CurveFigure`: the HTML page draws it (`curve_svg`,
log-2 x axis, a band for each interval), the terminal and Markdown show its table.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any, Callable, Sequence

from ctxgauge.results import TypedRun
from ctxgauge.report._common import fmt_interval
from ctxgauge.report._model import Cell, Curve, CurveFigure, CurvePoint
import ctxgauge.report._svg as _svg



def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _points(raw: Sequence[Any]) -> list[CurvePoint]:
    out = [CurvePoint(p.budget, _number(p.mean), _number(p.low), _number(p.high)) for p in raw if p.budget > 0]
    return sorted(out, key=lambda p: p.budget)


def budget_figure(runs: Sequence[TypedRun], title: str) -> CurveFigure | None:
    """The curve of every engine the runs hold one for (an engine in two runs: the first run's), or None."""
    series: list[Curve] = []
    sources: list[str] = []
    for run in runs:
        curve = run.results.budget_curve
        for label, raw in curve.items():
            points = _points(raw)
            if points and str(label) not in {c.label for c in series}:
                series.append(Curve(str(label), points, run.rel))
                if run.rel not in sources:
                    sources.append(run.rel)
    if not series:
        return None
    budgets = sorted({p.budget for c in series for p in c.points})
    rows = []
    for b in budgets:
        row = [Cell(f"{b:,}", num=True)]
        for c in series:
            p = next((p for p in c.points if p.budget == b), None)
            text = "-" if p is None or p.mean is None else f"{p.mean:.3f}" + (
                " " + fmt_interval(p.low, p.high) if p.low is not None and p.high is not None else "")
            row.append(Cell(text))
        rows.append(row)
    return CurveFigure(title, ["tokens"] + [c.label for c in series], rows, sources=sources,
                       caption="Line coverage: the share of a unit's gold lines inside the context packed under "
                       "each token budget, mean over the units with gold lines, with its 95% interval "
                       "(a band in the HTML page; x: tokens, log scale).", series=series)


def _budget_tick(b: int) -> str:
    return f"{b // 1000}k" if b >= 1000 and b % 1000 == 0 else f"{b / 1000:g}k" if b >= 1000 else str(b)


def curve_svg(fig: CurveFigure, colours: _svg.Colours, link: Callable[[str | None], str | None]) -> str:
    """The curves as inline SVG: x = log2 of the budget, y = the value from 0 to 1, a line and dots per
    system over a band from its interval's low to high; each dot's tooltip says budget, mean and interval."""
    left, right, top, bottom = 44, 16, 14, 38
    plot_w, plot_h = 460, 200
    width, height = left + plot_w + right, top + plot_h + bottom
    budgets = sorted({p.budget for c in fig.series for p in c.points})
    lo_x, hi_x = math.log2(budgets[0]), math.log2(budgets[-1])

    def x(b: int) -> float:
        return left + (plot_w / 2 if hi_x == lo_x else (math.log2(b) - lo_x) / (hi_x - lo_x) * plot_w)

    def y(v: float) -> float:
        return top + (1 - min(max(v, 0.0), 1.0)) * plot_h

    f = _svg.f
    out = [f'<svg class="curve" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'xmlns="http://www.w3.org/2000/svg"><title>{escape(fig.title)}</title>']
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{left}" y1="{f(y(v))}" x2="{left + plot_w}" y2="{f(y(v))}" class="grid"/>'
                   f'<text x="{left - 6}" y="{f(y(v) + 4)}" class="tick" text-anchor="end">{v:g}</text>')
    for b in budgets:
        out.append(f'<line x1="{f(x(b))}" y1="{top}" x2="{f(x(b))}" y2="{top + plot_h}" class="grid"/>'
                   f'<text x="{f(x(b))}" y="{top + plot_h + 14}" class="tick" text-anchor="middle">'
                   f'{_budget_tick(b)}</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" class="tick" text-anchor="middle">'
               'context tokens (log scale)</text>')
    for c in fig.series:
        colour = colours(c.label)
        shown = [p for p in c.points if p.mean is not None]
        band = [p for p in shown if p.low is not None and p.high is not None]
        parts = []
        if len(band) >= 2:
            ring = [(x(p.budget), y(p.high)) for p in band] + [(x(p.budget), y(p.low)) for p in reversed(band)]
            parts.append(f'<polygon points="{" ".join(f"{f(a)},{f(b)}" for a, b in ring)}" fill="{colour}" '
                         f'fill-opacity="0.15" class="band"/>')
        if len(shown) >= 2:
            parts.append(f'<polyline points="{" ".join(f"{f(x(p.budget))},{f(y(p.mean))}" for p in shown)}" '
                         f'fill="none" stroke="{colour}" stroke-width="2" class="line"/>')
        for p in shown:
            tip = f"{c.label}: {p.mean:.4f} at {p.budget:,} tokens" + (
                f" (95% interval {p.low:.4f} to {p.high:.4f})" if p.low is not None and p.high is not None else "")
            parts.append(f'<circle cx="{f(x(p.budget))}" cy="{f(y(p.mean))}" r="3" fill="{colour}">'
                         f'<title>{escape(tip)}</title></circle>')
        body = "".join(parts)
        href = link(c.run)
        out.append(f'<g class="series">{f"<a href={chr(34)}{escape(href)}{chr(34)}>{body}</a>" if href else body}</g>')
    out.append("</svg>")
    key = "".join(f'<span class="key"><i style="background:{colours(c.label)}"></i>{escape(c.label)}</span>'
                  for c in fig.series)
    return "".join(out) + f'<div class="legend">{key}<span>band: 95% interval</span></div>'
