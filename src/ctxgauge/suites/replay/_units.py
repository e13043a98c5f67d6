"""Replay's unit of work: one repository x one engine x one slice of commits, runnable on any worker.

A slice is a run of consecutive commits (oldest first) of one plan. It starts from a fresh build of its
first commit's parent and moves forward by diffs (`Engine.update`), exactly as an unsliced replay does
after its first commit, so a sliced replay equals the unsliced one unit for unit whenever an engine's
update equals its rebuild (the determinism suite's Update Identity; tested for the built-ins).

`run_slice` is a generator: it yields one `EnginePart` dict per commit as soon as that commit is scored,
so in this process each commit is recorded as it goes, and elsewhere the parts travel back together.
The work of a slice is everything an engine needs to index, query and score: the repository path, the
engine spec and the cases. Labels and figures are computed on the worker, so the client only merges.

An `EnginePart` (what a worker sends back for one commit and one engine):

    sha        the commit
    role       0 for the measured engine, 1 for --vs
    engine     the engine's name
    status     ok | failed | missing-object
    reason     why it failed (None otherwise)
    figures    metric -> value (empty unless ok)
    ranking    [{path, score}] (empty unless ok), with `spans` for a hit that has them
    reading    how the engine read its answer (`engines.query_notes`; only from engines that have notes)
    coverage_gap  expected files the parent's corpus does not index
    timing     {corpus_s, index_s, query_s}
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from ctxgauge._killpoints import checkpoint
from ctxgauge.engines import ask_defer_writes, call_engine, checked_hits, query_notes
from ctxgauge.corpus import Corpus
from ctxgauge.errors import EngineError, UserError
from ctxgauge.git import Repo
from ctxgauge.metrics.scoring import score
from ctxgauge.suites.replay._cases import ReplayCase, label


@dataclass(frozen=True)
class SliceTask:
    """One unit: the commits of a slice, for one engine of one repository (picklable)."""

    repo: str
    """Absolute path of the repository (every worker reads it there)."""
    engine: str
    """The engine's spec; a worker makes the engine from it (and keeps it for later slices)."""
    role: int
    """0: the measured engine; 1: the --vs engine."""
    cases: tuple[ReplayCase, ...]
    """The slice's commits, oldest first."""
    depth: int
    metrics: tuple[str, ...]
    live: str = ""
    """Key of engine objects already open in the planning process (`share_live`); a worker that does not
    hold them makes its own from `engine`."""


# Engine objects and repositories open in this process for a plan being run here (the inline executor):
# the caller's own objects, so what they cache is shared and nothing is made twice.
_LIVE: dict[str, tuple[Any, list[Any]]] = {}
# Engines a worker made from specs, kept for the next slice: per-blob work they cache is reused, so a
# worker's second slice of a repository costs the new blobs only (the per-worker cache).
_MADE: dict[str, Any] = {}


def share_live(repo: Repo, engines: list[Any]) -> str:
    """Register a plan's open repository and engines for slices run in this process; returns the key."""
    key = uuid.uuid4().hex
    _LIVE[key] = (repo, engines)
    return key


def drop_live(key: str) -> None:
    _LIVE.pop(key, None)


def _engine(task: SliceTask) -> Any:
    live = _LIVE.get(task.live)
    if live is not None:
        return live[1][task.role]
    if task.engine not in _MADE:
        from ctxgauge.engines import get_engine

        _MADE[task.engine] = get_engine(task.engine)
    return _MADE[task.engine]


def slices(cases: Sequence[ReplayCase], size: int | None) -> list[tuple[ReplayCase, ...]]:
    """Consecutive runs of at most `size` cases (None: one slice of all), order kept."""
    if not cases:
        return []
    step = len(cases) if size is None else max(1, size)
    return [tuple(cases[i:i + step]) for i in range(0, len(cases), step)]


class _Index:
    """One engine's index directory and the corpus it currently holds."""

    def __init__(self, engine: Any, out_dir: Path):
        self.engine = engine
        self.out_dir = out_dir
        self.corpus: Corpus | None = None
        self.notes: dict | None = None
        """How the engine read its last answer (`engines.query_notes`), None for most engines."""
        # Replay only queries its index, never reads its bytes: an engine that can keep it in memory and
        # skip writing the artifact (bm25: an update then costs the changed files, not the repository) may.
        ask_defer_writes(engine, out_dir)

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
        self.notes = query_notes(eng)
        return [h.to_dict() for h in hits]


def _corpus(repo: Repo, case: ReplayCase, cache: dict[str, bool], previous: Corpus | None) -> Corpus | None:
    """The parent's corpus, or None when the repository lacks an object it needs. Listed from the previous
    commit's corpus by the tree diff between them when there is one (the same corpus, tested)."""
    try:
        if previous is not None:
            corpus = previous.at(case.parent, binary_cache=cache, known_commit=True)
        else:
            corpus = Corpus.from_git(repo, case.parent, binary_cache=cache)
    except UserError:
        # The commit came from this repository's own log, so a tree it cannot list is a missing object.
        return None
    return None if corpus.skipped.get("missing-object") else corpus


def run_slice(task: SliceTask) -> Iterator[dict]:
    """Index, query and score each commit of the slice with one engine; yield an EnginePart per commit.

    An engine failure fails that commit's part only (the next commit starts from a fresh build)."""
    live = _LIVE.get(task.live)
    repo = live[0] if live is not None else Repo(Path(task.repo))
    engine = _engine(task)
    cache: dict[str, bool] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="ctxgauge-replay-") as tmp:
            index = _Index(engine, Path(tmp) / "index")
            previous: Corpus | None = None
            for n, case in enumerate(task.cases):
                checkpoint("commit-before/replay-slice")  # where the kill tests stop a worker mid-unit
                t0 = time.perf_counter()
                first = previous is None
                corpus = previous = _corpus(repo, case, cache, previous)
                if first and corpus is not None:  # the slice's next parents' tree diffs, read in batches
                    corpus.prefetch(c.parent for c in task.cases[n + 1:])
                t1 = time.perf_counter()
                part: dict = {"sha": case.sha, "role": task.role, "engine": engine.name, "reason": None,
                              "figures": {}, "ranking": [], "coverage_gap": [],
                              "timing": {"corpus_s": round(t1 - t0, 6)}}
                if corpus is None:
                    part["status"] = "missing-object"
                    yield part
                    continue
                labels = label(case, corpus)
                part["coverage_gap"] = list(labels.gap)
                try:
                    index.advance(corpus)
                    t2 = time.perf_counter()
                    ranking = index.query(case.request, task.depth, corpus)
                    t3 = time.perf_counter()
                except EngineError as exc:
                    part.update(status="failed", reason=str(exc))
                    yield part
                    continue
                part["timing"].update(index_s=round(t2 - t1, 6), query_s=round(t3 - t2, 6))
                part.update(status="ok", ranking=ranking,
                            figures=score([h["path"] for h in ranking], labels.labels, task.metrics))
                if index.notes is not None:
                    part["reading"] = index.notes
                yield part
    finally:
        if live is None:
            repo.close()
