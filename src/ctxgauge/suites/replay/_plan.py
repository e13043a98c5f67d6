"""Phase 1 of a replay, plan: check every input, open the repository and the engines, choose the commits.

Everything a user can get wrong (a missing repository, a bad revision, an unknown or unavailable engine, a
bad -k, an unreadable baseline) fails here, before a run directory exists, so bad input leaves nothing
half-written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgauge.corpus import repo_name
from ctxgauge.engines import ask_identity, refuse_own_tree
from ctxgauge.errors import UserError
from ctxgauge.executors import parse_executor
from ctxgauge.git import Repo
from ctxgauge.metrics.scoring import metric_names
from ctxgauge.metrics.spans import DEFAULT_BUDGETS
from ctxgauge.metrics.tokens import default_tokenizer
from ctxgauge.results import ReplayUnit
from ctxgauge.suites._retrieval import ContextSpec, check_budgets, close_engines, open_engines
from ctxgauge.suites.replay._select import Selection, select_commits

SUITE = "replay"
SUITE_VERSION = 2
"""Bumped whenever a rule that changes replay's cases or figures changes; recorded in every run's spec.
2: each commit also records its gold lines and the context metrics (spans, token budgets)."""
GOLD_LINE_RULE = "pre-image lines of git diff -U0 -M50% against the first parent (docs/replay.md, Gold lines)"
"""The gold-line rule a run records in its spec (`gold_lines`)."""


@dataclass(frozen=True)
class ReplayConfig:
    """Every option of a replay; the CLI's flags mirror these fields."""

    repo: Path
    """The git repository (a work tree or a bare git directory)."""
    engine: str
    """Engine spec of the engine measured, e.g. `bm25` or `bm25(k1=1.2)`."""
    vs: str | None = None
    """Engine spec to compare against on exactly the same commits."""
    rev: str = "HEAD"
    """Walk the ancestors of this revision."""
    ks: tuple[int, ...] = (5, 10)
    """Cutoffs every metric is scored at."""
    depth: int = 100
    """How many files each commit's query asks for (MRR reads the whole depth)."""
    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    """Token budgets each commit's ranking is packed under (`--budget`), for the `_tokens@B` figures."""
    commits: int | None = 100
    """Replay the N newest eligible commits (None: all)."""
    max_files: int = 8
    """Commits with more expected files than this are skipped as sweeps."""
    since: str | None = None
    """Only walk commits newer than this date (any `git log --since` date)."""
    seed: int = 0
    """Seed of the bootstrap and the randomization test of `--vs`."""
    out: Path | None = None
    """Run directory (default: `default_run_dir("replay")`)."""
    resume: bool = False
    """Continue an unfinished run in `out`, skipping commits already done."""
    trec: Path | None = None
    """Also write `run.trec` (and `run-vs.trec`) and `qrels.txt` into this directory."""
    baseline: Path | None = None
    """A stored replay run to gate against (see `_compare.gate`)."""
    max_drop: float = 0.02
    """Largest fall of a metric's mean, against the baseline on the same commits, that still passes."""
    gate: tuple[str, ...] = ()
    """The metrics the `--baseline` gate checks (`--gate`, ranking or context, `_micro` included); empty:
    every ranking metric. Not part of the spec (it changes the verdict, not a figure)."""
    executor: str = "local"
    """Where the units run (`ctxgauge.executors` spec: local, local:N, dask-local[:N], dask://HOST:PORT).
    Not part of the spec: the records are the same whichever runs them."""
    slice_size: int | None = None
    """Commits per unit of work (None: `_run.auto_slice`). Not part of the spec either (tested equal)."""


@dataclass
class Plan:
    """A checked config with its open repository, engines and chosen commits."""

    config: ReplayConfig
    repo: Repo
    head: str
    """The full commit id `config.rev` names."""
    engines: list[Any]
    """The engine objects, the measured one first (one object each for the whole replay)."""
    selection: Selection
    metrics: list[str]
    """Metric names every commit is scored with, in report order."""
    baseline: list[ReplayUnit] | None = None
    """Units of the baseline run, read before anything is written."""
    baseline_id: str | None = None
    spec: dict = field(default_factory=dict)
    """What the run record keeps as its spec (a resumed run must have the same one)."""
    failure: str | None = None
    """Why an engine cannot be measured at all (its `identity` request failed: it exited at once, crashed
    or never answered): every commit is then recorded as failed with this reason, none is run."""
    context: ContextSpec | None = None
    """What each commit's context is scored at (the run's cutoffs and budgets)."""
    gate_metrics: list[str] = field(default_factory=list)
    """The metrics the `--baseline` gate checks (`_compare.gate_metrics`)."""

    def close(self) -> None:
        """End the engines' processes and the repository's blob reader."""
        close_engines(self.engines)
        self.repo.close()


def _check(config: ReplayConfig) -> None:
    if not config.ks or any(k < 1 for k in config.ks):
        raise UserError("-k must be at least 1 (e.g. -k 5 -k 10)")
    check_budgets(config.budgets)
    if config.depth < max(config.ks):
        raise UserError(f"--depth {config.depth} is below the largest -k {max(config.ks)}: raise --depth")
    if config.commits is not None and config.commits < 1:
        raise UserError(f"--commits {config.commits}: give at least 1, or 0 for all eligible commits")
    if config.max_files < 1:
        raise UserError("--max-files must be at least 1")
    if config.max_drop < 0:
        raise UserError("--max-drop must be at least 0")
    if config.seed < 0:
        raise UserError("--seed must be at least 0")
    if config.resume and config.out is None:
        raise UserError("--resume needs --out RUN_DIR (the run to continue)")
    if config.slice_size is not None and config.slice_size < 1:
        raise UserError("--slice must be at least 1 commit (or leave it out)")
    parse_executor(config.executor)


def _check_since(repo: Repo, since: str | None) -> None:
    # git reads any text as a date (approxidate) and takes what it cannot read as "now", so `--since
    # notadate` walked no commit and recorded an empty run with exit 0. A date at or after now selects
    # nothing either way, so both are refused.
    if since is None:
        return
    import time

    out = repo.run(["rev-parse", f"--since={since}"]).strip()
    stamp = out.rsplit("=", 1)[1] if out.startswith("--max-age=") else ""
    if not stamp.isdigit() or int(stamp) >= int(time.time()) - 1:
        raise UserError(f"--since {since!r} is not a date in the past: write e.g. 2024-01-31 or '6 months ago'")


def plan(config: ReplayConfig) -> Plan:
    """Check `config`, open what it names and select the commits; UserError on any bad input."""
    from ctxgauge.records import unknown
    from ctxgauge.report import read_checked

    _check(config)
    from ctxgauge.suites.replay._compare import gate_metrics

    if config.gate and config.baseline is None:
        raise UserError("--gate names the metrics of the --baseline gate: give --baseline RUN_DIR too")
    gated = gate_metrics(config.gate, metric_names(config.ks, pack=True),
                         ContextSpec(tuple(config.ks), tuple(sorted(set(config.budgets)))))
    baseline = baseline_id = None
    if config.baseline is not None:
        # Checked as every reader checks a run (`report.check_run`): a damaged figure is one line, not a
        # TypeError in the comparison.
        ref = read_checked(config.baseline)
        if ref.suite != SUITE:
            raise UserError(f"{config.baseline}: not a replay run (suite {ref.suite!r})")
        baseline = ref.units()  # ReplayUnit instances: the run is read through the suite's typed classes
        baseline_id = ref.record.run_id
    repo = Repo(config.repo)
    try:
        head = repo.resolve(config.rev)
        engines = open_engines(config.engine, config.vs)
        try:
            for eng in engines:  # a server serving its own tree cannot follow the commits (`mcp` url= alone)
                refuse_own_tree(eng, "replay")
        except BaseException:
            close_engines(engines)
            raise
        _check_since(repo, config.since)
        selection = select_commits(repo, head, commits=config.commits, max_files=config.max_files,
                                   since=config.since)
    except BaseException:
        repo.close()
        raise
    if baseline is not None:
        scored = {u.id for u in baseline if u.ok}
        if not any(c.sha in scored for c in selection.eligible):
            repo.close()
            raise UserError(f"{config.baseline}: the baseline run scored none of these commits; replay the same "
                            "repository, --rev and --commits as the baseline")
    metrics = metric_names(config.ks, pack=True)
    budgets = tuple(sorted(set(config.budgets)))
    tokenizer = default_tokenizer()  # the run records which one counted its budgets
    # A failed identity is the engine's failure, not the user's: the run is recorded with every commit failed
    # (the identity kept `unknown`, so `--resume` takes the mended engine's) instead of ending without one.
    asked = [ask_identity(e) for e in engines]
    identities = [unknown(str(err)) if err is not None else ident for ident, err in asked]
    failure = next((str(err) for _, err in asked if err is not None), None)
    spec = {
        "repo": repo_name(repo),
        "rev": config.rev,
        "head": head,
        "engine": engines[0].name,
        "engine_identity": identities[0],
        "vs": engines[1].name if len(engines) > 1 else None,
        "vs_identity": identities[1] if len(engines) > 1 else None,
        "ks": list(config.ks),
        "depth": config.depth,
        "commits": config.commits,
        "max_files": config.max_files,
        "since": config.since,
        "seed": config.seed,
        "metrics": metrics,
        "budgets": list(budgets),
        "tokenizer": tokenizer.spec,
        "gold_lines": GOLD_LINE_RULE,
        # Only for a folder inside a work tree (docs/replay.md, "SOURCE"): a whole repository's spec is unchanged.
        **({"subtree": repo.location.prefix} if repo.location.prefix else {}),
    }
    context = ContextSpec(tuple(config.ks), budgets)
    return Plan(config, repo, head, engines, selection, metrics, baseline, baseline_id, spec, failure, context,
                gated)
