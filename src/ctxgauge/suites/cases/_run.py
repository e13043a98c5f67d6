"""Running labelled cases: plan (check, open corpora and engines), then the retrieval pipeline, then record.

A cases file is a source of labelled cases for the pipeline replay's commits also go through
(`ctxgauge.suites._retrieval`: index, query, score, compare, TREC). Each distinct corpus is indexed once
per engine; every case on it is one query at `depth`. Corpora of one git repository at several revisions
are visited together, oldest commit first, and one index per engine moves between them by the files that
changed (`update`), so SWE-bench-style case files do not build every case from nothing. The work is cut
into units (one engine x a slice of consecutive corpora of one repository) and runs on any executor
(`--executor`): the records are the same unit for unit whichever runs them. A unit per case, `id` = case
name, status `ok` or `failed` (an engine call failed: left out of every mean). Fields besides the
records' own (id, status, reason, figures):

    query          the request
    corpus         {name, rev, hash} of the corpus (never its absolute path)
    expected       expected files; `expected_any_of` the groups, if any
    coverage_gap   expected files (or whole groups) the corpus does not index
    known_gap      whether the case is in the known-gaps lane (reported, never counted in pass lines)
    ranking        the engine's top `depth` files: [{path, score}], plus `spans` for a hit that has them
    gold_lines     {path: [[start, end]]}: the case's `lines` (hand-labelled, or a SWE-bench gold patch's
                   pre-image lines) in the expected files the corpus indexes
    gold_blocks    {path: [[start, end]]}: the innermost definition of each gold line in the file at the
                   corpus revision (left out when none: no grammar, lines outside every definition)
    context        the engine's context: {pairs, packed, curve} (`suites._retrieval._context`); its macro
                   figures (line coverage at each k and budget, ...) are in `figures`
    reading        only from an engine that reads someone else's answer (mcp): how it read it
                   (`engines.query_notes`)
    vs             with --vs: {engine, figures, ranking, context} (and its `reading`, when it has one)
    workers        the workers that ran the case, one per engine, measured engine first (left out of
                   comparisons, as timing: `records.VOLATILE_UNIT_FIELDS`)

`score_external` scores rankings made elsewhere (a TREC run or JSON lines) against TREC qrels: no engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ctxgauge.corpus import Corpus
from ctxgauge.engines import ask_identity
from ctxgauge.errors import UserError
from ctxgauge.executors import open_executor, parse_executor
from ctxgauge.records import RunDir, Subject, default_run_dir, figures_headline, unknown
from ctxgauge.results import (
    CasesComparison, CasesResults, CasesSpec, CasesUnit, CorpusRef, CurvePoint, PassLine as PassReport, Ranked,
    UnitContext, VsPart,
)
from ctxgauge.suites._progress import Progress
from ctxgauge.suites._retrieval import (
    Batch, ContextSpec, Step, Where, budget_curve, check_budgets, close_engines, comparison, compared_names,
    context_summary, execute_many, is_context, open_engines, record_unit, score_ranking, share_live,
    with_metrics, write_trec,
)
from ctxgauge.suites.cases._corpora import by_repository, missing_expected, open_corpora
from ctxgauge.suites.cases._model import Case, CaseFile, split_corpus
from ctxgauge.metrics.scoring import Labels, PassLine, metric_names, summarise
from ctxgauge.metrics.spans import DEFAULT_BUDGETS
from ctxgauge.metrics.tokens import default_tokenizer

SUITE = "cases"
SUITE_VERSION = 2
"""Bumped whenever a rule that changes the cases suite's figures changes; recorded in the run spec.
2: each case also records its gold lines and the context metrics (spans, token budgets)."""

# progress(cases done, cases in all, case name), the one protocol of suites/_progress.py


@dataclass(frozen=True)
class CasesConfig:
    """Options of a cases run; the CLI's flags mirror these fields."""

    engine: str | None = None
    """Engine spec (None only when scoring an external run)."""
    vs: str | None = None
    """Engine compared on exactly the same cases."""
    ks: tuple[int, ...] = (5, 10)
    """Cutoffs every metric is scored at."""
    depth: int = 100
    """Files each query asks for."""
    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    """Token budgets each case's ranking is packed under (`--budget`), for the `_tokens@B` figures."""
    seed: int = 0
    """Seed of the paired bootstrap and randomization test."""
    pass_lines: tuple[PassLine, ...] = ()
    """Pass lines added to the case file's own (a command-line line replaces a file line on one metric)."""
    out: Path | None = None
    """Run directory (default: `default_run_dir("cases")`)."""
    resume: bool = False
    """Continue an unfinished run in `out`."""
    trec: Path | None = None
    """Also write `run.trec` (and `run-vs.trec`) and `qrels.txt` here."""
    missing_as_miss: bool = False
    """An expected file that is not in the corpus at all (a typo, or a file the revision lacks) is an error
    unless this is set; then it is reported per case (`missing`) and counts as a miss, never dropped."""
    executor: str = "local"
    """Where the units run (`ctxgauge.executors` spec: local, local:N, dask-local[:N], dask://HOST:PORT).
    Not part of the spec: the records are the same whichever runs them (tested unit for unit)."""
    slice_size: int | None = None
    """Corpora per unit of work (None: one slice per repository with one worker, about two per worker with
    more). Not part of the spec either."""


@dataclass
class CasesResult:
    """What a cases run measured: the typed results its run records, the cases and where it is;
    `to_dict()` is the `--json` shape."""

    run_dir: Path
    """Where the run is recorded."""
    results: CasesResults
    """What the run record keeps under `results` (the one typed model its readers read too)."""
    cases: list[CasesUnit]
    """Every case, in file order, as its unit (`case_entry` is its `--json` entry)."""

    @property
    def passed(self) -> bool:
        """Exit 0 only when every pass line holds and no counted case failed."""
        return self.results.passed

    def to_dict(self) -> dict:
        """The `--json` shape: summary and cases, as replay prints summary and commits."""
        return {**self.results.to_json(), "cases": [case_entry(u) for u in self.cases], "run_dir": str(self.run_dir)}


def case_entry(unit: CasesUnit) -> dict:
    """One element of `cases` in the `--json` shape: the unit's line as recorded, its id as `name`, without
    timing and workers (a record of when and where, never compared)."""
    return {"name": unit.id, **{k: v for k, v in unit.to_json().items() if k not in ("id", "timing", "workers")}}


def _merge_lines(file_lines: Sequence[PassLine], extra: Sequence[PassLine]) -> list[PassLine]:
    lines = {line.metric: line for line in file_lines}
    lines.update({line.metric: line for line in extra})
    return list(lines.values())


def _check(config: CasesConfig, lines: Sequence[PassLine]) -> int:
    if not config.ks or any(k < 1 for k in config.ks):
        raise UserError("-k must be at least 1")
    # A cutoff a pass line names needs that depth; a `_tokens@B` line names a budget, not a cutoff.
    need = max([*config.ks, *(int(line.metric.split("@")[1]) for line in lines if "@" in line.metric
                              and not line.metric.split("@")[0].removesuffix("_micro").endswith("_tokens"))])
    if config.depth < need:
        raise UserError(f"--depth {config.depth} is below a cutoff in use ({need}): raise --depth")
    if config.resume and config.out is None:
        raise UserError("--resume needs --out RUN_DIR (the run to continue)")
    if config.slice_size is not None and config.slice_size < 1:
        raise UserError("--slice must be at least 1 corpus (or leave it out)")
    check_budgets(config.budgets)
    parse_executor(config.executor)
    return need


def _pass_report(lines: Sequence[PassLine], summary: dict) -> list[PassReport]:
    return [PassReport(metric=line.metric, threshold=line.value, value=summary.get(line.metric),
                       higher_is_better=line.higher_is_better, holds=line.holds(summary.get(line.metric)))
            for line in lines]


def _summary(parts: Sequence[Any], metrics: list[str], context: ContextSpec | None) -> dict[str, float | None]:
    """Ranking metrics' means, then (with `context`) the context metrics: macro means, micro ratios."""
    out = summarise([p.figures for p in parts], metrics)
    if context is not None:
        out.update(context_summary([(p.figures, p.context.pairs if p.context is not None else {})
                                    for p in parts], context))
    return out


def _curves(ok: Sequence[CasesUnit], engine_names: list[str], seed: int) -> dict[str, list[CurvePoint]]:
    """`results.budget_curve`: per engine, line coverage under each budget of the area's over the counted
    cases with gold lines (seeded bootstrap interval); an engine without such a case is left out."""
    sides = [[u.context.curve if u.context is not None else None for u in ok]]
    if len(engine_names) > 1:
        sides.append([u.vs.context.curve if u.vs is not None and u.vs.context is not None else None for u in ok])
    out = {}
    for name, rows in zip(engine_names, sides):
        points = budget_curve(rows, seed)
        if points:
            out[name] = [CurvePoint(**pt) for pt in points]
    return out


def _finish(run: RunDir, written: list[dict], metrics: list[str], lines: Sequence[PassLine], seed: int,
            trec: Path | None, engine_names: list[str], context: ContextSpec | None = None) -> CasesResult:
    units = [CasesUnit.from_json(u, str(run.path)) for u in written]
    counted = [u for u in units if not u.known_gap]
    ok = [u for u in counted if u.ok]
    gaps = [u for u in units if u.known_gap and u.ok]
    summary = _summary(ok, metrics, context)
    report = _pass_report(lines, summary)
    failed = sum(1 for u in counted if u.status == "failed")
    macro, micro = compared_names(context) if context is not None else ([], [])
    results = CasesResults(
        summary=summary, known_gap_summary=_summary(gaps, metrics, context), pass_lines=report,
        passed=failed == 0 and all(line.holds for line in report), failed=failed,
        comparison=comparison(ok, [*metrics, *macro], seed, engine_names[0], CasesComparison, "cases", micro)
        if len(engine_names) > 1 else None,
        budget_curve=_curves(ok, engine_names, seed) if context is not None else {},
    )
    if trec is not None:
        write_trec(Path(trec), units, engine_names[0], engine_names[1] if len(engine_names) > 1 else None)
    run.finish("success", results=results.to_json(), headline=figures_headline(summary, metrics))
    return CasesResult(run_dir=run.path, results=results, cases=units)


def run_cases(case_file: CaseFile, config: CasesConfig, progress: Progress | None = None) -> CasesResult:
    """Run every case of `case_file` with the configured engine(s); record the run; return the result."""
    if config.engine is None:
        raise UserError("--engine is needed to run cases (or give --qrels with --run to score a ranking)")
    lines = _merge_lines(case_file.pass_lines, config.pass_lines)
    depth = max(config.depth, _check(config, lines))
    metrics = metric_names(config.ks, extra=[line.metric for line in lines if not is_context(line.metric)])
    engines = open_engines(config.engine, config.vs)
    corpora: dict[str, Corpus] = {}
    try:
        corpora = open_corpora(case_file)
        # A context pass line is scored like every context figure: its k or budget joins the run's.
        context = with_metrics(ContextSpec(tuple(config.ks), tuple(sorted(set(config.budgets)))),
                               [line.metric for line in lines])
        return _run(case_file, config, corpora, engines, lines, depth, metrics, progress, context)
    finally:
        for corpus in corpora.values():
            corpus.close()
        close_engines(engines)


def _run(case_file: CaseFile, config: CasesConfig, corpora: dict[str, Corpus], engines: list[Any],
         lines: list[PassLine], depth: int, metrics: list[str], progress: Progress | None,
         context: ContextSpec) -> CasesResult:
    missing = missing_expected(case_file, corpora, config.missing_as_miss)
    # A failed identity is the engine's failure, not the user's: the run is recorded with every case failed
    # (the identity kept `unknown`, so `--resume` takes the mended engine's) instead of ending without one.
    identity, broken = ask_identity(engines[0])
    spec = {"source": case_file.source, "cases": [c.name for c in case_file.cases],
            "engine": engines[0].name, "engine_identity": identity if broken is None else unknown(str(broken)),
            "vs": engines[1].name if len(engines) > 1 else None, "ks": list(config.ks), "depth": depth,
            "seed": config.seed, "pass": {line.metric: line.value for line in lines}, "metrics": metrics,
            "corpora": sorted({corpora[c.corpus].content_hash() for c in case_file.cases}),
            "budgets": list(context.budgets), "tokenizer": default_tokenizer().spec}
    if config.missing_as_miss:
        spec["missing_as_miss"] = True
    spec = CasesSpec.from_json(spec, case_file.source, "spec").to_json()  # the typed settings every reader reads
    out = Path(config.out) if config.out is not None else default_run_dir(SUITE)
    subject = Subject(dataset=case_file.source, systems=[e.name for e in engines])
    specs = [config.engine] + ([config.vs] if config.vs else [])
    with open_executor(config.executor) as executor, \
            RunDir.start(out, suite=SUITE, suite_version=SUITE_VERSION, subject=subject, spec=spec,
                         resume=config.resume) as run:
        batch = CasesBatch(run, case_file, corpora, engines, specs, depth, metrics, missing, broken, progress,
                           context)
        execute_many([batch], executor, config.slice_size)
        ordered = [batch.units[c.name] for c in case_file.cases]
        return _finish(run, ordered, metrics, lines, config.seed, config.trec, [e.name for e in engines],
                       context)


@dataclass(frozen=True)
class CaseQuery:
    """A case as the retrieval pipeline asks it (a `LabelledCase`): the case and the expected files its
    corpus does not have at all (with --missing-as-miss: they stay in the labels, so they are misses)."""

    case: Case
    missing: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.case.name

    @property
    def request(self) -> str:
        return self.case.query

    def judge(self, corpus: Corpus) -> tuple[Labels, tuple[str, ...]]:
        return self.case.labels(set(corpus.paths) | set(self.missing))

    def gold_lines(self, corpus: Corpus, repo: Any) -> dict[str, list[tuple[int, int]]]:
        """The case's gold lines (`lines`: hand-labelled, or a SWE-bench gold patch's pre-image lines)."""
        return self.case.gold_lines()


def _where(key: str, corpus: Corpus) -> Where:
    """Where a case's corpus is, for any worker: a git repository at the full commit the planner resolved
    (its revisions one lineage an index moves along), or a directory as it is."""
    source = str(Path(split_corpus(key)[0] if corpus.kind == "git" else key).resolve())
    if corpus.kind == "git":
        return Where(key=key, source=source, rev=corpus.rev, git=True, commit=True, name=corpus.name)
    return Where(key=key, source=source, git=False, name=corpus.name)


class CasesBatch(Batch):
    """A cases file's run being recorded: the cases still to run, repository by repository, oldest revision
    first, and each case's unit made from its engines' parts."""

    def __init__(self, run: RunDir, case_file: CaseFile, corpora: dict[str, Corpus], engines: list[Any],
                 specs: list[str], depth: int, metrics: list[str], missing: dict[str, tuple[str, ...]],
                 broken: Exception | None, progress: Progress | None, context: ContextSpec | None = None):
        super().__init__(run, specs, depth, metrics, context)
        self.case_file = case_file
        self.engines = engines
        self.by_key = corpora
        self.progress = progress
        self._records: dict[str, dict] = {}
        self._done = 0
        self.units.update({c.name: run.done[c.name] for c in case_file.cases if run.is_done(c.name)})
        steps: list[Step] = []
        for key, corpus in by_repository(corpora):
            where = _where(key, corpus)
            steps += [Step(CaseQuery(c, missing.get(c.name, ())), where) for c in case_file.cases
                      if c.corpus == key and not run.is_done(c.name)]
        if broken is not None:
            # A failed identity: every case it would serve is recorded failed with why, no engine is run.
            for step in steps:
                q = step.case
                labels_gap = q.judge(corpora[q.case.corpus])[1]
                unit = self._fields(q, labels_gap)
                unit.status, unit.reason, unit.figures, unit.ranking = "failed", str(broken), {}, []
                self.units[q.id] = record_unit(run, unit)
                self.recorded(self.units[q.id])
            steps = []
        self.todo = steps

    @property
    def finished(self) -> bool:
        return all(c.name in self.units for c in self.case_file.cases)

    def live(self) -> str:
        return share_live(self.engines, corpora=self.by_key)

    def recorded(self, unit: dict) -> None:
        self._done += 1
        if self.progress is not None:
            self.progress(self._done, len(self.case_file.cases), unit["id"])

    def _record_of(self, key: str) -> CorpusRef:
        if key not in self._records:
            c = self.by_key[key]
            self._records[key] = CorpusRef(name=c.name, rev=c.rev, hash=c.content_hash())
        return self._records[key]

    def _fields(self, q: CaseQuery, gap: Sequence[str]) -> CasesUnit:
        case = q.case
        return CasesUnit(id=case.name, status="ok", request=case.query, corpus=self._record_of(case.corpus),
                         expected=list(case.expected), coverage_gap=list(gap), known_gap=case.known_gap,
                         missing=list(q.missing) if q.missing else None,
                         expected_any_of=[list(g) for g in case.any_of] if case.any_of else None)

    def merge(self, step: Step, parts: Sequence[dict], workers: Sequence[str]) -> CasesUnit:
        first = parts[0]
        unit = self._fields(step.case, first["coverage_gap"])
        failed = next((p for p in parts if p["status"] != "ok"), None)
        if failed is not None:
            unit.status, unit.reason, unit.figures, unit.ranking = "failed", failed["reason"] or failed["status"], {}, []
        else:
            unit.figures, unit.ranking = dict(first["figures"]), [Ranked.from_json(h) for h in first["ranking"]]
            if "context" in first:
                unit.context = UnitContext.from_json(first["context"], "engine part")
                unit.gold_lines = dict(first["gold_lines"])
                unit.gold_blocks = dict(first.get("gold_blocks") or {})
            if "reading" in first:  # an engine that reads someone else's answer (mcp): how it read it
                unit.extra["reading"] = first["reading"]
            if len(parts) > 1:
                unit.vs = VsPart(engine=parts[1]["engine"], figures=dict(parts[1]["figures"]),
                                 ranking=[Ranked.from_json(h) for h in parts[1]["ranking"]])
                if "context" in parts[1]:
                    unit.vs.context = UnitContext.from_json(parts[1]["context"], "engine part")
                if "reading" in parts[1]:
                    unit.vs.extra["reading"] = parts[1]["reading"]
        unit.workers = list(workers)
        return unit


def score_external(qrels: str | Path, run_file: str | Path, config: CasesConfig) -> CasesResult:
    """Score a ranking produced elsewhere against TREC qrels, without any engine. A query of the qrels the
    run does not rank is scored as an empty ranking (the system returned nothing), as `trec_eval -c` does;
    a query without a relevant file is left out (every metric is undefined there)."""
    from ctxgauge.suites.cases._importers import read_rankings
    from ctxgauge.trec import read_qrels

    judged = read_qrels(qrels)
    rankings = read_rankings(run_file)
    lines = list(config.pass_lines)
    context = next((line.metric for line in lines if is_context(line.metric)), None)
    if context is not None:
        raise UserError(f"--pass {context}: a context metric needs the engine's spans and the corpus; a ranking "
                        "scored from --run has neither (use a ranking metric such as recall@5)")
    # External rankings are scored as given, whatever their length: only the cutoffs need checking.
    _check(CasesConfig(ks=config.ks, depth=10**9, resume=config.resume, out=config.out), lines)
    metrics = metric_names(config.ks, extra=[line.metric for line in lines])
    spec = {"source": Path(qrels).name, "run": Path(run_file).name,
            "engine": None, "ks": list(config.ks), "seed": config.seed, "metrics": metrics,
            "pass": {line.metric: line.value for line in lines}}
    spec = CasesSpec.from_json(spec, Path(qrels).name, "spec").to_json()
    out = Path(config.out) if config.out is not None else default_run_dir(SUITE)
    subject = Subject(dataset=Path(qrels).name, systems=[f"external:{Path(run_file).name}"])
    with RunDir.start(out, suite=SUITE, suite_version=SUITE_VERSION, subject=subject, spec=spec,
                      resume=config.resume) as run:
        units = []
        for qid, docs in judged.items():
            relevant = frozenset(d for d, rel in docs.items() if rel > 0)
            if not relevant:
                continue
            ranking = rankings.get(qid, [])
            unit = CasesUnit(id=qid, status="ok", expected=sorted(relevant), coverage_gap=[], known_gap=False,
                             ranked=qid in rankings, figures=score_ranking(ranking, Labels(relevant), metrics),
                             ranking=[Ranked(path=p, score=None) for p in ranking])
            units.append(run.done.get(qid) or record_unit(run, unit))
        if not units:
            raise UserError(f"{Path(qrels).name}: no query has a relevant file (relevance > 0)")
        return _finish(run, units, metrics, lines, config.seed, config.trec, ["external"])
