"""Replay: a repository's own commits as labelled requests, scored against what each commit changed.

    from ctxgauge.suites.replay import ReplayConfig, replay
    result = replay(ReplayConfig(repo=Path("shelfd"), engine="bm25", vs="grep"))
    result.summary["recall@5"], result.comparison["metrics"]["recall@5"]["p_value"]

A pipeline of named phases, one module each: plan (`_plan`: check inputs, choose commits with `_select`,
label them with `_cases`), index and query (`_run`: oldest first, each index updated by the files that
changed), score (`ctxgauge.metrics.scoring`), compare (`_compare`), report (`_report`), and record
(`ctxgauge.records`, one unit per commit, as the run goes, so `resume` continues where a run stopped).
"""

from __future__ import annotations

from pathlib import Path

from ctxgauge.records import RunDir, Subject, default_run_dir, figures_headline
from ctxgauge.suites.replay import _report
from ctxgauge.suites.replay._cases import CommitLabels, ReplayCase, case_from_commit, changed_in_parent, label
from ctxgauge.suites.replay._compare import comparison, gate
from ctxgauge.suites.replay._plan import SUITE, SUITE_VERSION, Plan, ReplayConfig, plan
from ctxgauge.suites.replay._report import COVERAGE_GAP, ReplayResult
from ctxgauge.suites.replay._run import Progress, execute
from ctxgauge.suites._requests import BOT_MARKERS, RELEASE_PATTERNS, is_bot, is_release
from ctxgauge.suites.replay._select import SKIP_REASONS, Selection, request_key, select_commits, select_from_log

__all__ = [
    "BOT_MARKERS", "COVERAGE_GAP", "CommitLabels", "Plan", "Progress", "RELEASE_PATTERNS", "ReplayCase",
    "ReplayConfig", "ReplayResult", "SKIP_REASONS", "SUITE", "SUITE_VERSION", "Selection", "case_from_commit",
    "changed_in_parent", "comparison", "gate", "is_bot", "is_release", "label", "plan", "replay", "request_key",
    "select_commits", "select_from_log", "write_trec",
]


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


def replay(config: ReplayConfig, progress: Progress | None = None) -> ReplayResult:
    """Replay the commits `config` selects; record the run; return what was measured.

    Raises UserError for bad input before anything is written. An engine failing on a commit fails that
    commit's unit only. With `config.baseline`, check `result.passed` (the regression gate).
    """
    p = plan(config)
    try:
        out = Path(config.out) if config.out is not None else default_run_dir(SUITE)
        subject = Subject(dataset=p.spec["repo"], systems=[e.name for e in p.engines])
        with RunDir.start(out, suite=SUITE, suite_version=SUITE_VERSION, subject=subject, spec=p.spec,
                          resume=config.resume) as run:
            units = execute(p, run, progress)
            engine = p.engines[0].name
            vs = p.engines[1].name if len(p.engines) > 1 else None
            result = ReplayResult(
                run_dir=out, engine=engine, vs=vs,
                summary=_report.summary(units, p.metrics),
                vs_summary=_report.vs_summary(units, p.metrics),
                by_kind=_report.by_kind(units, p.metrics),
                commits=[_report.commit_entry(u) for u in units if u["status"] in ("ok", "failed")],
                skipped=_report.skipped_counts(units),
                counts=_report.counts(units),
                comparison=comparison(units, p.metrics, config.seed, engine) if vs else None,
                gate=gate(units, p.baseline, p.metrics, config.max_drop, p.baseline_id)
                if p.baseline is not None else None,
            )
            if config.trec is not None:
                write_trec(Path(config.trec), units, engine, vs)
            run.finish("success", results=result.results(), headline=figures_headline(result.summary, p.metrics))
        return result
    finally:
        p.close()
