"""The report as one self-contained HTML file: inline CSS and SVG, no script, no font file, no request.

Every figure is a `<figure class="plot">` carrying `data-kind` and `data-runs`, and links each bar, row and
source line to the `run.json` it comes from, by a path relative to where the page is written (so a page
inside an export tree links into that tree, and the links survive copying the tree).
"""

from __future__ import annotations

import os
import re
from urllib.parse import quote
from html import escape
from pathlib import Path
from typing import Sequence

import ctxgauge
from ctxgauge._output import MARK_LINE
from ctxgauge.records import RUN_FILE
import ctxgauge.report._svg as _svg
from ctxgauge.report._common import fmt_interval, nice_top, pval
from ctxgauge.report._model import BarsFigure, Block, Cell, CurveFigure, GridFigure, PairedFigure, Report, Section, Table
from ctxgauge.report._style import CSS


class Links:
    """Run relative path (+ a file inside it) -> an href relative to the page's directory."""

    def __init__(self, report: Report, base: Path | None):
        self.report, self.base = report, base

    def __call__(self, rel: str | None, file: str | None = None) -> str | None:
        if rel is None or rel not in self.report.run_paths:
            return None
        target = Path(self.report.run_paths[rel]) / (file or RUN_FILE)
        if self.base is not None:
            target = Path(os.path.relpath(target.resolve(), self.base.resolve()))
        # Percent-encoded: a run directory named `javascript:alert(1)` is a relative path, not a scheme, and a
        # `)` or space cannot end a Markdown link's target early.
        return quote(target.as_posix(), safe="/")


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def own_text(text: str, data: Sequence[str] = ()) -> str:
    """ctxgauge's own sentence (a caption, a tooltip line) as HTML: escaped, its Markdown code spans
    (`` `-` ``) drawn as `<code>` (they showed as literal backticks, issue 39). The record values the
    sentence quotes (`data`: an engine's name, a run's path) stay escaped text whatever they hold: a
    backtick in an engine's name is never read as markup."""
    held: list[str] = []

    def hold(value: str) -> str:
        held.append(value)
        return f"\x00{len(held) - 1}\x00"

    guarded = text.replace("\x00", "")
    for value in sorted({d for d in data if d and "`" in d}, key=len, reverse=True):
        guarded = guarded.replace(value, hold(value))
    out = _CODE_SPAN.sub(lambda m: f"<code>{m.group(1)}</code>", escape(guarded))
    return re.sub("\x00(\\d+)\x00", lambda m: escape(held[int(m.group(1))]), out)


def _cell(c: Cell, links: Links) -> str:
    text = escape(c.text)
    if c.style:
        text = f'<span class="badge b-{escape(c.style)}">{text}</span>'
    href = links(c.run, c.file) if c.run else None
    if href:
        text = f'<a href="{escape(href)}">{text}</a>'
    if c.num:
        return f'<td class="num">{text}</td>'
    return f"<td>{text}</td>" if c.wrap else f'<td class="nowrap">{text}</td>'


def _sources(sources: list[str], links: Links) -> str:
    items = [f'<a href="{escape(h)}">{escape(s)}</a>' if (h := links(s)) else escape(s) for s in sources]
    if not items:
        return ""
    return f'<div class="source">from run{"s" if len(items) > 1 else ""}: {", ".join(items)}</div>'


def _table(t: Table, links: Links) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in t.columns)
    body = "".join("<tr>" + "".join(_cell(c, links) for c in row) + "</tr>" for row in t.rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _bars(fig: BarsFigure, links: Links, colours: _svg.Colours) -> str:
    chars = _svg.label_chars(fig.panels)
    panels = "".join(_svg.bars_panel(p, colours, links, chars) for p in fig.panels)
    return f'<div class="panels">{panels}</div>'


def _paired(fig: PairedFigure, colours: _svg.Colours) -> str:
    ca, cb = colours(fig.a), colours(fig.b)
    if ca == cb:  # the same engine under two specs would draw its wins and losses alike
        cb = _svg.PALETTE[(_svg.PALETTE.index(ca) + 1) % len(_svg.PALETTE)]
    span = nice_top([max(abs(r.low), abs(r.high), abs(r.diff)) for r in fig.rows], floor=0.01)
    rows = []
    for r in fig.rows:
        strong = r.low > 0 or r.high < 0
        rows.append(
            f'<tr><td>{escape(r.metric)}</td><td class="num">{r.mean_a:.3f}</td><td class="num">{r.mean_b:.3f}</td>'
            f'<td class="num">{"<b>" if strong else ""}{r.diff:+.3f}{"</b>" if strong else ""}'
            f'<br><span class="tick">{fmt_interval(r.low, r.high, signed=True)}</span></td>'
            f'<td>{_svg.diff_plot(r, span, ca, cb)}</td><td class="num">{pval(r.p_value)}</td>'
            f'<td class="nowrap">{_svg.wtl_bar(r, ca, cb)} '
            f'<span class="tick">{r.wins}/{r.ties}/{r.losses}</span></td></tr>')
    key = (f'<div class="legend"><span class="key"><i style="background:{ca}"></i>{escape(fig.a)} better</span>'
           f'<span class="key"><i style="background:#d9dce1"></i>tie</span>'
           f'<span class="key"><i style="background:{cb}"></i>{escape(fig.b)} better</span>'
           f'<span>axis: ±{span:g}, dashed line at 0</span></div>')
    head = (f"<th>metric</th><th>{escape(fig.a)}</th><th>{escape(fig.b)}</th><th>difference [95%]</th>"
            f"<th>{escape(fig.a)} − {escape(fig.b)}</th><th>p</th><th>win / tie / loss ({fig.n})</th>")
    return (f'<div class="scroll"><table class="paired"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>{key}')


def _grid(fig: GridFigure, links: Links) -> str:
    return f'<div class="scroll">{_svg.grid(fig, links)}</div>{_svg.legend(fig.legend)}'


def _block(block: Block, links: Links, colours: _svg.Colours, n: int) -> str:
    if isinstance(block, CurveFigure):
        from ctxgauge.report._budget import curve_svg

        # The curve, and its numbers folded under it (the table the terminal and Markdown show).
        body = (f'<div class="scroll">{curve_svg(block, colours, links)}</div>'
                f"<details><summary>the numbers</summary>{_table(block, links)}</details>")
    elif isinstance(block, Table):
        body = _table(block, links)
    elif isinstance(block, BarsFigure):
        body = _bars(block, links, colours)
    elif isinstance(block, PairedFigure):
        body = _paired(block, colours)
    else:
        body = _grid(block, links)
    table = isinstance(block, Table) and not isinstance(block, CurveFigure)
    tag = "div" if table else "figure"
    cls = "card" if table else "card plot"
    said = " ".join(filter(None, [block.caption, getattr(block, "hover", None)]))
    data = [*block.sources, *(getattr(block, k, "") for k in ("a", "b"))]  # the record values a caption quotes
    caption = f'<p class="caption">{own_text(said, data)}</p>' if said else ""
    title = f"<h3>{escape(block.title)}</h3>"
    if getattr(block, "detail", False):
        # A per-item table can be long: folded, opened by the reader (no script needed).
        title, body = "", f"<details><summary>{escape(block.title)}</summary>{body}</details>"
    return (f'<{tag} class="{cls}" id="fig-{n}" data-kind="{block.kind}" data-runs="{escape(" ".join(block.sources))}">'
            f"{title}{body}{caption}{_sources(block.sources, links)}</{tag}>")


def _section(sec: Section, links: Links, colours: _svg.Colours, counter: list[int]) -> str:
    notes = "".join(f"<li>{escape(n)}</li>" for n in sec.notes)
    parts = [f'<section class="suite" id="suite-{escape(sec.suite)}"><h2>{escape(sec.title)}</h2>']
    if notes:
        parts.append(f'<ul class="notes">{notes}</ul>')
    if not sec.blocks:
        parts.append('<p class="caption">No finished run of this suite: nothing to draw.</p>')
    for block in sec.blocks:
        counter[0] += 1
        parts.append(_block(block, links, colours, counter[0]))
    parts.append("</section>")
    return "".join(parts)


def render_html(report: Report, base: Path | None = None) -> str:
    """The page as text. `base`: the directory the page will be written to (links are made relative to
    it); None keeps the run paths as they were given."""
    links = Links(report, base)
    colours = _svg.Colours()
    counter = [0]
    finished = sum(1 for row in report.overview.rows if row[2].style == "good")
    dnf = len(report.overview.rows) - finished
    nav = "".join(f'<a href="#suite-{escape(s.suite)}">{escape(s.suite)}</a>' for s in report.sections)
    overview = _block(report.overview, links, colours, 0)  # last, as in every view: figures first
    body = "".join(_section(s, links, colours, counter) for s in report.sections)
    subtitle = (f"{len(report.runs)} run{'s' if len(report.runs) != 1 else ''}: {finished} finished"
                + (f", {dnf} did not finish (listed, never in a mean)" if dnf else "")
                + ". Every figure links to the run record it comes from.")
    return (
        f"<!DOCTYPE html>\n{MARK_LINE}\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        # No request may leave the page: forbid every fetch but inline styles, inline SVG and data: images.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">"
        f"<title>{escape(report.title)}</title><style>{CSS}</style></head><body>"
        f'<header class="top"><div class="wrap"><h1>{escape(report.title)}</h1><p>{escape(subtitle)}</p>'
        f"<nav>{nav}</nav></div></header>"
        f'<main class="wrap">{body}{overview}'
        f"<footer>Written by ctxgauge {escape(ctxgauge.__version__)} from run records alone; regenerate it with "
        f"<code>ctxgauge report RUNS_DIR --html FILE</code>.</footer></main></body></html>\n"
    )


def write_html(report: Report, path: str | Path) -> Path:
    """Write the page atomically to `path`, links relative to its directory; returns the path."""
    from ctxgauge._io import write_text_atomic

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, render_html(report, path.parent))


__all__ = ["Links", "own_text", "render_html", "write_html"]
