"""The determinism suite's part of a report: a CTL badge per engine, the family figures, drift, flags, and
a link to each fingerprint.

Reads `results.engines[spec] = {status, reason, level, label, grade, drift, families, flags, fingerprint}`
(see `ctxgauge.suites.determinism._results`). A skipped engine shows as skipped with its reason and a level
that is not measured shows as such: neither is ever drawn as a pass.
"""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal
from typing import Any, Sequence

from ctxgauge.records import INT, NUMBER, STRING, ListOf, MapOf, Obj, Opt, RunRef
from ctxgauge.report._common import dnf_note, fmt, label_systems, nice_top
from ctxgauge.report._leaderboard import Attempt, Value
from ctxgauge.report._model import Bar, BarsFigure, Cell, Panel, Section, Table

FAMILY_OK = "ok"

_FAMILY = Obj({"figures": Opt(Obj({k: Opt(NUMBER) for k in (
    "exact_match_rate", "span_exact_match_rate", "mean_jaccard", "mean_kendall_tau", "distinct_hashes",
    "rebuilds")}))})
RESULTS_SHAPE = Obj({"engines": Opt(MapOf(Obj({
    "level": Opt(INT), "drift": Opt(MapOf(NUMBER)), "families": Opt(MapOf(Opt(_FAMILY))),
    "flags": Opt(ListOf(Obj({}))), "grade": Opt(Obj({"reasons": Opt(ListOf(STRING))})),
})))})
"""What this module reads of a determinism run's `results` (checked when the record is read)."""


def engines(run: RunRef) -> dict[str, dict[str, Any]]:
    """Engine spec -> its result in a finished run, in the order the run was given its engines."""
    found = run.results.get("engines") or {}
    order = [e for e in run.subject.systems if e in found]
    return {e: found[e] for e in order + sorted(set(found) - set(order))}


def level_cell(result: dict[str, Any], run: RunRef) -> Cell:
    """The CTL badge: coloured by level; grey for skipped and not measured."""
    if result.get("status") == "skipped":
        return Cell("skipped", style="muted", run=run.rel)
    level = result.get("level")
    if result.get("status") == "failed" or level is None:
        return Cell(str(result.get("label") or "not measured"), style="muted", run=run.rel)
    return Cell(str(result.get("label") or f"CTL {level}"), style=f"ctl{int(level)}", run=run.rel)


def _family(result: dict, name: str) -> tuple[dict, str | None]:
    fam = (result.get("families") or {}).get(name) or {}
    if fam.get("status") == FAMILY_OK:
        return fam.get("figures") or {}, None
    return {}, fam.get("status") or "not measured"


def _rebuild(result: dict) -> Cell:
    f, why = _family(result, "rebuild")
    if why:
        return Cell(why, style="muted")
    n, builds = f.get("distinct_hashes"), f.get("rebuilds")
    return Cell(f"{n} hash{'es' if n != 1 else ''} / {builds} builds", style="good" if n == 1 else "bad")


def _cut(value: Any, digits: int = 3) -> str:
    # Cut rather than rounded, and marked when cut: 0.99996 prints as 0.999…, never as a 1.000 that reads
    # like the exact match a CTL 2 needs and the run did not have.
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return fmt(value, digits)
    exact = Decimal(repr(float(value)))
    cut = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_FLOOR)
    return f"{cut}" + ("…" if cut != exact else "")


def _has_spans(result: dict) -> bool:
    """Whether the run measured the exact match of spans (runs before spans did not)."""
    return _family(result, "query")[0].get("span_exact_match_rate") is not None


def _query(result: dict, spans: bool = False) -> Cell:
    """EMR / Jaccard / τ; with `spans`, the exact match of the answers with their spans beside the file
    EMR (`-` for an engine whose run did not measure it)."""
    f, why = _family(result, "query")
    if why:
        return Cell(why, style="muted")
    keys = ("exact_match_rate",) + (("span_exact_match_rate",) if spans else ()) + ("mean_jaccard",
                                                                                   "mean_kendall_tau")
    return Cell(" / ".join(_cut(f.get(k)) for k in keys), num=True)


def _update(result: dict) -> Cell:
    f, why = _family(result, "update")
    if why:
        return Cell(why, style="muted")
    same = f.get("identical")
    return Cell("identical" if same else "differs", style="good" if same else "bad")


def _cross(result: dict) -> Cell:
    f, why = _family(result, "cross-machine")
    if why:
        return Cell(why, style="muted")
    verdict = str(f.get("verdict") or "-")
    return Cell(verdict, style="good" if verdict.upper() == "PASS" else "bad")


def _drift(result: dict) -> Cell:
    drift = result.get("drift") or {}
    if not drift:
        return Cell(_family(result, "drift")[1] or "-", style="muted")
    # Text, not a right-aligned figure: one line per noise kind may wrap, so the table fits its card.
    return Cell(", ".join(f"{kind} {value:.3f}" for kind, value in sorted(drift.items())))


def _flags(result: dict) -> Cell:
    flags = result.get("flags") or []
    if result.get("status") in ("skipped", "failed"):
        return Cell(str(result.get("reason") or result.get("status")), style="muted")
    if not flags:
        return Cell("none")
    return Cell("; ".join(f"{f.get('flag')}: {f.get('reason')}" for f in flags), style="warn")


def _table(runs: Sequence[RunRef]) -> Table:
    rows = []
    pairs = [(spec, run) for run in runs for spec in engines(run)]
    # The span EMR column appears when some engine here measured it, so reports of runs from before spans
    # read exactly as they did.
    spans = any(_has_spans(engines(run)[spec]) for spec, run in pairs)
    for label, (spec, run) in zip(label_systems(pairs), pairs):
        r = engines(run)[spec]
        fp = r.get("fingerprint")
        if r.get("status") == "skipped":
            # One reason, not a "not measured" badge in every family column.
            rows.append([Cell(label, run=run.rel), level_cell(r, run)] + [Cell("-")] * 5 + [_flags(r), Cell("-")])
            continue
        rows.append([Cell(label, run=run.rel), level_cell(r, run), _rebuild(r), _query(r, spans), _drift(r), _update(r),
                     _cross(r), _flags(r), Cell("fingerprint", run=run.rel, file=fp) if fp else Cell("-")])
    k = runs[0].results.get("k") if runs else None
    return Table("Context Trust Level per engine",
                 ["engine", "level", "rebuild", f"EMR / span EMR / Jaccard@{k} / τ" if spans else
                  f"EMR / Jaccard@{k} / τ", "drift", "update", "cross-machine",
                  "flags / reason", "fingerprint"], rows, sources=[r.rel for r in runs], free=[7],
                 caption=("CTL 4 cross-machine deterministic · 3 machine-deterministic (identical artifacts, EMR 1"
                          + (" for files and for spans" if spans else "") + ") "
                          "· 2 stable retrieval (EMR 1) · 1 repeatable (Jaccard and τ ≥ 0.9) · 0 below. "
                          + ("Span EMR: the same files handing over the same lines on every trial. " if spans else "")
                          + "Drift = 1 − Jaccard@k against the base build after one unrelated file is added."))


def _reasons(runs: Sequence[RunRef]) -> list[str]:
    # The same reason for several engines (CTL 4 without a second machine) is one line naming them all.
    grouped: dict[str, list[str]] = {}
    for run in runs:
        for spec, r in engines(run).items():
            for reason in (r.get("grade") or {}).get("reasons") or []:
                grouped.setdefault(reason, []).append(spec)
    return [f"{', '.join(dict.fromkeys(specs))}: {reason}" for reason, specs in grouped.items()]


def _drift_figure(runs: Sequence[RunRef]) -> BarsFigure | None:
    pairs = [(spec, run) for run in runs for spec in engines(run)]
    kinds = sorted({k for spec, run in pairs for k in (engines(run)[spec].get("drift") or {})})
    if not kinds:
        return None
    labels = label_systems(pairs)
    panels = []
    for kind in kinds:
        bars = [Bar(label, (engines(run)[spec].get("drift") or {}).get(kind), run=run.rel)
                for label, (spec, run) in zip(labels, pairs)]
        panels.append(Panel(f"drift ({kind} noise)", bars, top=nice_top(b.value for b in bars)))
    return BarsFigure("Drift under noise (lower is steadier)", panels, list(dict.fromkeys(r.rel for r in runs)),
                      caption="1 − mean Jaccard@k of each query's results against the base build, after one "
                      "unrelated file of that kind joins the corpus. No interval: one noise file per kind.")


def section(suite: str, title: str, runs: Sequence[RunRef]) -> Section:
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


def leaderboard(run: RunRef) -> list[Attempt]:
    """One attempt per engine of a finished run (skipped when the engine was unavailable): its level, the
    query-stability figures, the distinct artifact hashes and the drift per noise kind."""
    out = []
    for spec, r in engines(run).items():
        if str(r.get("status") or "measured") == "skipped":
            out.append(Attempt(spec, "skipped"))
            continue
        q, _ = _family(r, "query")
        rb, _ = _family(r, "rebuild")
        span_emr = [("span_exact_match_rate", q["span_exact_match_rate"])] if _has_spans(r) else []
        figures = [("ctl", r.get("level")), ("exact_match_rate", q.get("exact_match_rate")), *span_emr,
                   ("mean_jaccard", q.get("mean_jaccard")), ("mean_kendall_tau", q.get("mean_kendall_tau")),
                   ("distinct_artifact_hashes", rb.get("distinct_hashes"))]
        figures += [(f"drift:{kind}", value) for kind, value in sorted((r.get("drift") or {}).items())]
        out.append(Attempt(spec, "valid", tuple(Value(m, None if v is None else float(v)) for m, v in figures)))
    return out
