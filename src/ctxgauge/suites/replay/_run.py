"""Phases 2 to 4 of a replay, per commit: build/update the index, query, score, record a unit.

Commits are processed oldest first, so each engine's index moves forward from one commit's parent to the
next by the files that changed between them (`Engine.update` with `Corpus.changes_to`); a fresh build
happens only for the first commit, after a failed engine call, and when a resumed run continues. Blob
content is read once for the whole replay: the corpora share one binary-check cache and the engines
cache per-blob work on their objects.

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
    ranking        the measured engine's top `depth` files: [{path, score}]
    vs             with --vs: {engine, figures, ranking} of the other engine on the same corpus and request
    timing         seconds: corpus, index (per engine), query (per engine)
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from ctxgauge.engines import call_engine, checked_hits
from ctxgauge.corpora import Corpus
from ctxgauge.errors import EngineError, UserError
from ctxgauge.records import RunDir
from ctxgauge.metrics.scoring import score
from ctxgauge.suites.replay._cases import ReplayCase, label
from ctxgauge.suites.replay._plan import Plan

Progress = Callable[[int, int, str], None]
"""Called after each commit with (commits done, commits in the plan, short sha)."""


class _Slot:
    """One engine with its index directory and the corpus that index currently holds."""

    def __init__(self, engine: Any, out_dir: Path):
        self.engine = engine
        self.out_dir = out_dir
        self.corpus: Corpus | None = None

    def advance(self, corpus: Corpus) -> None:
        """Bring the index to `corpus`: update by the changed files, or build when there is no index."""
        eng = self.engine
        if self.corpus is not None and self.corpus.rev == corpus.rev:
            return
        previous, self.corpus = self.corpus, None  # unknown until the call succeeds
        if previous is None or not callable(getattr(eng, "update", None)):
            # A fresh build starts from an empty directory: a failed call may have left a torn index.
            shutil.rmtree(self.out_dir, ignore_errors=True)
            self.out_dir.mkdir(parents=True)
            call_engine("build", eng, eng.build, corpus, self.out_dir)
        else:
            changes = previous.changes_to(corpus)
            if changes:
                call_engine("update", eng, eng.update, self.out_dir, corpus, changes)
        self.corpus = corpus

    def query(self, text: str, depth: int, corpus: Corpus) -> list[dict]:
        eng = self.engine
        hits = checked_hits(call_engine("query", eng, eng.query, self.out_dir, text, depth), corpus, depth, eng.name)
        return [h.to_dict() for h in hits]


def _corpus(plan: Plan, case: ReplayCase, cache: dict[str, bool]) -> Corpus | None:
    """The parent's corpus, or None when the repository lacks an object it needs."""
    try:
        corpus = Corpus.from_git(plan.repo, case.parent, binary_cache=cache)
    except UserError:
        # The commit came from this repository's own log, so a tree it cannot list is a missing object.
        return None
    return None if corpus.skipped.get("missing-object") else corpus


def _skipped_unit(case_or_sha: ReplayCase | str, reason: str) -> dict:
    if isinstance(case_or_sha, ReplayCase):
        c = case_or_sha
        return {"id": c.sha, "status": "skipped", "reason": reason, "request": c.request, "subject": c.subject}
    return {"id": case_or_sha, "status": "skipped", "reason": reason}


def _replay_one(plan: Plan, slots: list[_Slot], case: ReplayCase, corpus: Corpus) -> dict:
    """Index, query and score one commit; an engine failure becomes a failed unit, never an exception."""
    labels = label(case, corpus)
    unit: dict = {
        "id": case.sha, "request": case.request, "subject": case.subject, "parent": case.parent,
        "expected": list(case.expected), "tests": list(case.tests), "coverage_gap": list(labels.gap),
        "code": case.code, "timing": {},
    }
    results = []
    for role, slot in zip(("", "vs_"), slots):
        try:
            t0 = time.perf_counter()
            slot.advance(corpus)
            t1 = time.perf_counter()
            ranking = slot.query(case.request, plan.config.depth, corpus)
            t2 = time.perf_counter()
        except EngineError as exc:
            unit.update(status="failed", reason=str(exc), figures={}, ranking=[])
            return unit
        unit["timing"][f"{role}index_s"] = round(t1 - t0, 6)
        unit["timing"][f"{role}query_s"] = round(t2 - t1, 6)
        figures = score([h["path"] for h in ranking], labels.labels, plan.metrics)
        results.append((slot.engine.name, figures, ranking))
    name, figures, ranking = results[0]
    unit.update(status="ok", reason=None, figures=figures, ranking=ranking)
    if len(results) > 1:
        vs_name, vs_figures, vs_ranking = results[1]
        unit["vs"] = {"engine": vs_name, "figures": vs_figures, "ranking": vs_ranking}
    return unit


def execute(plan: Plan, run: RunDir, progress: Progress | None = None) -> list[dict]:
    """Replay every selected commit not already done in `run`; return all their units, newest first."""
    units: dict[str, dict] = {}
    for sha, reason in plan.selection.skipped:
        units[sha] = run.done.get(sha) or _record(run, _skipped_unit(sha, reason))
    cases = list(reversed(plan.selection.eligible))  # oldest first: each index moves forward by a diff
    cache: dict[str, bool] = {}
    with tempfile.TemporaryDirectory(prefix="ctxgauge-replay-") as tmp:
        slots = [_Slot(eng, Path(tmp) / f"index-{i}") for i, eng in enumerate(plan.engines)]
        for i, case in enumerate(cases, start=1):
            if run.is_done(case.sha):
                units[case.sha] = run.done[case.sha]
            else:
                t0 = time.perf_counter()
                corpus = _corpus(plan, case, cache)
                corpus_s = time.perf_counter() - t0
                if corpus is None:
                    units[case.sha] = _record(run, _skipped_unit(case, "missing-object"))
                else:
                    unit = _replay_one(plan, slots, case, corpus)
                    unit["timing"]["corpus_s"] = round(corpus_s, 6)
                    units[case.sha] = _record(run, unit)
            if progress is not None:
                progress(i, len(cases), case.sha[:10])
    order = [c.sha for c in plan.selection.eligible] + [sha for sha, _ in plan.selection.skipped]
    return [units[sha] for sha in order]


def _record(run: RunDir, unit: dict) -> dict:
    fields = dict(unit)
    uid, status = fields.pop("id"), fields.pop("status")
    return run.add_unit(uid, status, figures=fields.pop("figures", None), reason=fields.pop("reason", None),
                        timing=fields.pop("timing", None), **fields)
