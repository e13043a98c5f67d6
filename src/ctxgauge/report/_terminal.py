"""The report in a terminal: Rich tables, bars drawn with block glyphs, grids as coloured symbols.

Every string of the report model reaches Rich here as a `Text`, never as a markup string: titles, column
names and cells hold user text (paths, engine specs, run labels, commit subjects, case ids, engine error
messages), and Rich would read `[bold]` in them as a style (the text vanishes) and `a[/b]` as a closing tag
(MarkupError). Styles come only from the model's style names.
"""

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


def _lit(text: object, style: str = "") -> Text:
    """User text as Rich shows it literally (see the module docstring)."""
    return Text(str(text), style=style)


def _cell(c: Cell) -> Text:
    return _lit(c.text, STYLES.get(c.style or "", ""))


def _rich_table(title: str) -> RichTable:
    return RichTable(title=_lit(title), title_justify="left", title_style="bold", header_style="bold dim")


def _table(t: Table) -> RichTable:
    table = _rich_table(t.title)
    for i, name in enumerate(t.columns):
        # A column whose every cell asks to stay on one line (a system's label) keeps it whole; the others
        # fold to make room (`context:b` over `m25@5` reads as two things).
        table.add_column(_lit(name), justify="right" if t.rows and all(r[i].num for r in t.rows) else "left",
                         overflow="fold", no_wrap=bool(t.rows) and all(not r[i].wrap for r in t.rows))
    for row in t.rows:
        table.add_row(*[_cell(c) for c in row])
    return table


def _bars(fig: BarsFigure) -> RichTable:
    table = _rich_table(fig.title)
    table.add_column("metric")
    table.add_column("system")
    table.add_column("", no_wrap=True)
    table.add_column("value", justify="right")
    table.add_column("95% interval", justify="right")
    for p in fig.panels:
        for i, b in enumerate(p.bars):
            interval = f"[{b.low:.3f}, {b.high:.3f}]" if b.low is not None and b.high is not None else ""
            value = "not measured" if b.value is None else (b.text or f"{b.value:.3f}")
            table.add_row(_lit(p.metric if i == 0 else ""), _lit(b.label), _lit(text_bar(b.value, p.top), "cyan"),
                          _lit(value), _lit(interval), end_section=i == len(p.bars) - 1)
    return table


def _paired(fig: PairedFigure) -> RichTable:
    table = _rich_table(fig.title)
    for i, name in enumerate(("metric", fig.a, fig.b, "difference", "95% interval", "p", "win/tie/loss")):
        table.add_column(_lit(name), justify="left" if i == 0 else "right")
    for r in fig.rows:
        sure = r.low > 0 or r.high < 0
        table.add_row(_lit(r.metric), _lit(f"{r.mean_a:.3f}"), _lit(f"{r.mean_b:.3f}"),
                      _lit(f"{r.diff:+.3f}", "bold" if sure else ""), _lit(f"[{r.low:+.3f}, {r.high:+.3f}]"),
                      _lit(pval(r.p_value)), _lit(f"{r.wins}/{r.ties}/{r.losses}"))
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
    parts: list[RenderableType] = [Rule(_lit(sec.title), align="left", style="blue")]
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
