"""The one report model: sections of blocks (tables and figures), each naming the runs it comes from.

Every renderer (terminal, Markdown, HTML) reads this model and nothing else, so the three show the same
numbers. Blocks name their runs by the run's relative path (`RunRef.rel`); the renderer turns that into a
link relative to wherever it writes (the page may live anywhere relative to the runs).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Union


@dataclass
class Cell:
    """A table cell: text, with an optional style (a badge colour class) and a link to a run."""

    text: str
    """What is shown."""
    style: str | None = None
    """`good`, `warn`, `bad`, `muted` or `ctl0`..`ctl4`: rendered as a badge (HTML) or colour (terminal)."""
    run: str | None = None
    """Relative path of a run this cell links to."""
    file: str | None = None
    """A file inside that run to link to instead of its run.json (e.g. a fingerprint)."""
    num: bool = False
    """Right-aligned (a number)."""
    wrap: bool = True
    """False keeps the text on one line (a time, an id)."""

    def __post_init__(self) -> None:
        # A cell's text often comes straight from a run record, which may come from anywhere and hold any JSON
        # there (a fuzzed record's family status `true` reached the Markdown escaper as a bool).
        if not isinstance(self.text, str):
            self.text = str(self.text)


def cell(value: Any, **kw: Any) -> Cell:
    """A Cell from a string or an existing Cell."""
    return value if isinstance(value, Cell) else Cell(str(value), **kw)


@dataclass
class Table:
    """A table of cells."""

    title: str
    columns: list[str]
    rows: list[list[Cell]]
    sources: list[str] = field(default_factory=list)
    """Runs the table's figures come from."""
    caption: str | None = None
    kind: str = "table"
    detail: bool = False
    """A per-item table (the misses): folded in HTML; in the terminal and Markdown only when asked for
    (`--misses`), since it can be long."""
    free: list[int] = field(default_factory=list)
    """Terminal only: the columns of free text (a commit subject, a message), the only cells a narrow terminal
    may end in `…`; every other column keeps each token whole (`_fit`)."""
    drop: list[int] = field(default_factory=list)
    """Terminal only: the columns a terminal too narrow for the table leaves out, first left out first; a
    column not named here is never left out (`_fit`)."""


@dataclass
class Bar:
    """One bar: a value with an optional interval, linked to the run it comes from."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    run: str | None = None
    text: str | None = None
    """The value as shown beside the bar (default: the value to 3 decimals)."""


@dataclass
class Panel:
    """One metric's bars, all on one axis from 0 to `top`."""

    metric: str
    bars: list[Bar]
    top: float = 1.0


@dataclass
class BarsFigure:
    """Small multiples: a panel per metric, a bar per system, intervals as whiskers."""

    title: str
    panels: list[Panel]
    sources: list[str]
    caption: str | None = None
    kind: str = "bars"


@dataclass
class PairedRow:
    """One metric of a paired comparison of A against B (differences are A - B)."""

    metric: str
    mean_a: float
    mean_b: float
    diff: float
    low: float
    high: float
    p_value: float
    wins: int
    ties: int
    losses: int


@dataclass
class PairedFigure:
    """A paired comparison: per metric the mean difference with its interval, the p-value, win/tie/loss."""

    title: str
    a: str
    b: str
    n: int
    rows: list[PairedRow]
    sources: list[str]
    caption: str | None = None
    kind: str = "paired"


@dataclass
class GridRow:
    """One row of a grid: a label (a system) and one state per column."""

    label: str
    cells: list[str]
    run: str | None = None


@dataclass
class GridFigure:
    """A categorical grid: per-commit hits for replay, per-question verdicts for qa.

    `legend` maps each state to its description, in the order it is shown; `columns` are (id, tooltip)."""

    title: str
    columns: list[tuple[str, str]]
    rows: list[GridRow]
    legend: dict[str, str]
    sources: list[str]
    caption: str | None = None
    hover: str | None = None
    """What a cell's tooltip shows, said under the caption only where cells have one (HTML): a terminal or a
    Markdown page cannot hover."""
    kind: str = "grid"


@dataclass
class CurvePoint:
    """One budget of a curve: the mean at that many context tokens, with its 95% interval (None: none)."""

    budget: int
    mean: float | None
    low: float | None = None
    high: float | None = None


@dataclass
class Curve:
    """One system's curve, linked to the run it comes from."""

    label: str
    points: list[CurvePoint]
    run: str | None = None


@dataclass
class CurveFigure(Table):
    """A value against a token budget per system (line coverage against context tokens, log x, interval
    bands). A Table too: the terminal and Markdown show its rows (a budget per row, a system per column);
    the HTML page draws `series` as lines over bands, with the table folded under it."""

    series: list[Curve] = field(default_factory=list)
    kind: str = "curve"


Block = Union[Table, BarsFigure, PairedFigure, GridFigure]


@dataclass
class Section:
    """One suite's part of the report."""

    suite: str
    title: str
    blocks: list[Block] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Plain sentences shown under the title (what was excluded and why)."""


@dataclass
class Report:
    """A whole report: the runs it read, a runs table, and a section per suite present."""

    title: str
    runs: dict[str, str]
    """Run relative path -> suite (every run read, finished or not)."""
    overview: Table
    sections: list[Section]
    run_paths: dict[str, str] = field(default_factory=dict)
    """Run relative path -> its directory as given (for links); not part of the JSON."""

    def to_dict(self) -> dict[str, Any]:
        """The `--json` shape: the whole model, run paths left out (they are local)."""
        d = asdict(self)
        d.pop("run_paths")
        return d
