"""Phases 2 to 4 of a replay: hand the commits to an executor as units, merge what comes back, record.

The work is cut into units (`_units.SliceTask`: one engine x one slice of consecutive commits, oldest
first), run by the executor, and handed back in a fixed order; each engine's index moves forward from one
commit's parent to the next by the files that changed (`Engine.update` with `Corpus.changes_to`). A fresh
build happens at the start of each slice, after a failed engine call, and when a resumed run continues.
Each commit's parts (one per engine) are merged here into its unit and recorded, so the records are the
same whatever the executor, the number of workers or the slice size (tested unit for unit).

A unit per commit, `id` = sha, status `ok` (scored), `failed` (an engine call failed: `reason` says how;
left out of every mean) or `skipped` (reason `missing-object`, or any selection reason). Fields of an
ok or failed unit, besides the records' own (id, status, reason, figures, timing):

    figures        metric -> value of the measured engine (None where undefined: nothing to score)
    request        the cleaned subject the engine was asked
    subject        the subject as written
    parent         the parent commit, whose tree is the corpus
    expected       expected files (paths in the parent), coverage gap included
    tests          changed test files that existed in the parent (pack recall only)
    coverage_gap   expected files the corpus does not index
    code           whether an expected file is code (the code-vs-rest split)
    ranking        the measured engine's top `depth` files: [{path, score}], plus `spans` ([[start, end]])
                   for a hit that hands over lines
    reading        only from an engine that reads someone else's answer (mcp): how it read it,
                   `{how, truncated, unparsed_lines, scores}` (`engines.query_notes`)
    vs             with --vs: {engine, figures, ranking} of the other engine on the same corpus and request
                   (and its `reading`, when it has one)
    timing         seconds: corpus, index (per engine), query (per engine)
    workers        the workers that ran the commit, one per engine, measured engine first (like timing,
                   left out of comparisons: `records.VOLATILE_UNIT_FIELDS`)
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from ctxgauge.executors import Executor, InlineExecutor
from ctxgauge.records import RunDir
from ctxgauge.suites._progress import Progress
from ctxgauge.suites.replay._cases import ReplayCase
from ctxgauge.suites.replay._plan import Plan
from ctxgauge.suites.replay._units import SliceTask, drop_live, run_slice, share_live, slices

# progress(commits done, commits in the plan, short sha), the one protocol of suites/_progress.py


def auto_slice(commits: int, workers: int) -> int | None:
    """Commits per slice when none is asked for: one slice with one worker (one build, no waste); with
    more, enough slices that every worker gets about two (a fresh build per slice is their price)."""
    if workers <= 1 or commits <= 1:
        return None
    return max(1, math.ceil(commits / (2 * workers)))


def _skipped_unit(case_or_sha: ReplayCase | str, reason: str) -> dict:
    if isinstance(case_or_sha, ReplayCase):
        c = case_or_sha
        return {"id": c.sha, "status": "skipped", "reason": reason, "request": c.request, "subject": c.subject}
    return {"id": case_or_sha, "status": "skipped", "reason": reason}


def failed_unit(case: ReplayCase, reason: str) -> dict:
    """The unit of a commit no engine was run on (an engine that cannot be measured at all: `Plan.failure`):
    its labels as planned, no corpus read, no figure."""
    return {"id": case.sha, "status": "failed", "reason": reason, "request": case.request, "subject": case.subject,
            "parent": case.parent, "expected": list(case.expected), "tests": list(case.tests), "coverage_gap": [],
            "code": case.code, "figures": {}, "ranking": [], "workers": []}


def merge(case: ReplayCase, parts: Sequence[dict], workers: Sequence[str]) -> dict:
    """A commit's unit from its engine parts (measured engine first): failed when an engine failed (the
    first failure's reason), skipped when the parent lacks an object, else ok with `vs` for the second."""
    first = parts[0]
    if first["status"] == "missing-object":
        unit = _skipped_unit(case, "missing-object")
        unit["workers"] = list(workers)
        return unit
    unit: dict = {
        "id": case.sha, "request": case.request, "subject": case.subject, "parent": case.parent,
        "expected": list(case.expected), "tests": list(case.tests), "coverage_gap": list(first["coverage_gap"]),
        "code": case.code, "timing": {}, "workers": list(workers),
    }
    unit["timing"]["corpus_s"] = first["timing"]["corpus_s"]
    for prefix, part in zip(("", "vs_"), parts):
        unit["timing"].update({prefix + k: part["timing"][k] for k in ("index_s", "query_s") if k in part["timing"]})
    failed = next((p for p in parts if p["status"] != "ok"), None)
    if failed is not None:
        unit.update(status="failed", reason=failed["reason"], figures={}, ranking=[])
        return unit
    unit.update(status="ok", reason=None, figures=first["figures"], ranking=first["ranking"])
    if "reading" in first:
        unit["reading"] = first["reading"]
    if len(parts) > 1:
        unit["vs"] = {"engine": parts[1]["engine"], "figures": parts[1]["figures"], "ranking": parts[1]["ranking"]}
        if "reading" in parts[1]:
            unit["vs"]["reading"] = parts[1]["reading"]
    return unit


class RepoRun:
    """One repository's replay being recorded: its plan, its run directory, and the commits in flight."""

    def __init__(self, plan: Plan, run: RunDir, progress: Progress | None = None):
        self.plan = plan
        self.run = run
        self.progress = progress
        self.units: dict[str, dict] = {}
        for sha, reason in plan.selection.skipped:
            self.units[sha] = run.done.get(sha) or _record(run, _skipped_unit(sha, reason))
        self.cases = list(reversed(plan.selection.eligible))  # oldest first: each index moves forward by a diff
        self.todo = [c for c in self.cases if not run.is_done(c.sha)]
        self._by_sha = {c.sha: c for c in self.todo}
        self._parts: dict[str, dict[int, tuple[dict, str]]] = {}
        self._live = ""
        for c in self.cases:
            if run.is_done(c.sha):
                self.units[c.sha] = run.done[c.sha]
                self._tick(c.sha)
        if plan.failure is not None:
            # An engine that cannot be measured at all serves no commit: each is recorded failed with why.
            for c in self.todo:
                self.units[c.sha] = _record(run, failed_unit(c, plan.failure))
                self._tick(c.sha)
            self.todo = []

    def _tick(self, sha: str) -> None:
        if self.progress is not None:
            done = sum(1 for c in self.cases if c.sha in self.units)
            self.progress(done, len(self.cases), sha[:10])

    @property
    def finished(self) -> bool:
        """Whether every selected commit has its unit."""
        return all(c.sha in self.units for c in self.cases)

    def tasks(self, slice_size: int | None, executor: Executor) -> list[SliceTask]:
        """The units of work still to run: for each slice, one task per engine (measured engine first), so
        in item order a commit's last part arrives with its slice's last engine."""
        p = self.plan
        if isinstance(executor, InlineExecutor) and not self._live:
            self._live = share_live(p.repo, p.engines)
        specs = [p.config.engine] + ([p.config.vs] if p.config.vs is not None else [])
        repo = str(p.repo.path.resolve())
        return [SliceTask(repo=repo, engine=spec, role=role, cases=chunk, depth=p.config.depth,
                          metrics=tuple(p.metrics), live=self._live)
                for chunk in slices(self.todo, slice_size) for role, spec in enumerate(specs)]

    def take(self, part: dict, worker: str) -> None:
        """Merge one engine part; record the commit's unit once every engine's part is in."""
        sha = part["sha"]
        got = self._parts.setdefault(sha, {})
        got[part["role"]] = (part, worker)
        if len(got) < len(self.plan.engines):
            return
        del self._parts[sha]
        ordered = [got[r] for r in sorted(got)]
        unit = merge(self._by_sha[sha], [p for p, _ in ordered], [w for _, w in ordered])
        self.units[sha] = _record(self.run, unit)
        self._tick(sha)

    def ordered_units(self) -> list[dict]:
        """Every unit, newest eligible commit first, then the skipped ones (the selection's order)."""
        sel = self.plan.selection
        return [self.units[c.sha] for c in sel.eligible] + [self.units[sha] for sha, _ in sel.skipped]

    def close(self) -> None:
        if self._live:
            drop_live(self._live)
            self._live = ""


def execute_many(runs: Sequence[RepoRun], executor: Executor, slice_size: int | None = None,
                 on_finished: Callable[[RepoRun], None] | None = None) -> None:
    """Run the remaining commits of every repository through one executor (so the workers stay busy across
    repositories); `on_finished(run)` as soon as a repository's last commit is recorded."""
    if slice_size is None:
        slice_size = auto_slice(sum(len(r.todo) for r in runs), executor.workers)
    items: list[SliceTask] = []
    owner: list[RepoRun] = []
    for r in runs:
        for task in r.tasks(slice_size, executor):
            items.append(task)
            owner.append(r)
    pending = [r for r in runs]
    try:
        for r in [r for r in pending if r.finished]:
            pending.remove(r)
            if on_finished is not None:
                on_finished(r)
        for part in executor.map(run_slice, items):
            r = owner[part.item]
            r.take(part.value, part.worker)
            if r in pending and r.finished:
                pending.remove(r)
                if on_finished is not None:
                    on_finished(r)
    finally:
        for r in runs:
            r.close()


def execute(plan: Plan, run: RunDir, progress: Progress | None = None, executor: Executor | None = None,
            slice_size: int | None = None) -> list[dict]:
    """Replay every selected commit not already done in `run`; return all their units, newest first."""
    r = RepoRun(plan, run, progress)
    execute_many([r], executor or InlineExecutor(), slice_size)
    return r.ordered_units()


def _record(run: RunDir, unit: dict) -> dict:
    fields = dict(unit)
    uid, status = fields.pop("id"), fields.pop("status")
    return run.add_unit(uid, status, figures=fields.pop("figures", None), reason=fields.pop("reason", None),
                        timing=fields.pop("timing", None), **fields)
