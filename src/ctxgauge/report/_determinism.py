"""The determinism suite's part of a report: a CTL badge per engine, the family figures, drift, flags, and
a link to each fingerprint.

Reads `results.engines[spec] = {status, reason, level, label, grade, drift, families, flags, fingerprint}`
(see `ctxgauge.suites.determinism._results`). A skipped engine shows as skipped with its reason and a level
that is not measured shows as such: neither is ever drawn as a pass.
"""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal
from typing import Any, Sequence

from ctxgauge.results import EngineResult, TypedRun
from ctxgauge.results._determinism import QueryFigures, RebuildFigures
from ctxgauge.report._common import dnf_note, fmt, label_systems, nice_top
from ctxgauge.report._leaderboard import Attempt, Value
from ctxgauge.report._model import Bar, BarsFigure, Cell, Panel, Section, Table

SKIPPED, FAILED = "skipped", "failed"
"""An engine's status when it was unavailable, or failed."""
REBUILD, QUERY, DRIFT, UPDATE, CROSS_MACHINE = "rebuild", "query", "drift", "update", "cross-machine"
"""The families, by name."""

def engines(run: TypedRun) -> dict[str, EngineResult]:
    """Engine spec -> its result in a finished run, in the order the run was given its engines."""
    found = run.results.engines
    order = [e for e in run.subject.systems if e in found]
    return {e: found[e] for e in order + sorted(set(found) - set(order))}


def level_cell(result: EngineResult, run: TypedRun) -> Cell:
    """The CTL badge: coloured by level; grey for skipped and not measured."""
    if result.status == SKIPPED:
        return Cell("skipped", style="muted", run=run.rel)
    level = result.level
    if result.status == FAILED or level is None:
        return Cell(str(result.label or "not measured"), style="muted", run=run.rel)
    return Cell(str(result.label or f"CTL {level}"), style=f"ctl{int(level)}", run=run.rel)


def _rebuild(result: EngineResult) -> Cell:
    f, why = result.family(REBUILD)
    if why:
        return Cell(why, style="muted")
    n, builds = f.distinct_hashes, f.rebuilds
    return Cell(f"{n} hash{'es' if n != 1 else ''} / {builds} builds", style="good" if n == 1 else "bad")


def _cut(value: Any, digits: int = 3) -> str:
    # Cut rather than rounded, and marked when cut: 0.99996 prints as 0.999…, never as a 1.000 that reads
    # like the exact match a CTL 2 needs and the run did not have.
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return fmt(value, digits)
    exact = Decimal(repr(float(value)))
    cut = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_FLOOR)
    return f"{cut}" + ("…" if cut != exact else "")


def _has_spans(result: EngineResult) -> bool:
    """Whether the run measured the exact match of spans (runs before spans did not)."""
    f = result.family(QUERY)[0]
    return f is not None and f.span_exact_match_rate is not None


def _query(result: EngineResult, spans: bool = False) -> Cell:
    """EMR / Jaccard / τ; with `spans`, the exact match of the answers with their spans beside the file
    EMR (`-` for an engine whose run did not measure it)."""
    f, why = result.family(QUERY)
    if why:
        return Cell(why, style="muted")
    values = (f.exact_match_rate,) + ((f.span_exact_match_rate,) if spans else ()) + (f.mean_jaccard,
                                                                                      f.mean_kendall_tau)
    return Cell(" / ".join(_cut(v) for v in values), num=True)


def _update(result: EngineResult) -> Cell:
    f, why = result.family(UPDATE)
    if why:
        return Cell(why, style="muted")
    same = f.identical
    return Cell("identical" if same else "differs", style="good" if same else "bad")


def _cross(result: EngineResult) -> Cell:
    f, why = result.family(CROSS_MACHINE)
    if why:
        return Cell(why, style="muted")
    verdict = str(f.verdict or "-")
    return Cell(verdict, style="good" if verdict.upper() == "PASS" else "bad")


def _drift(result: EngineResult) -> Cell:
    drift = result.drift
    if not drift:
        return Cell(result.family(DRIFT)[1] or "-", style="muted")
    # Text, not a right-aligned figure: one line per noise kind may wrap, so the table fits its card.
    return Cell(", ".join(f"{kind} {value:.3f}" for kind, value in sorted(drift.items())))


def _flags(result: EngineResult) -> Cell:
    flags = result.flags
    if result.status in (SKIPPED, FAILED):
        return Cell(str(result.reason or result.status), style="muted")
    if not flags:
        return Cell("none")
    return Cell("; ".join(f"{f.flag}: {f.reason}" for f in flags), style="warn")


def _table(runs: Sequence[TypedRun]) -> Table:
    rows = []
    pairs = [(spec, run) for run in runs for spec in engines(run)]
    # The span EMR column appears when some engine here measured it, so reports of runs from before spans
    # read exactly as they did.
    spans = any(_has_spans(engines(run)[spec]) for spec, run in pairs)
    for label, (spec, run) in zip(label_systems(pairs), pairs):
        r = engines(run)[spec]
        fp = r.fingerprint
        if r.status == SKIPPED:
            # One reason, not a "not measured" badge in every family column.
            rows.append([Cell(label, run=run.rel), level_cell(r, run)] + [Cell("-")] * 5 + [_flags(r), Cell("-")])
            continue
        rows.append([Cell(label, run=run.rel), level_cell(r, run), _rebuild(r), _query(r, spans), _drift(r), _update(r),
                     _cross(r), _flags(r), Cell("fingerprint", run=run.rel, file=fp) if fp else Cell("-")])
    k = runs[0].results.k if runs else None
    return Table("Context Trust Level per engine",
                 ["engine", "level", "rebuild", f"EMR / span EMR / Jaccard@{k} / τ" if spans else
                  f"EMR / Jaccard@{k} / τ", "drift", "update", "cross-machine",
                  "flags / reason", "fingerprint"], rows, sources=[r.rel for r in runs], free=[7],
                 caption=("CTL 4 cross-machine deterministic · 3 machine-deterministic (identical artifacts, EMR 1"
                          + (" for files and for spans" if spans else "") + ") "
                          "· 2 stable retrieval (EMR 1) · 1 repeatable (Jaccard and τ ≥ 0.9) · 0 below. "
                          + ("Span EMR: the same files handing over the same lines on every trial. " if spans else "")
                          + "Drift = 1 − Jaccard@k against the base build after one unrelated file is added."))


def _reasons(runs: Sequence[TypedRun]) -> list[str]:
    # The same reason for several engines (CTL 4 without a second machine) is one line naming them all.
    grouped: dict[str, list[str]] = {}
    for run in runs:
        for spec, r in engines(run).items():
            for reason in r.grade.reasons if r.grade is not None else []:
                grouped.setdefault(reason, []).append(spec)
    return [f"{', '.join(dict.fromkeys(specs))}: {reason}" for reason, specs in grouped.items()]


def _drift_figure(runs: Sequence[TypedRun]) -> BarsFigure | None:
    pairs = [(spec, run) for run in runs for spec in engines(run)]
    kinds = sorted({k for spec, run in pairs for k in engines(run)[spec].drift})
    if not kinds:
        return None
    labels = label_systems(pairs)
    panels = []
    for kind in kinds:
        bars = [Bar(label, engines(run)[spec].drift.get(kind), run=run.rel)
                for label, (spec, run) in zip(labels, pairs)]
        panels.append(Panel(f"drift ({kind} noise)", bars, top=nice_top(b.value for b in bars)))
    return BarsFigure("Drift under noise (lower is steadier)", panels, list(dict.fromkeys(r.rel for r in runs)),
                      caption="1 − mean Jaccard@k of each query's results against the base build, after one "
                      "unrelated file of that kind joins the corpus. No interval: one noise file per kind.")


def section(suite: str, title: str, runs: Sequence[TypedRun]) -> Section:
    """The determinism section: per corpus, the CTL table and the drift bars."""
    sec = Section(suite, title, notes=dnf_note(runs))
    done = [r for r in runs if r.finished]
    for name in dict.fromkeys(r.subject.dataset for r in done):
        group = [r for r in done if r.subject.dataset == name]
        table = _table(group)
        table.title = f"{name}: {table.title}"
        sec.blocks.append(table)
        drift = _drift_figure(group)
        if drift is not None:
            sec.blocks.append(drift)
        sec.notes += _reasons(group)
    return sec


def leaderboard(run: TypedRun) -> list[Attempt]:
    """One attempt per engine of a finished run (skipped when the engine was unavailable): its level, the
    query-stability figures, the distinct artifact hashes and the drift per noise kind."""
    out = []
    for spec, r in engines(run).items():
        if r.status == SKIPPED:
            out.append(Attempt(spec, "skipped"))
            continue
        q = r.family(QUERY)[0] or QueryFigures()
        rb = r.family(REBUILD)[0] or RebuildFigures()
        span_emr = [("span_exact_match_rate", q.span_exact_match_rate)] if _has_spans(r) else []
        figures = [("ctl", r.level), ("exact_match_rate", q.exact_match_rate), *span_emr,
                   ("mean_jaccard", q.mean_jaccard), ("mean_kendall_tau", q.mean_kendall_tau),
                   ("distinct_artifact_hashes", rb.distinct_hashes)]
        figures += [(f"drift:{kind}", value) for kind, value in sorted(r.drift.items())]
        out.append(Attempt(spec, "valid", tuple(Value(m, None if v is None else float(v)) for m, v in figures)))
    return out
