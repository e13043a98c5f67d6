"""Helpers every suite's report part shares: number formats, intervals, did-not-finish notes."""

from __future__ import annotations

import os
from typing import Callable, Hashable, Iterable, Sequence, TypeVar

from ctxgauge.report._model import Cell
from ctxgauge.records import RunRef

T = TypeVar("T")

N_RESAMPLES = 10000
"""Bootstrap resamples of every interval a report draws (the suites' own default)."""


def fmt(value: float | int | None, digits: int = 3) -> str:
    """A figure as text: `-` for unmeasured, integers as they are, floats to `digits` decimals."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if digits == 0:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def fmt_interval(low: float | None, high: float | None, digits: int = 3, *, signed: bool = False) -> str:
    """An interval as every view prints it, `[0.625, 0.875]` (`signed`: `[-0.075, +0.125]`, for a
    difference); `-` when either end is unmeasured. The one interval format of every view, the terminal,
    Markdown, HTML and `replay --repos` alike (`0.667–1.000` there read as another kind of figure)."""
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
        return "-"
    sign = "+" if signed else ""
    return f"[{low:{sign}.{digits}f}, {high:{sign}.{digits}f}]"


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal (`-` when unmeasured)."""
    return "-" if value is None else f"{100 * value:.1f}%"


def pval(p: float | None) -> str:
    """A p-value to three decimals; below 0.001 as `<0.001` (a randomization test never proves zero); `-` when
    the record holds none (found by `make fuzz`: a null p-value raised TypeError in every renderer)."""
    if not isinstance(p, (int, float)):
        return "-"
    return "<0.001" if p < 0.0005 else f"{p:.3f}"


def usd(value: float | None) -> str:
    """A cost in US dollars (`-` when unknown: an unpriced model is never shown as free)."""
    if value is None:
        return "-"
    if value < 0.01:  # a cheap model's per-answer cost would read $0.0002 for every arm
        return f"${value:.6f}"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def num(value: float | int | None, digits: int = 3) -> Cell:
    """A right-aligned numeric cell."""
    return Cell(fmt(value, digits), num=True)


def interval(values: Sequence[float], seed: int) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high): the seeded 95% percentile bootstrap of the mean; no interval below two values."""
    from ctxgauge.metrics.ranking import mean_over

    mean = mean_over(values)
    if mean is None:
        return None, None, None
    if len(values) < 2:
        return mean, None, None
    from ctxgauge.metrics import bootstrap_ci

    _, low, high = bootstrap_ci(list(values), seed=seed, n_resamples=N_RESAMPLES)
    # The one mean (math.fsum, as the suites store it), not numpy's pairwise sum: that can differ in the last
    # bit and round the same figure to a different third decimal in a bar and in a table.
    return mean, low, high


def defined(values: Iterable[float | None]) -> list[float]:
    """The values that are measured (None dropped), as floats."""
    return [float(v) for v in values if v is not None]


def started_at(run: RunRef) -> str:
    """When the run started (its record's timing, not suite data; '' when unknown): runs are ordered by it,
    oldest first, then by path."""
    return str(run.record.timing.get("started_at") or "")


def status_cell(run: RunRef) -> Cell:
    """A run's status as a badge: finished runs green, everything else marked did-not-finish."""
    if run.finished:
        return Cell("finished", style="good", run=run.rel)
    return Cell(f"did not finish ({run.status})", style="bad", run=run.rel)


def dnf_note(runs: Sequence[RunRef]) -> list[str]:
    """One sentence per run that did not finish: published, never in a figure or a mean."""
    out = []
    for r in runs:
        if not r.finished:
            why = r.record.error or "no results recorded"
            out.append(f"{r.rel}: did not finish ({r.status}: {why}); shown in the runs table, left out of "
                       "every figure and mean.")
    return out


def nice_top(values: Iterable[float | None], floor: float = 0.05) -> float:
    """The smallest round axis end (1, 2, 2.5 or 5 times a power of ten) at or above every value."""
    import math

    top = max([floor] + [v for v in values if v is not None])
    exp = math.floor(math.log10(top))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if step * 10 ** exp >= top - 1e-12:
            return step * 10 ** exp
    return 10.0 ** (exp + 1)


def _front_cut(rels: Sequence[str]) -> int:
    # Where the front every path shares ends, cut after a `-`, `_` or `/`, leaving no path empty.
    common = len(os.path.commonprefix(list(rels))) if len(rels) > 1 else 0
    cut = max((i + 1 for i, c in enumerate(rels[0][:common]) if c in "-_/"), default=0)
    while cut and any(len(rel) <= cut for rel in rels):
        cut = max((i + 1 for i, c in enumerate(rels[0][:cut - 1]) if c in "-_/"), default=0)
    return cut


def label_systems(pairs: Sequence[tuple[str, RunRef]]) -> list[str]:
    """Labels for (system, run) pairs: the system name alone where it is shown once; where a name repeats,
    the name and the run it comes from (`bm25 · replay-bm25-5`), the run's relative path and never its bare
    id (two folders' `replay` runs would read the same). A label longer than a figure's label column
    (`_svg.LABEL_CHARS`) drops the front those runs' paths share, then keeps the path's end, where run names
    differ (a default name ends in its time and a random id): the name is never cut, nor the path's end."""
    from ctxgauge.report._svg import LABEL_CHARS

    names = [name for name, _ in pairs]
    cuts: dict[str, int] = {}  # one cut per name, so its labels read alike
    for name in dict.fromkeys(names):
        rels = list(dict.fromkeys(r.rel for n, r in pairs if n == name))
        too_long = any(len(rel) > LABEL_CHARS - len(name) - 3 for rel in rels)
        cuts[name] = _front_cut(rels) if too_long else 0
    out = []
    for name, run in pairs:
        if names.count(name) == 1:
            out.append(name)
            continue
        tag, room = run.rel[cuts[name]:], LABEL_CHARS - len(name) - 3
        if len(tag) > room > 1:
            tag = "…" + tag[-(room - 1):]
        out.append(f"{name} · {tag}")
    return out


def merge_same(items: Sequence[T], key: Callable[[T], Hashable],
               run: Callable[[T], RunRef]) -> list[tuple[T, list[RunRef]]]:
    """Items that are the same measurement (equal `key`: the same system with the same figures, in two runs)
    as one, with every run that measured it (the first one's run first): a reader sees the measurement once,
    not the same engine twice with the same numbers."""
    merged: dict[Hashable, tuple[T, list[RunRef]]] = {}
    for item in items:
        k = key(item)
        if k not in merged:
            merged[k] = (item, [run(item)])
        elif run(item).rel not in {r.rel for r in merged[k][1]}:
            merged[k][1].append(run(item))
    return list(merged.values())
