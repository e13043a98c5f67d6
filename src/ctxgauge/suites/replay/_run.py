"""Phases 2 to 4 of a replay: its commits as a source of labelled cases for the retrieval pipeline.

The pipeline (`ctxgauge.suites._retrieval`) cuts the work into units (one engine x one slice of
consecutive commits, oldest first), runs them on the executor and hands their parts back in a fixed order;
each engine's index moves forward from one commit's parent to the next by the files that changed
(`Engine.update` with `Corpus.changes_to`). A fresh build happens at the start of each slice, after a
failed engine call, and when a resumed run continues. What is replay's own is here: which commits are
still to run (oldest first, each corpus its parent's tree), and how a commit's parts (one per engine) make
its unit, so the records are the same whatever the executor, the number of workers or the slice size
(tested unit for unit).

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
    gold_lines     {path: [[start, end]]}: the commit's pre-image lines in the expected files it indexes
                   (docs/replay.md, "Gold lines"); a file without any counts at file level only
    gold_blocks    {path: [[start, end]]}: the innermost definition of each gold line in the file at the
                   corpus revision (left out when none: no grammar, lines outside every definition)
    context        the measured engine's context: {pairs, packed, curve} (`suites._retrieval._context`);
                   its macro figures are in `figures`
    reading        only from an engine that reads someone else's answer (mcp): how it read it,
                   `{how, truncated, unparsed_lines, scores}` (`engines.query_notes`)
    vs             with --vs: {engine, figures, ranking, context} of the other engine on the same corpus and request
                   (and its `reading`, when it has one)
    timing         seconds: corpus, index (per engine), query (per engine)
    workers        the workers that ran the commit, one per engine, measured engine first (like timing,
                   left out of comparisons: `records.VOLATILE_UNIT_FIELDS`)
"""

from __future__ import annotations

from typing import Sequence

from ctxgauge.executors import Executor, InlineExecutor
from ctxgauge.records import RunDir
from ctxgauge.results import Ranked, ReplayUnit, UnitContext, VsPart
from ctxgauge.suites._progress import Progress
from ctxgauge.suites._retrieval import Batch, Step, Where, auto_slice, execute_many, record_unit, share_live
from ctxgauge.suites.replay._cases import ReplayCase
from ctxgauge.suites.replay._plan import Plan

__all__ = ["RepoRun", "auto_slice", "execute", "execute_many", "failed_unit", "merge"]

# progress(commits done, commits in the plan, short sha), the one protocol of suites/_progress.py


def _skipped_unit(case_or_sha: ReplayCase | str, reason: str) -> ReplayUnit:
    if isinstance(case_or_sha, ReplayCase):
        c = case_or_sha
        return ReplayUnit(id=c.sha, status="skipped", reason=reason, request=c.request, subject=c.subject)
    return ReplayUnit(id=case_or_sha, status="skipped", reason=reason)


def failed_unit(case: ReplayCase, reason: str) -> ReplayUnit:
    """The unit of a commit no engine was run on (an engine that cannot be measured at all: `Plan.failure`):
    its labels as planned, no corpus read, no figure."""
    return ReplayUnit(id=case.sha, status="failed", reason=reason, request=case.request, subject=case.subject,
                      parent=case.parent, expected=list(case.expected), tests=list(case.tests), coverage_gap=[],
                      code=case.code, figures={}, ranking=[], workers=[])


def _ranking(part: dict) -> list[Ranked]:
    return [Ranked.from_json(h, "engine part") for h in part["ranking"]]


def merge(case: ReplayCase, parts: Sequence[dict], workers: Sequence[str]) -> ReplayUnit:
    """A commit's unit from its engine parts (measured engine first): failed when an engine failed (the
    first failure's reason), skipped when the parent lacks an object, else ok with `vs` for the second."""
    first = parts[0]
    if first["status"] == "missing-object":
        unit = _skipped_unit(case, "missing-object")
        unit.workers = list(workers)
        return unit
    timing = {"corpus_s": first["timing"]["corpus_s"]}
    for prefix, part in zip(("", "vs_"), parts):
        timing.update({prefix + k: part["timing"][k] for k in ("index_s", "query_s", "context_s")
                       if k in part["timing"]})
    unit = ReplayUnit(id=case.sha, status="ok", request=case.request, subject=case.subject, parent=case.parent,
                      expected=list(case.expected), tests=list(case.tests),
                      coverage_gap=list(first["coverage_gap"]), code=case.code, timing=timing,
                      workers=list(workers))
    failed = next((p for p in parts if p["status"] != "ok"), None)
    if failed is not None:
        unit.status, unit.reason, unit.figures, unit.ranking = "failed", failed["reason"], {}, []
        return unit
    unit.figures, unit.ranking = dict(first["figures"]), _ranking(first)
    if "context" in first:
        unit.context, unit.gold_lines = UnitContext.from_json(first["context"], "engine part"), dict(first["gold_lines"])
        unit.gold_blocks = dict(first.get("gold_blocks") or {})
    if "reading" in first:  # an engine that reads someone else's answer (mcp): how it read it
        unit.extra["reading"] = first["reading"]
    if len(parts) > 1:
        unit.vs = VsPart(engine=parts[1]["engine"], figures=dict(parts[1]["figures"]), ranking=_ranking(parts[1]))
        if "context" in parts[1]:
            unit.vs.context = UnitContext.from_json(parts[1]["context"], "engine part")
        if "reading" in parts[1]:
            unit.vs.extra["reading"] = parts[1]["reading"]
    return unit


class RepoRun(Batch):
    """One repository's replay being recorded: its plan, its run directory, and the commits in flight."""

    def __init__(self, plan: Plan, run: RunDir, progress: Progress | None = None):
        specs = [plan.config.engine] + ([plan.config.vs] if plan.config.vs is not None else [])
        super().__init__(run, specs, plan.config.depth, plan.metrics, plan.context)
        self.plan = plan
        self.progress = progress
        for sha, reason in plan.selection.skipped:
            self.units[sha] = run.done.get(sha) or record_unit(run, _skipped_unit(sha, reason))
        self.cases = list(reversed(plan.selection.eligible))  # oldest first: each index moves forward by a diff
        todo = [c for c in self.cases if not run.is_done(c.sha)]
        for c in self.cases:
            if run.is_done(c.sha):
                self.units[c.sha] = run.done[c.sha]
                self._tick(c.sha)
        if plan.failure is not None:
            # An engine that cannot be measured at all serves no commit: each is recorded failed with why.
            for c in todo:
                self.units[c.sha] = record_unit(run, failed_unit(c, plan.failure))
                self._tick(c.sha)
            todo = []
        self._source = str(plan.repo.path.resolve())
        self.todo = [Step(c, Where(key=c.parent, source=self._source, rev=c.parent, commit=True)) for c in todo]

    def _tick(self, sha: str) -> None:
        if self.progress is not None:
            done = sum(1 for c in self.cases if c.sha in self.units)
            self.progress(done, len(self.cases), sha[:10])

    @property
    def finished(self) -> bool:
        """Whether every selected commit has its unit."""
        return all(c.sha in self.units for c in self.cases)

    def live(self) -> str:
        return share_live(self.plan.engines, repos={self._source: self.plan.repo})

    def merge(self, step: Step, parts: Sequence[dict], workers: Sequence[str]) -> ReplayUnit:
        return merge(step.case, parts, workers)

    def recorded(self, unit: dict) -> None:
        self._tick(unit["id"])

    def ordered_units(self) -> list[dict]:
        """Every unit, newest eligible commit first, then the skipped ones (the selection's order)."""
        sel = self.plan.selection
        return [self.units[c.sha] for c in sel.eligible] + [self.units[sha] for sha, _ in sel.skipped]


def execute(plan: Plan, run: RunDir, progress: Progress | None = None, executor: Executor | None = None,
            slice_size: int | None = None) -> list[dict]:
    """Replay every selected commit not already done in `run`; return all their units, newest first."""
    r = RepoRun(plan, run, progress)
    execute_many([r], executor or InlineExecutor(), slice_size)
    return r.ordered_units()
