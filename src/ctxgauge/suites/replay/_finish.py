"""Phase 5 of a replay, results: from every commit's unit to the run's results, TREC files and its end.

Everything here reads units only, so a resumed run's earlier units count exactly like new ones.
"""

from __future__ import annotations

from pathlib import Path

from ctxgauge.records import RunDir, Subject, figures_headline
from ctxgauge.suites.replay._compare import comparison, gate
from ctxgauge.suites.replay._plan import SUITE, SUITE_VERSION, Plan
from ctxgauge.suites.replay._report import (
    ReplayResult, by_kind, commit_entry, counts, skipped_counts, summary, vs_summary,
)


def write_trec(directory: Path, units: list[dict], engine: str, vs: str | None = None) -> list[Path]:
    """Write `run.trec` (and `run-vs.trec` with --vs) and `qrels.txt` for the ok units: query id = sha,
    relevant = expected files the corpus indexed (so trec_eval's recall equals ours)."""
    from ctxgauge.trec import write_qrels, write_run

    ok = [u for u in units if u.get("status") == "ok"]
    directory.mkdir(parents=True, exist_ok=True)
    written = [directory / "run.trec", directory / "qrels.txt"]
    write_run(written[0], {u["id"]: [h["path"] for h in u["ranking"]] for u in ok}, engine)
    gaps = {u["id"]: set(u.get("coverage_gap") or ()) for u in ok}
    write_qrels(written[1], {u["id"]: [p for p in u["expected"] if p not in gaps[u["id"]]] for u in ok})
    if vs is not None:
        written.append(directory / "run-vs.trec")
        write_run(written[2], {u["id"]: [h["path"] for h in u["vs"]["ranking"]] for u in ok if "vs" in u}, vs)
    return written


def start_run(p: Plan, out: Path, resume: bool, context: dict | None = None) -> RunDir:
    """Open (or with `resume` reopen) the run directory of a plan: the one way replay and --repos start one."""
    subject = Subject(dataset=p.spec["repo"], systems=[e.name for e in p.engines])
    return RunDir.start(out, suite=SUITE, suite_version=SUITE_VERSION, subject=subject, spec=p.spec,
                        resume=resume, context=context)


def finish(p: Plan, run: RunDir, units: list[dict]) -> ReplayResult:
    """Phase 5: the results of a replay whose every commit has its unit; marks the run a success."""
    config = p.config
    engine = p.engines[0].name
    vs = p.engines[1].name if len(p.engines) > 1 else None
    result = ReplayResult(
        run_dir=run.path, engine=engine, vs=vs,
        summary=summary(units, p.metrics),
        vs_summary=vs_summary(units, p.metrics),
        by_kind=by_kind(units, p.metrics),
        commits=[commit_entry(u) for u in units if u["status"] in ("ok", "failed")],
        skipped=skipped_counts(units),
        counts=counts(units),
        comparison=comparison(units, p.metrics, config.seed, engine) if vs else None,
        gate=gate(units, p.baseline, p.metrics, config.max_drop, p.baseline_id)
        if p.baseline is not None else None,
    )
    if config.trec is not None:
        write_trec(Path(config.trec), units, engine, vs)
    run.finish("success", results=result.results(), headline=figures_headline(result.summary, p.metrics))
    return result
