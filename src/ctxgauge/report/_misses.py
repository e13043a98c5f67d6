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

from ctxgauge.results import RetrievalUnit, TypedRun
from ctxgauge.report._model import Cell, Table


@dataclass(frozen=True)
class ExpectedFile:
    """One expected file of a missed request and where it landed."""

    path: str
    rank: int | None
    """1-based rank in the engine's ranking; None when it is not there."""
    indexed: bool = True
    """False for a coverage gap: the corpus did not index it, so no ranking could hold it."""

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


def _expected(unit: RetrievalUnit) -> list[str]:
    return list(dict.fromkeys([*(unit.expected or []), *unit.any_of_members()]))


def _ranking(unit: RetrievalUnit, role: str) -> tuple[str, list[str]] | None:
    if role == "vs":
        vs = unit.vs
        return (vs.engine, [h.path for h in vs.ranking]) if vs is not None else None
    return "", [h.path for h in unit.ranking or []]


def misses(run: TypedRun, k: int, engines: Sequence[str]) -> list[Miss]:
    """Every scored request of `run` that an engine missed at `k`, in unit order; `engines` is
    (measured[, vs]) as the run's subject names them."""
    out = []
    for unit in run.units():
        if unit.status != "ok" or not unit.figures or all(v is None for v in unit.figures.values()):
            continue
        expected = _expected(unit)
        gap = set(unit.coverage_gap or [])
        for role, name in zip(("engine", "vs"), engines):
            got = _ranking(unit, role)
            if got is None:
                continue
            ranked = got[1]
            if any(p in ranked[:k] for p in expected):
                continue
            rank = {p: i for i, p in reversed(list(enumerate(ranked, 1)))}
            files = tuple(ExpectedFile(p, rank.get(p), p not in gap) for p in expected)
            if not any(f.indexed for f in files):
                continue  # only a coverage gap: unscorable, not a miss of the engine
            out.append(Miss(unit.id, unit.request or "", name, files, tuple(ranked[:k]), len(ranked)))
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
    for m in found:
        label = m.unit[:10] if unit_name == "commit" else m.unit
        rows.append([Cell(label, run=run.rel, wrap=False), Cell(m.request), Cell(m.engine),
                     Cell("; ".join(f"{f.path} ({f.where(m.depth)})" for f in m.expected)),
                     Cell("; ".join(m.top) or "(nothing returned)")])
    return Table(f"Misses at {k}: {run.rel} ({misses_header(run, found, engines, unit_name)})",
                 [unit_name, "request", "engine", "expected file (where it landed)", f"top {k} instead"], rows,
                 sources=[run.rel], detail=True, free=[1],
                 caption=f"A {unit_name} is missed when none of its expected files is in the engine's top {k}. "
                 "Ranks are in the engine's whole ranking; 'not in the top N' means its N files never held it.")
