"""The report in a terminal: Rich tables, bars drawn with block glyphs, grids as coloured symbols.

Every string of the report model reaches Rich here as a `Text`, never as a markup string: titles, column
names and cells hold user text (paths, engine specs, run labels, commit subjects, case ids, engine error
messages), and Rich would read `[bold]` in them as a style (the text vanishes) and `a[/b]` as a closing tag
(MarkupError). Styles come only from the model's style names.
"""

from __future__ import annotations


from rich.console import Console, Group, RenderableType
from rich.constrain import Constrain
from rich.rule import Rule
from rich.text import Text

from ctxgauge.report._common import fmt_interval, pval
from ctxgauge.report._fit import FREE, WHOLE, WORDS, Col, Fitted
from ctxgauge.report._markdown import GRID_SYMBOLS
from ctxgauge.report._model import BarsFigure, Block, Cell, GridFigure, PairedFigure, Report, Section, Table

STYLES = {"good": "green", "warn": "yellow", "bad": "bold red", "muted": "dim", "ctl4": "bold green",
          "ctl3": "green", "ctl2": "cyan", "ctl1": "yellow", "ctl0": "red"}
GRID_STYLES = {"hit": "green", "near": "bright_green", "miss": "red", "unscorable": "dim", "failed": "bold white",
               "pass": "green", "fail": "red", "adjudicate": "yellow", "infra": "magenta", "not-judged": "dim"}
BAR_WIDTH = 20
RULE_WIDTH = 120
EIGHTHS = " ▏▎▍▌▋▊▉"


def text_bar(value: float | None, top: float, width: int = BAR_WIDTH) -> str:
    """A horizontal bar of `width` cells in eighth-cell steps (blank for an unmeasured value)."""
    if value is None or top <= 0:
        return " " * width
    eighths = round(max(0.0, min(value / top, 1.0)) * width * 8)
    full, rest = divmod(eighths, 8)
    return ("█" * full + (EIGHTHS[rest] if rest else "")).ljust(width)


def _lit(text: object, style: str = "") -> Text:
    """User text as Rich shows it literally (see the module docstring)."""
    return Text(str(text), style=style)


def _cell(c: Cell) -> Text:
    return _lit(c.text, STYLES.get(c.style or "", ""))


def _table(t: Table) -> Fitted:
    cols = []
    for i, name in enumerate(t.columns):
        cells = [r[i] for r in t.rows]
        number = bool(cells) and all(c.num for c in cells)
        # A number, or a cell the model keeps on one line (a time, an id), is one token: never wrapped or cut.
        kind = FREE if i in t.free else WHOLE if cells and all(c.num or not c.wrap for c in cells) else WORDS
        cols.append(Col(name, kind, right=number, drop=t.drop.index(i) + 1 if i in t.drop else None))
    return Fitted(cols, [[_cell(c) for c in row] for row in t.rows], title=_lit(t.title, "bold"))


def _bars(fig: BarsFigure) -> Fitted:
    # Left out first when narrow: the drawn bar (its value is beside it).
    cols = [Col("metric", WORDS), Col("system", WORDS), Col("", WHOLE, drop=1), Col("value", WHOLE, right=True),
            Col("95% interval", WHOLE, right=True)]
    rows, ends = [], []
    for p in fig.panels:
        for i, b in enumerate(p.bars):
            interval = fmt_interval(b.low, b.high) if b.low is not None and b.high is not None else ""
            value = "not measured" if b.value is None else (b.text or f"{b.value:.3f}")
            rows.append([_lit(p.metric if i == 0 else ""), _lit(b.label), _lit(text_bar(b.value, p.top), "cyan"),
                         _lit(value), _lit(interval)])
            ends.append(i == len(p.bars) - 1)
    return Fitted(cols, rows, title=_lit(fig.title, "bold"), ends=ends)


def _paired(fig: PairedFigure) -> Fitted:
    # Left out first when narrow: win/tie/loss, then the two means together (the per-engine table shows them),
    # then p; the difference and its interval always stay.
    cols = [Col("metric", WHOLE), Col(fig.a, WHOLE, right=True, drop=2), Col(fig.b, WHOLE, right=True, drop=2),
            Col("difference", WHOLE, right=True), Col("95% interval", WHOLE, right=True),
            Col("p", WHOLE, right=True, drop=3), Col("win/tie/loss", WHOLE, right=True, drop=1)]
    rows = []
    for r in fig.rows:
        sure = r.low > 0 or r.high < 0
        rows.append([_lit(r.metric), _lit(f"{r.mean_a:.3f}"), _lit(f"{r.mean_b:.3f}"),
                     _lit(f"{r.diff:+.3f}", "bold" if sure else ""), _lit(fmt_interval(r.low, r.high, signed=True)),
                     _lit(pval(r.p_value)), _lit(f"{r.wins}/{r.ties}/{r.losses}")])
    return Fitted(cols, rows, title=_lit(fig.title, "bold"))


def _grid(fig: GridFigure) -> RenderableType:
    width = max([len(r.label) for r in fig.rows] + [4])
    lines: list[RenderableType] = [Text(fig.title, style="bold")]
    for r in fig.rows:
        line = Text(f"{r.label:<{width}}  ")
        for c in r.cells:
            line.append(GRID_SYMBOLS.get(c, "?"), style=GRID_STYLES.get(c, ""))
        lines.append(line)
    key = Text("  ".join(f"{GRID_SYMBOLS.get(s, '?')} {d}" for s, d in fig.legend.items()), style="dim")
    lines.append(key)
    return Group(*lines)


def _block(block: Block) -> RenderableType:
    if isinstance(block, Table):
        body: RenderableType = _table(block)
    elif isinstance(block, BarsFigure):
        body = _bars(block)
    elif isinstance(block, PairedFigure):
        body = _paired(block)
    else:
        body = _grid(block)
    extra: list[RenderableType] = [body]
    if block.caption:
        extra.append(Text(block.caption, style="dim italic"))
    if block.sources:
        extra.append(Text("from " + ", ".join(block.sources), style="dim"))
    return Group(*extra, Text(""))


def _section(sec: Section) -> RenderableType:
    # A rule, not a panel, above each section: a panel's border would take width the tables need.
    # At most RULE_WIDTH wide: without a terminal the console has no width limit (`_fit`), and a rule fills its width.
    parts: list[RenderableType] = [Constrain(Rule(_lit(sec.title), align="left", style="blue"), RULE_WIDTH)]
    parts += [Text(n, style="dim") for n in sec.notes]
    parts += [_block(b) for b in sec.blocks] or [Text("No finished run of this suite: nothing to draw.", style="dim")]
    return Group(*parts)


def render_terminal(report: Report, console: Console | None = None, *, details: bool = False) -> None:
    """Print the report to `console` (default: stdout); per-item tables (the misses) only with `details`.

    Figures first: the suites' sections, then the Runs table they come from (a single-run command's first
    screen is its figures, not a table of one run). Every table lays itself out for the console's width
    (`_fit`): no id, path, number or interval is split or cut."""
    console = console or Console(highlight=False)
    for sec in report.sections:
        console.print(_section(sec if details else _without_details(sec)))
    console.print(_block(report.overview))


def render_details(report: Report, console: Console | None = None) -> None:
    """Print only the report's per-item tables (the misses), section by section."""
    console = console or Console(highlight=False)
    for sec in report.sections:
        for block in sec.blocks:
            if getattr(block, "detail", False):
                console.print(_block(block))


def _without_details(sec: Section) -> Section:
    return Section(sec.suite, sec.title, [b for b in sec.blocks if not getattr(b, "detail", False)], sec.notes)
