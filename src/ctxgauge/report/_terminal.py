"""The report in a terminal: Rich tables, bars drawn with block glyphs, grids as coloured symbols."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.rule import Rule
from rich.table import Table as RichTable
from rich.text import Text

from ctxgauge.report._common import pval
from ctxgauge.report._markdown import GRID_SYMBOLS
from ctxgauge.report._model import BarsFigure, Block, Cell, GridFigure, PairedFigure, Report, Section, Table

STYLES = {"good": "green", "warn": "yellow", "bad": "bold red", "muted": "dim", "ctl4": "bold green",
          "ctl3": "green", "ctl2": "cyan", "ctl1": "yellow", "ctl0": "red"}
GRID_STYLES = {"hit": "green", "near": "bright_green", "miss": "red", "unscorable": "dim", "failed": "bold white",
               "pass": "green", "fail": "red", "adjudicate": "yellow", "infra": "magenta", "not-judged": "dim"}
BAR_WIDTH = 20
EIGHTHS = " ▏▎▍▌▋▊▉"


def text_bar(value: float | None, top: float, width: int = BAR_WIDTH) -> str:
    """A horizontal bar of `width` cells in eighth-cell steps (blank for an unmeasured value)."""
    if value is None or top <= 0:
        return " " * width
    eighths = round(max(0.0, min(value / top, 1.0)) * width * 8)
    full, rest = divmod(eighths, 8)
    return ("█" * full + (EIGHTHS[rest] if rest else "")).ljust(width)


def _cell(c: Cell) -> Text:
    return Text(c.text, style=STYLES.get(c.style or "", ""))


def _table(t: Table) -> RichTable:
    table = RichTable(title=t.title, title_justify="left", title_style="bold", header_style="bold dim")
    for i, name in enumerate(t.columns):
        table.add_column(name, justify="right" if t.rows and all(r[i].num for r in t.rows) else "left",
                         overflow="fold")
    for row in t.rows:
        table.add_row(*[_cell(c) for c in row])
    return table


def _bars(fig: BarsFigure) -> RichTable:
    table = RichTable(title=fig.title, title_justify="left", title_style="bold", header_style="bold dim")
    table.add_column("metric")
    table.add_column("system")
    table.add_column("", no_wrap=True)
    table.add_column("value", justify="right")
    table.add_column("95% interval", justify="right")
    for p in fig.panels:
        for i, b in enumerate(p.bars):
            interval = f"[{b.low:.3f}, {b.high:.3f}]" if b.low is not None and b.high is not None else ""
            value = "not measured" if b.value is None else (b.text or f"{b.value:.3f}")
            table.add_row(p.metric if i == 0 else "", b.label, Text(text_bar(b.value, p.top), style="cyan"),
                          value, interval, end_section=i == len(p.bars) - 1)
    return table


def _paired(fig: PairedFigure) -> RichTable:
    table = RichTable(title=fig.title, title_justify="left", title_style="bold", header_style="bold dim")
    for name in ("metric", fig.a, fig.b, "difference", "95% interval", "p", "win/tie/loss"):
        table.add_column(name, justify="left" if name == "metric" else "right")
    for r in fig.rows:
        sure = r.low > 0 or r.high < 0
        table.add_row(r.metric, f"{r.mean_a:.3f}", f"{r.mean_b:.3f}",
                      Text(f"{r.diff:+.3f}", style="bold" if sure else ""), f"[{r.low:+.3f}, {r.high:+.3f}]",
                      pval(r.p_value), f"{r.wins}/{r.ties}/{r.losses}")
    return table


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
    parts: list[RenderableType] = [Rule(sec.title, align="left", style="blue")]
    parts += [Text(n, style="dim") for n in sec.notes]
    parts += [_block(b) for b in sec.blocks] or [Text("No finished run of this suite: nothing to draw.", style="dim")]
    return Group(*parts)


def render_terminal(report: Report, console: Console | None = None, *, details: bool = False) -> None:
    """Print the report to `console` (default: stdout); per-item tables (the misses) only with `details`."""
    console = console or Console(highlight=False)
    console.print(_block(report.overview))
    for sec in report.sections:
        console.print(_section(sec if details else _without_details(sec)))


def render_details(report: Report, console: Console | None = None) -> None:
    """Print only the report's per-item tables (the misses), section by section."""
    console = console or Console(highlight=False)
    for sec in report.sections:
        for block in sec.blocks:
            if getattr(block, "detail", False):
                console.print(_block(block))


def _without_details(sec: Section) -> Section:
    return Section(sec.suite, sec.title, [b for b in sec.blocks if not getattr(b, "detail", False)], sec.notes)
