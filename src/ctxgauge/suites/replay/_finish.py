"""Phase 5 of a replay, results: from every commit's unit to the run's results, TREC files (the retrieval
pipeline's one writer) and its end.

Everything here reads units only, so a resumed run's earlier units count exactly like new ones.
"""

from __future__ import annotations

from pathlib import Path

from ctxgauge.records import RunDir, Subject, figures_headline
from ctxgauge.results import CurvePoint, ReplayResults, ReplaySpec, ReplayUnit
from ctxgauge.suites._retrieval import budget_curve, write_trec
from ctxgauge.suites.replay._compare import comparison, gate
from ctxgauge.suites.replay._plan import SUITE, SUITE_VERSION, Plan
from ctxgauge.suites.replay._report import (
    ReplayResult, by_kind, counts, skipped_counts, summary, vs_summary,
)


def start_run(p: Plan, out: Path, resume: bool, context: dict | None = None) -> RunDir:
    """Open (or with `resume` reopen) the run directory of a plan: the one way replay and --repos start one."""
    subject = Subject(dataset=p.spec["repo"], systems=[e.name for e in p.engines])
    spec = ReplaySpec.from_json(p.spec, str(out), "spec").to_json()  # the typed settings every reader reads
    return RunDir.start(out, suite=SUITE, suite_version=SUITE_VERSION, subject=subject, spec=spec,
                        resume=resume, context=context)


def curves(units: list[ReplayUnit], engine: str, vs: str | None, seed: int) -> dict[str, list[CurvePoint]]:
    """`results.budget_curve`: per engine, line coverage under each budget of the area's, over the ok
    commits with gold lines (seeded bootstrap interval); an engine without such a commit is left out."""
    ok = [u for u in units if u.ok]
    sides = {engine: [u.context.curve if u.context is not None else None for u in ok]}
    if vs is not None:
        sides[vs] = [u.vs.context.curve if u.vs is not None and u.vs.context is not None else None for u in ok]
    out = {}
    for name, rows in sides.items():
        points = budget_curve(rows, seed)
        if points:
            out[name] = [CurvePoint(**pt) for pt in points]
    return out


def results_of(p: Plan, units: list[ReplayUnit]) -> ReplayResults:
    """The typed results of a replay from its units (every unit, newest eligible commit first)."""
    config = p.config
    engine = p.engines[0].name
    vs = p.engines[1].name if len(p.engines) > 1 else None
    ctx = p.context
    return ReplayResults(
        engine=engine, vs=vs,
        summary=summary(units, p.metrics, ctx),
        vs_summary=vs_summary(units, p.metrics, ctx),
        by_kind=by_kind(units, p.metrics, ctx),
        skipped=skipped_counts(units),
        counts=counts(units),
        comparison=comparison(units, p.metrics, config.seed, engine, ctx) if vs else None,
        budget_curve=curves(units, engine, vs, config.seed) if ctx is not None else {},
        gate=gate(units, p.baseline, p.gate_metrics or p.metrics, config.max_drop, p.baseline_id)
        if p.baseline is not None else None,
    )


def finish(p: Plan, run: RunDir, lines: list[dict]) -> ReplayResult:
    """Phase 5: the results of a replay whose every commit has its unit (`lines`: the JSON lines
    recorded); marks the run a success."""
    units = [ReplayUnit.from_json(u, str(run.path)) for u in lines]
    results = results_of(p, units)
    if p.config.trec is not None:
        write_trec(Path(p.config.trec), units, results.engine, results.vs)
    run.finish("success", results=results.to_json(), headline=figures_headline(results.summary, p.metrics))
    return ReplayResult(run_dir=run.path, results=results,
                        commits=[u for u in units if u.status in ("ok", "failed")])
