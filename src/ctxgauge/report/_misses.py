"""The misses of a retrieval run: which requests an engine missed, and where the right files landed.

A request is missed at k when it was scored and none of its expected files is in the engine's top k (the
run's smallest k, the one its hit map colours). For each miss: the request, every expected file with the
rank it landed at in the engine's whole ranking (or "not in the top N" when the ranking of N files never
held it; "not indexed" for a coverage gap), and the top k the engine returned instead.

Read from the units alone (replay and cases write `expected`, `ranking`, `coverage_gap` and, with `--vs`,
`vs: {engine, ranking}`), so a run recorded by an older ctxgauge shows its misses too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ctxgauge.results import Ranked, RetrievalUnit, TypedRun
from ctxgauge.report._model import Cell, Table


@dataclass(frozen=True)
class ExpectedFile:
    """One expected file of a missed request and where it landed."""

    path: str
    rank: int | None
    """1-based rank in the engine's ranking; None when it is not there."""
    indexed: bool = True
    """False for a coverage gap: the corpus did not index it, so no ranking could hold it."""
    gold: tuple[tuple[int, int], ...] = ()
    """The unit's gold lines in this file (`gold_lines`, issue 37), `(start, end)` 1-based inclusive; empty
    when the unit records none (a run before spans, or a file with no pre-image lines)."""
    returned: tuple[tuple[int, int], ...] | None = None
    """The spans the engine returned for this file (empty: the whole file), None when it did not return it."""

    def where(self, depth: int) -> str:
        if not self.indexed:
            return "not indexed"
        return f"rank {self.rank}" if self.rank is not None else f"not in the top {depth}"


@dataclass(frozen=True)
class Miss:
    """One request an engine missed at k."""

    unit: str
    request: str
    engine: str
    expected: tuple[ExpectedFile, ...]
    top: tuple[str, ...]
    """The engine's top k paths, best first."""
    depth: int
    """How many files the engine's ranking held (the N of "not in the top N")."""
    top_spans: tuple[tuple[tuple[int, int], ...], ...] = ()
    """The spans of each of `top` (empty: the whole file); empty when the ranking records no spans."""


def _expected(unit: RetrievalUnit) -> list[str]:
    return list(dict.fromkeys([*(unit.expected or []), *unit.any_of_members()]))


def _entries(unit: RetrievalUnit, role: str) -> list[Ranked] | None:
    if role == "vs":
        return list(unit.vs.ranking) if unit.vs is not None else None
    return list(unit.ranking or [])


def _spans(raw: Sequence[Sequence[int]] | None) -> tuple[tuple[int, int], ...]:
    """`[[s, e], ...]` as pairs."""
    return tuple((int(s), int(e)) for s, e in raw or ())


def span_text(spans: Sequence[tuple[int, int]]) -> str:
    """`12-40, 88-120` (`7` for one line); `whole file` for none."""
    return ", ".join(f"{s}" if s == e else f"{s}-{e}" for s, e in spans) if spans else "whole file"


def misses(run: TypedRun, k: int, engines: Sequence[str]) -> list[Miss]:
    """Every scored request of `run` that an engine missed at `k`, in unit order; `engines` is
    (measured[, vs]) as the run's subject names them."""
    out = []
    for unit in run.units():
        if unit.status != "ok" or not unit.figures or all(v is None for v in unit.figures.values()):
            continue
        expected = _expected(unit)
        gap = set(unit.coverage_gap or [])
        gold = unit.gold_lines or {}
        for role, name in zip(("engine", "vs"), engines):
            entries = _entries(unit, role)
            if entries is None:
                continue
            ranked = [h.path for h in entries]
            if any(p in ranked[:k] for p in expected):
                continue
            rank = {p: i for i, p in reversed(list(enumerate(ranked, 1)))}
            spans = {h.path: _spans(h.spans) for h in reversed(entries)}
            files = tuple(ExpectedFile(p, rank.get(p), p not in gap, _spans(gold.get(p)),
                                       spans.get(p) if p in rank else None) for p in expected)
            if not any(f.indexed for f in files):
                continue  # only a coverage gap: unscorable, not a miss of the engine
            top_spans = tuple(spans[p] for p in ranked[:k]) if any(h.spans for h in entries) else ()
            out.append(Miss(unit.id, unit.request or "", name, files, tuple(ranked[:k]), len(ranked), top_spans))
    return out


def scored_units(run: TypedRun, role: str) -> tuple[list[RetrievalUnit], list[RetrievalUnit]]:
    """The units the misses consider for an engine (`engine` or `vs`): ok, something to score, ranked by
    it; as (counted, known-gaps lane). The counted ones are the table's `scored` row and `counts.scored`."""
    counted, lane = [], []
    for unit in run.units():
        if unit.status != "ok" or not unit.figures or all(v is None for v in unit.figures.values()):
            continue
        if role == "vs" and unit.vs is None:
            continue
        (lane if unit.in_known_gaps else counted).append(unit)
    return counted, lane


def misses_header(run: TypedRun, found: Sequence[Miss], engines: Sequence[str], unit_name: str) -> str:
    """Per engine, how many of the units it was scored on it missed: `grep: 2 missed of 5 scored commits;
    bm25: 1 missed of 5 scored commits`, then the known-gaps lane's own count when it has units."""
    parts, gaps = [], []
    for role, name in zip(("engine", "vs"), engines):
        counted, lane = scored_units(run, role)
        ids = {u.id for u in lane}
        missed = [m for m in found if m.engine == name]
        in_lane = sum(1 for m in missed if m.unit in ids)
        parts.append(f"{name}: {len(missed) - in_lane} missed of {len(counted)} scored {unit_name}s")
        if lane:
            gaps.append(f"{name} {in_lane} missed of {len(lane)}")
    return "; ".join(parts) + (f"; known-gaps lane, not counted: {', '.join(gaps)}" if gaps else "")


def misses_table(run: TypedRun, k: int, engines: Sequence[str], unit_name: str) -> Table:
    """The misses as a report table (one row per missed request and engine)."""
    rows = []
    found = misses(run, k, engines)
    # Gold lines beside the returned spans (issue 37): a column only when a unit records gold lines, so a
    # run recorded before spans shows the table it always showed.
    lines = any(f.gold for m in found for f in m.expected)
    for m in found:
        label = m.unit[:10] if unit_name == "commit" else m.unit
        top = ([f"{p} ({span_text(sp)})" for p, sp in zip(m.top, m.top_spans)] if m.top_spans else list(m.top))
        rows.append([Cell(label, run=run.rel, wrap=False), Cell(m.request), Cell(m.engine),
                     Cell("; ".join(f"{f.path} ({f.where(m.depth)})" for f in m.expected)),
                     Cell("; ".join(top) or "(nothing returned)")]
                    + ([Cell("; ".join(f"{f.path}: gold {span_text(f.gold) if f.gold else '-'}, returned "
                                       f"{'not returned' if f.returned is None else span_text(f.returned)}"
                                       for f in m.expected))] if lines else []))
    return Table(f"Misses at {k}: {run.rel} ({misses_header(run, found, engines, unit_name)})",
                 [unit_name, "request", "engine", "expected file (where it landed)", f"top {k} instead"]
                 + (["gold lines / lines returned"] if lines else []), rows,
                 sources=[run.rel], detail=True, free=[1],
                 caption=f"A {unit_name} is missed when none of its expected files is in the engine's top {k}. "
                 "Ranks are in the engine's whole ranking; 'not in the top N' means its N files never held it.")
