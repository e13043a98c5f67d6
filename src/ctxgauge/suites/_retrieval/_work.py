"""The unit of work of replay and cases: one engine x a run of consecutive steps, runnable on any worker.

A step is a labelled case and where its corpus is. A task's steps are visited in order; consecutive steps
on one corpus share its listing and its index; each next corpus of the same source is listed from the one
before (`Corpus.at`: the tree diff between them) and the index moves there by the files that changed
(`LiveIndex.advance`), exactly as a longer task does after its first step. So a task cut into slices equals
the whole one unit for unit whenever an engine's update equals its rebuild.

`run_task` is a generator: it yields one `EnginePart` dict per step as soon as that step is scored, so in
this process each case is recorded as it goes, and elsewhere the parts travel back together. Labels and
figures are computed on the worker; the client only merges.

An `EnginePart` (what a worker sends back for one step and one engine):

    id            the case's id
    role          0 for the measured engine, 1 for --vs
    engine        the engine's name
    status        ok | failed | missing-object (the corpus cannot be listed: an object is missing)
    reason        why it failed (None otherwise)
    figures       metric -> value (empty unless ok); with a `ContextSpec`, the context metrics' macro values too
    ranking       [{path, score}] (empty unless ok), plus `spans` ([[start, end]]) for a hit that has them
    gold_lines    with a `ContextSpec`: {path: [[start, end]]}, the case's gold lines (`gold_lines`)
    context       with a `ContextSpec` and ok: `_context.score_context`'s {figures, pairs, packed, curve},
                  its figures left in `figures`
    gold_blocks   with a `ContextSpec` and ok: {path: [[start, end]]}, the innermost definition of each gold
                  line at the corpus revision (`metrics.spans.gold_blocks`)
    coverage_gap  expected files (or whole any-of groups) the corpus does not index
    timing        {corpus_s, index_s, query_s}
"""

from __future__ import annotations

import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Protocol, Sequence

from ctxgauge._killpoints import checkpoint
from ctxgauge.corpus import Corpus, open_corpus
from ctxgauge.errors import EngineError, UserError
from ctxgauge.git import Repo
from ctxgauge.metrics.scoring import Labels, score
from ctxgauge.metrics.tokens import default_tokenizer
from ctxgauge.suites._retrieval._context import ContextSpec, gold_of, score_context
from ctxgauge.suites._retrieval._engines import open_engine
from ctxgauge.suites._retrieval._index import LiveIndex


class LabelledCase(Protocol):
    """What the pipeline needs of a case, whichever source made it (a commit, a line of a cases file)."""

    @property
    def id(self) -> str:
        """The unit id (a commit id, a case name)."""

    @property
    def request(self) -> str:
        """What the engine is asked."""

    def judge(self, corpus: Corpus) -> tuple[Labels, tuple[str, ...]]:
        """The labels scored against `corpus` and the coverage gap (expected files it does not index)."""

    # Optional: `gold_lines(corpus, repo) -> {path: [(start, end), ...]}`, the case's gold lines (replay: the
    # commit's pre-image lines, read with `repo`, its repository; cases: the case's `lines`). A case without
    # it has none: its context is scored at file level only.


@dataclass(frozen=True)
class Where:
    """Where a step's corpus is, as any worker can open it (picklable: paths and ids, no open object)."""

    key: str
    """The corpus's identity: steps with one key share one listing and one index state."""
    source: str
    """Absolute path of the git repository or directory."""
    rev: str | None = None
    """The revision (a git corpus); None: a directory as it is, or HEAD."""
    git: bool = True
    """Whether `source` is read as a git repository."""
    commit: bool = False
    """`rev` is a full commit id from the repository itself (not resolved again)."""
    name: str | None = None
    """The corpus's name (None: the repository's or directory's own)."""

    @property
    def lineage(self) -> str:
        """What an index may move along by updates: a git repository's revisions; a directory only itself."""
        return self.source if self.git else self.key


@dataclass(frozen=True)
class Step:
    """One case and where its corpus is."""

    case: Any
    """A `LabelledCase` (picklable)."""
    where: Where


@dataclass(frozen=True)
class Task:
    """One unit of work: consecutive steps for one engine (picklable)."""

    engine: str
    """The engine's spec; a worker opens the engine from it (`open_engine`) and keeps it for later tasks."""
    role: int
    """0: the measured engine; 1: the --vs engine."""
    steps: tuple[Step, ...]
    depth: int
    metrics: tuple[str, ...]
    live: str = ""
    """Key of objects already open in the planning process (`share_live`); a worker that does not hold
    them opens its own."""
    context: ContextSpec | None = None
    """Score each ranking's context too (spans, token budgets: `_context`); None: file metrics only."""


@dataclass
class _Live:
    engines: list[Any]
    repos: dict[str, Repo] = field(default_factory=dict)
    corpora: dict[str, Corpus] = field(default_factory=dict)


# Objects open in this process for a plan being run here (the inline executor): the caller's own engines,
# repositories and corpora, so what they cache is shared and nothing is made or listed twice.
_LIVE: dict[str, _Live] = {}
# Engines a worker made from specs, kept for the next task: per-blob work they cache is reused, so a
# worker's second slice of a repository costs the new blobs only (the per-worker cache).
_MADE: dict[str, Any] = {}


def share_live(engines: list[Any], repos: dict[str, Repo] | None = None,
               corpora: dict[str, Corpus] | None = None) -> str:
    """Register a plan's open engines (by role), repositories (by `Where.source`) and corpora (by
    `Where.key`) for tasks run in this process; returns the key `Task.live` names."""
    key = uuid.uuid4().hex
    _LIVE[key] = _Live(list(engines), dict(repos or {}), dict(corpora or {}))
    return key


def drop_live(key: str) -> None:
    _LIVE.pop(key, None)


def _engine(task: Task, live: _Live | None) -> Any:
    if live is not None:
        return live.engines[task.role]
    if task.engine not in _MADE:
        _MADE[task.engine] = open_engine(task.engine)
    return _MADE[task.engine]


def score_ranking(paths: Sequence[str], labels: Labels, metrics: Sequence[str]) -> dict[str, float | None]:
    """The figures of one ranking (file paths, best first) against one case's labels: the one place the
    pipeline scores, whether the ranking came from an engine here or from a run made elsewhere."""
    return score(list(paths), labels, metrics)


def _gold_lines(case: Any, corpus: Corpus, repo: Repo | None) -> dict[str, list[list[int]]]:
    """A case's gold lines as JSON writes them, `{path: [[start, end], ...]}` sorted by path, files without
    a line left out (they count at file level only)."""
    fn = getattr(case, "gold_lines", None)
    if fn is None:
        return {}
    got = fn(corpus, repo)
    return {p: [[int(s), int(e)] for s, e in got[p]] for p in sorted(got) if got[p]}


def slices(items: Sequence[Any], size: int | None) -> list[tuple[Any, ...]]:
    """Consecutive runs of at most `size` items (None: one run of all), order kept."""
    if not items:
        return []
    step = len(items) if size is None else max(1, size)
    return [tuple(items[i:i + step]) for i in range(0, len(items), step)]


class _Corpora:
    """The corpora of one task, each listed from the previous one of its source when there is one."""

    def __init__(self, steps: Sequence[Step], live: _Live | None):
        self.steps = steps
        self.live = live
        self.current: tuple[str, str, Corpus | None] | None = None  # key, source, corpus
        self._repos: dict[str, Repo] = {}  # opened here, closed at the end
        self._binary: dict[str, dict[str, bool]] = {}  # source -> blob id -> is binary
        self._used: list[Corpus] = []

    def get(self, n: int) -> Corpus | None:
        """Step n's corpus, or None when its repository lacks an object it needs."""
        where = self.steps[n].where
        if self.current is not None and self.current[0] == where.key:
            return self.current[2]
        same_source = self.current is not None and self.current[1] == where.source
        previous = self.current[2] if same_source else None
        corpus = self._open(n, where, previous)
        if corpus is not None and corpus.skipped.get("missing-object"):
            corpus = None
        self.current = (where.key, where.source, corpus)
        if corpus is not None:
            self._used.append(corpus)
        return corpus

    def _open(self, n: int, where: Where, previous: Corpus | None) -> Corpus | None:
        if self.live is not None and where.key in self.live.corpora:
            return self.live.corpora[where.key]
        cache = self._binary.setdefault(where.source, {})
        try:
            if previous is not None and where.git and where.rev is not None and previous.kind == "git":
                return previous.at(where.rev, binary_cache=cache, known_commit=where.commit)
            if not where.git:
                return open_corpus(where.source, where.rev, name=where.name)
            repo = self._repo(where.source)
            corpus = Corpus.from_git(repo, where.rev or "HEAD", binary_cache=cache, name=where.name)
        except UserError:
            # The revision came from this repository itself (its log, or a listing the planner made), so a
            # tree it cannot list is a missing object.
            return None
        corpus.prefetch(self._next_commits(n, where))  # the next revisions' tree diffs, read in batches
        return corpus

    def _next_commits(self, n: int, where: Where) -> list[str]:
        out: list[str] = []
        last = where.key
        for step in self.steps[n + 1:]:
            w = step.where
            if w.key == last:
                continue
            if w.source != where.source or not w.commit or w.rev is None:
                break
            out.append(w.rev)
            last = w.key
        return out

    def repo(self, where: Where) -> Repo | None:
        """The repository of a git step (opened here when the plan did not share one), else None."""
        return self._repo(where.source) if where.git else None

    def _repo(self, source: str) -> Repo:
        if self.live is not None and source in self.live.repos:
            return self.live.repos[source]
        if source not in self._repos:
            self._repos[source] = Repo(Path(source))
        return self._repos[source]

    def close(self) -> None:
        # Each corpus's `git cat-file` ends with the task (a later read would start it again).
        for corpus in self._used:
            corpus.close()
        for repo in self._repos.values():
            repo.close()


def run_task(task: Task) -> Iterator[dict]:
    """Index, query and score each step of the task with one engine; yield an EnginePart per step.

    An engine failure fails that corpus's parts only (the next corpus starts from a fresh build)."""
    live = _LIVE.get(task.live)
    engine = _engine(task, live)
    corpora = _Corpora(task.steps, live)
    try:
        with tempfile.TemporaryDirectory(prefix="ctxgauge-retrieval-") as tmp:
            index = LiveIndex(engine, Path(tmp) / "index")
            for n, step in enumerate(task.steps):
                checkpoint("commit-before/replay-slice")  # where the kill tests stop a worker mid-unit
                case, where = step.case, step.where
                t0 = time.perf_counter()
                corpus = corpora.get(n)
                t1 = time.perf_counter()
                part: dict = {"id": case.id, "role": task.role, "engine": engine.name, "reason": None,
                              "figures": {}, "ranking": [], "coverage_gap": [],
                              "timing": {"corpus_s": round(t1 - t0, 6)}}
                if corpus is None:
                    part["status"] = "missing-object"
                    yield part
                    continue
                labels, gap = case.judge(corpus)
                part["coverage_gap"] = list(gap)
                if task.context is not None:
                    part["gold_lines"] = _gold_lines(case, corpus, corpora.repo(where))
                try:
                    index.advance(where.key, where.lineage, corpus)
                    t2 = time.perf_counter()
                    ranking = index.query(case.request, task.depth)
                    t3 = time.perf_counter()
                except EngineError as exc:
                    part.update(status="failed", reason=str(exc))
                    yield part
                    continue
                part["timing"].update(index_s=round(t2 - t1, 6), query_s=round(t3 - t2, 6))
                part.update(status="ok", ranking=ranking,
                            figures=score_ranking([h["path"] for h in ranking], labels, task.metrics))
                if task.context is not None:
                    t4 = time.perf_counter()
                    context = score_context(ranking, gold_of(labels.relevant, part["gold_lines"]), corpus,
                                            task.context, default_tokenizer())
                    part["figures"].update(context.pop("figures"))
                    part["gold_blocks"] = context.pop("gold_blocks")
                    part["context"] = context
                    part["timing"]["context_s"] = round(time.perf_counter() - t4, 6)
                if index.notes is not None:
                    part["reading"] = index.notes
                yield part
    finally:
        corpora.close()
