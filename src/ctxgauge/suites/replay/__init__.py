"""Replay: a repository's own commits as labelled requests, scored against what each commit changed.

    from ctxgauge.suites.replay import ReplayConfig, replay
    result = replay(ReplayConfig(repo=Path("shelfd"), engine="bm25", vs="grep"))
    result.results.summary["recall@5"], result.results.comparison.metrics["recall@5"].p_value

A pipeline of named phases: plan (`_plan`: check inputs, choose commits with `_select`, label them with
`_cases`), then the retrieval pipeline replay shares with cases (`ctxgauge.suites._retrieval`: index and
query oldest first, each index updated by the files that changed, score, compare, TREC; `_run` says which
commits are still to run and how a commit's parts make its unit), the regression gate (`_compare`), report
(`_report`), and record (`ctxgauge.records`, one unit per commit, as the run goes, so `resume` continues
where a run stopped).
"""

from __future__ import annotations

from pathlib import Path

from ctxgauge.executors import open_executor
from ctxgauge.records import default_run_dir
from ctxgauge.suites.replay._cases import CommitLabels, ReplayCase, case_from_commit, changed_in_parent, label
from ctxgauge.suites.replay._compare import comparison, gate
from ctxgauge.suites.replay._finish import finish, start_run, write_trec
from ctxgauge.suites.replay._many import SUMMARY_FILE, ManyResult, RepoLine, read_repos_file, replay_many
from ctxgauge.suites.replay._plan import SUITE, SUITE_VERSION, Plan, ReplayConfig, plan
from ctxgauge.suites.replay._report import COVERAGE_GAP, ReplayResult
from ctxgauge.suites.replay._run import Progress, execute
from ctxgauge.suites._requests import BOT_MARKERS, RELEASE_PATTERNS, is_bot, is_release
from ctxgauge.suites.replay._select import SKIP_REASONS, Selection, request_key, select_commits, select_from_log

__all__ = [
    "BOT_MARKERS", "COVERAGE_GAP", "CommitLabels", "ManyResult", "RepoLine", "SUMMARY_FILE", "finish", "start_run",
    "read_repos_file", "replay_many", "Plan", "Progress", "RELEASE_PATTERNS", "ReplayCase",
    "ReplayConfig", "ReplayResult", "SKIP_REASONS", "SUITE", "SUITE_VERSION", "Selection", "case_from_commit",
    "changed_in_parent", "comparison", "gate", "is_bot", "is_release", "label", "plan", "replay", "request_key",
    "select_commits", "select_from_log", "write_trec",
]


def replay(config: ReplayConfig, progress: Progress | None = None) -> ReplayResult:
    """Replay the commits `config` selects; record the run; return what was measured.

    Raises UserError for bad input before anything is written. An engine failing on a commit fails that
    commit's unit only. With `config.baseline`, check `result.passed` (the regression gate).
    """
    p = plan(config)
    try:
        out = Path(config.out) if config.out is not None else default_run_dir(SUITE)
        with open_executor(config.executor) as executor, start_run(p, out, config.resume) as run:
            units = execute(p, run, progress, executor, config.slice_size)
            return finish(p, run, units)
    finally:
        p.close()
