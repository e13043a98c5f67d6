"""Running labelled cases: plan (check, open corpora and engines) -> build -> query -> score -> record.

Each distinct corpus is indexed once per engine; every case on it is one query at `depth`. Corpora of one
git repository at several revisions are visited together and one index per engine moves between them by
the files that changed (`update`), so SWE-bench-style case files do not build every case from nothing. A unit per
case, `id` = case name, status `ok` or `failed` (an engine call failed: left out of every mean). Fields
besides the records' own (id, status, reason, figures):

    query          the request
    corpus         {name, rev, hash} of the corpus (never its absolute path)
    expected       expected files; `expected_any_of` the groups, if any
    coverage_gap   expected files (or whole groups) the corpus does not index
    known_gap      whether the case is in the known-gaps lane (reported, never counted in pass lines)
    ranking        the engine's top `depth` files: [{path, score}], plus `spans` for a hit that has them
    reading        only from an engine that reads someone else's answer (mcp): how it read it
                   (`engines.query_notes`)
    vs             with --vs: {engine, figures, ranking} (and its `reading`, when it has one)

`score_external` scores rankings made elsewhere (a TREC run or JSON lines) against TREC qrels: no engine.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ctxgauge.engines import ask_defer_writes, ask_identity, call_engine, checked_hits, query_notes, refuse_same_system
from ctxgauge.corpus import Corpus
from ctxgauge.engines import engine_available, get_engine
from ctxgauge.errors import EngineError, UserError
from ctxgauge.records import RunDir, Subject, default_run_dir, figures_headline, unknown
from ctxgauge.suites._progress import Progress
from ctxgauge.suites.cases._corpora import by_repository, missing_expected, open_corpora, repository_of
from ctxgauge.suites.cases._model import Case, CaseFile
from ctxgauge.metrics.scoring import Labels, PassLine, compare, metric_names, score, summarise

SUITE = "cases"
SUITE_VERSION = 1
"""Bumped whenever a rule that changes the cases suite's figures changes; recorded in the run spec."""

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


@dataclass
class CasesResult:
    """What a cases run measured; `to_dict()` is the `--json` shape."""

    run_dir: Path
    """Where the run is recorded."""
    summary: dict[str, float | None]
    """Metric -> mean over the counted cases (ok, not in the known-gaps lane)."""
    known_gap_summary: dict[str, float | None]
    """The same over the known-gaps lane."""
    cases: list[dict]
    """One entry per case: name, status, query, expected, coverage_gap, known_gap, figures, ranking."""
    pass_lines: list[dict]
    """[{metric, threshold, value, holds}] for every pass line."""
    failed: int
    """Counted cases whose engine call failed."""
    comparison: dict | None = None
    """With --vs: the paired comparison per metric over the counted cases."""

    @property
    def passed(self) -> bool:
        """Exit 0 only when every pass line holds and no counted case failed."""
        return self.failed == 0 and all(line["holds"] for line in self.pass_lines)

    def results(self) -> dict:
        """What the run record keeps under `results`."""
        out = {"summary": self.summary, "known_gap_summary": self.known_gap_summary, "pass": self.pass_lines,
               "passed": self.passed, "failed": self.failed}
        if self.comparison is not None:
            out["comparison"] = self.comparison
        return out

    def to_dict(self) -> dict:
        """The `--json` shape: summary and cases, as replay prints summary and commits."""
        return {**self.results(), "cases": self.cases, "run_dir": str(self.run_dir)}


def _merge_lines(file_lines: Sequence[PassLine], extra: Sequence[PassLine]) -> list[PassLine]:
    lines = {line.metric: line for line in file_lines}
    lines.update({line.metric: line for line in extra})
    return list(lines.values())


def _engines(config: CasesConfig) -> list[Any]:
    specs = [config.engine] + ([config.vs] if config.vs else [])
    out = []
    for spec in specs:
        eng = get_engine(spec)
        ok, why = engine_available(eng)
        if not ok:
            raise UserError(f"engine {eng.name} is not available here: {why}")
        out.append(eng)
    if len(out) == 2:
        refuse_same_system(config.engine, config.vs, *out)
    return out


def _check(config: CasesConfig, lines: Sequence[PassLine]) -> int:
    if not config.ks or any(k < 1 for k in config.ks):
        raise UserError("-k must be at least 1")
    need = max([*config.ks, *(int(line.metric.split("@")[1]) for line in lines if "@" in line.metric)])
    if config.depth < need:
        raise UserError(f"--depth {config.depth} is below a cutoff in use ({need}): raise --depth")
    if config.resume and config.out is None:
        raise UserError("--resume needs --out RUN_DIR (the run to continue)")
    return need


def _corpus_record(c: Corpus) -> dict:
    return {"name": c.name, "rev": c.rev, "hash": c.content_hash()}


def _pass_report(lines: Sequence[PassLine], summary: dict) -> list[dict]:
    return [{"metric": line.metric, "threshold": line.value, "value": summary.get(line.metric),
             "higher_is_better": line.higher_is_better, "holds": line.holds(summary.get(line.metric))}
            for line in lines]


def _finish(run: RunDir, units: list[dict], metrics: list[str], lines: Sequence[PassLine], seed: int,
            trec: Path | None, engine_names: list[str]) -> CasesResult:
    counted = [u for u in units if not u.get("known_gap")]
    ok = [u for u in counted if u["status"] == "ok"]
    gaps = [u for u in units if u.get("known_gap") and u["status"] == "ok"]
    summary = summarise([u["figures"] for u in ok], metrics)
    comparison = None
    if len(engine_names) > 1 and ok:
        comparison = {"engine": engine_names[0], "vs": engine_names[1], "seed": seed, "cases": len(ok),
                      "metrics": compare([u["figures"] for u in ok], [u["vs"]["figures"] for u in ok], metrics, seed)}
    result = CasesResult(
        run_dir=run.path, summary=summary, known_gap_summary=summarise([u["figures"] for u in gaps], metrics),
        cases=[{"name": u["id"], **{k: v for k, v in u.items() if k not in ("id", "timing")}} for u in units],
        pass_lines=_pass_report(lines, summary), failed=sum(1 for u in counted if u["status"] == "failed"),
        comparison=comparison,
    )
    if trec is not None:
        _write_trec(Path(trec), units, engine_names)
    run.finish("success", results=result.results(), headline=figures_headline(summary, metrics))
    return result


def _write_trec(directory: Path, units: list[dict], engine_names: list[str]) -> None:
    from ctxgauge.trec import encode_docno, write_qrels, write_run

    ok = [u for u in units if u["status"] == "ok"]
    directory.mkdir(parents=True, exist_ok=True)
    qid = {u["id"]: encode_docno(u["id"]) for u in ok}
    write_run(directory / "run.trec", {qid[u["id"]]: [h["path"] for h in u["ranking"]] for u in ok}, engine_names[0])
    gaps = {u["id"]: set(u.get("coverage_gap") or ()) for u in ok}
    # Any-of groups have no TREC form (qrels judge files, not groups): their members are written relevant.
    write_qrels(directory / "qrels.txt", {
        qid[u["id"]]: list(dict.fromkeys([p for p in u["expected"] if p not in gaps[u["id"]]]
                                         + [p for g in u.get("expected_any_of", []) for p in g]))
        for u in ok})
    if len(engine_names) > 1:
        write_run(directory / "run-vs.trec", {qid[u["id"]]: [h["path"] for h in u["vs"]["ranking"]] for u in ok},
                  engine_names[1])


def run_cases(case_file: CaseFile, config: CasesConfig, progress: Progress | None = None) -> CasesResult:
    """Run every case of `case_file` with the configured engine(s); record the run; return the result."""
    if config.engine is None:
        raise UserError("--engine is needed to run cases (or give --qrels with --run to score a ranking)")
    lines = _merge_lines(case_file.pass_lines, config.pass_lines)
    depth = max(config.depth, _check(config, lines))
    metrics = metric_names(config.ks, extra=[line.metric for line in lines])
    engines = _engines(config)
    corpora: dict[str, Corpus] = {}
    try:
        corpora = open_corpora(case_file)
        return _run(case_file, config, corpora, engines, lines, depth, metrics, progress)
    finally:
        for corpus in corpora.values():
            corpus.close()
        for eng in engines:
            getattr(eng, "close", lambda: None)()


def _run(case_file: CaseFile, config: CasesConfig, corpora: dict[str, Corpus], engines: list[Any],
         lines: list[PassLine], depth: int, metrics: list[str], progress: Progress | None) -> CasesResult:
    missing = missing_expected(case_file, corpora, config.missing_as_miss)
    # A failed identity is the engine's failure, not the user's: the run is recorded with every case failed
    # (the identity kept `unknown`, so `--resume` takes the mended engine's) instead of ending without one.
    identity, broken = ask_identity(engines[0])
    spec = {"source": case_file.source, "cases": [c.name for c in case_file.cases],
            "engine": engines[0].name, "engine_identity": identity if broken is None else unknown(str(broken)),
            "vs": engines[1].name if len(engines) > 1 else None, "ks": list(config.ks), "depth": depth,
            "seed": config.seed, "pass": {line.metric: line.value for line in lines}, "metrics": metrics,
            "corpora": sorted({corpora[c.corpus].content_hash() for c in case_file.cases})}
    if config.missing_as_miss:
        spec["missing_as_miss"] = True
    out = Path(config.out) if config.out is not None else default_run_dir(SUITE)
    units: dict[str, dict] = {}
    subject = Subject(dataset=case_file.source, systems=[e.name for e in engines])
    with RunDir.start(out, suite=SUITE, suite_version=SUITE_VERSION, subject=subject, spec=spec,
                      resume=config.resume) as run, \
            tempfile.TemporaryDirectory(prefix="ctxgauge-cases-") as tmp:
        done = 0
        # Per (repository, engine): the index directory and the corpus it holds. The corpora of one
        # repository are visited one after another, and each index moves from revision to revision by
        # the files that changed (`update`, byte-identical to a fresh build by the engine contract).
        indexes: dict[tuple[str, int], tuple[Path, Corpus]] = {}
        current: tuple[str, list[Corpus]] = ("", [])  # the repository worked on, and its corpora so far
        for n, (key, corpus) in enumerate(by_repository(corpora)):
            repository = repository_of(key, corpus)
            if current[0] != repository:
                for done_with in current[1]:  # that repository is done: its `git cat-file` ends now
                    done_with.close()
                current = (repository, [])
            current[1].append(corpus)
            todo = [c for c in case_file.cases if c.corpus == key and not run.is_done(c.name)]
            units.update({c.name: run.done[c.name] for c in case_file.cases
                          if c.corpus == key and run.is_done(c.name)})
            if not todo:
                continue
            built: list[tuple[Any, Path] | EngineError] = []
            for i, eng in enumerate(engines):
                built.append(broken if broken is not None else
                             _index(indexes, repository, i, eng, corpus, Path(tmp) / f"{n}-{i}"))
            for case in todo:
                units[case.name] = _record(run, _one(case, corpus, built, metrics, depth,
                                                     missing.get(case.name, ())))
                done += 1
                if progress is not None:
                    progress(done, len(case_file.cases), case.name)
        ordered = [units[c.name] for c in case_file.cases]
        return _finish(run, ordered, metrics, lines, config.seed, config.trec, [e.name for e in engines])


def _index(indexes: dict, repo: str, i: int, eng: Any, corpus: Corpus, fresh_dir: Path) -> tuple[Any, Path] | EngineError:
    """Engine `i`'s index of `corpus`: the repository's previous index updated by the changed files when
    the engine can update, else a fresh build in `fresh_dir`."""
    held = indexes.pop((repo, i), None)
    try:
        if held is not None and callable(getattr(eng, "update", None)):
            out_dir, previous = held
            call_engine("update", eng, eng.update, out_dir, corpus, previous.changes_to(corpus))
        else:
            out_dir = fresh_dir
            out_dir.mkdir()
            # Cases only query their indexes, never read their bytes (no artifact is hashed here): an engine
            # that can keep one in memory (bm25) skips writing it, and an update costs the changed files.
            ask_defer_writes(eng, out_dir)
            call_engine("build", eng, eng.build, corpus, out_dir)
    except EngineError as exc:
        return exc  # the index may be torn: the next corpus of this repository builds afresh
    indexes[(repo, i)] = (out_dir, corpus)
    return eng, out_dir


def _one(case: Case, corpus: Corpus, built: list, metrics: list[str], depth: int,
         missing: tuple[str, ...] = ()) -> dict:
    # A missing expected file (with --missing-as-miss) stays in the labels: no ranking can hold it, so it is a miss.
    labels, gap = case.labels(set(corpus.paths) | set(missing))
    unit: dict = {"id": case.name, "request": case.query, "corpus": _corpus_record(corpus),
                  "expected": list(case.expected), "coverage_gap": list(gap), "known_gap": case.known_gap}
    if missing:
        unit["missing"] = list(missing)
    if case.any_of:
        unit["expected_any_of"] = [list(g) for g in case.any_of]
    results = []
    for slot in built:
        if isinstance(slot, EngineError):
            return {**unit, "status": "failed", "reason": str(slot), "figures": {}, "ranking": []}
        eng, out_dir = slot
        try:
            hits = checked_hits(call_engine("query", eng, eng.query, out_dir, case.query, depth), corpus, depth,
                                eng.name)
        except EngineError as exc:
            return {**unit, "status": "failed", "reason": str(exc), "figures": {}, "ranking": []}
        ranking = [h.to_dict() for h in hits]
        results.append((eng.name, score([h.path for h in hits], labels, metrics), ranking, query_notes(eng)))
    unit.update(status="ok", reason=None, figures=results[0][1], ranking=results[0][2])
    if results[0][3] is not None:
        unit["reading"] = results[0][3]
    if len(results) > 1:
        unit["vs"] = {"engine": results[1][0], "figures": results[1][1], "ranking": results[1][2]}
        if results[1][3] is not None:
            unit["vs"]["reading"] = results[1][3]
    return unit


def _record(run: RunDir, unit: dict) -> dict:
    fields = dict(unit)
    uid, status = fields.pop("id"), fields.pop("status")
    return run.add_unit(uid, status, figures=fields.pop("figures", None), reason=fields.pop("reason", None),
                        **fields)


def score_external(qrels: str | Path, run_file: str | Path, config: CasesConfig) -> CasesResult:
    """Score a ranking produced elsewhere against TREC qrels, without any engine. A query of the qrels the
    run does not rank is scored as an empty ranking (the system returned nothing), as `trec_eval -c` does;
    a query without a relevant file is left out (every metric is undefined there)."""
    from ctxgauge.suites.cases._importers import read_rankings
    from ctxgauge.trec import read_qrels

    judged = read_qrels(qrels)
    rankings = read_rankings(run_file)
    lines = list(config.pass_lines)
    # External rankings are scored as given, whatever their length: only the cutoffs need checking.
    _check(CasesConfig(ks=config.ks, depth=10**9, resume=config.resume, out=config.out), lines)
    metrics = metric_names(config.ks, extra=[line.metric for line in lines])
    spec = {"source": Path(qrels).name, "run": Path(run_file).name,
            "engine": None, "ks": list(config.ks), "seed": config.seed, "metrics": metrics,
            "pass": {line.metric: line.value for line in lines}}
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
            unit = {"id": qid, "status": "ok", "reason": None, "expected": sorted(relevant),
                    "coverage_gap": [], "known_gap": False, "ranked": qid in rankings,
                    "figures": score(ranking, Labels(relevant), metrics),
                    "ranking": [{"path": p, "score": None} for p in ranking]}
            units.append(run.done.get(qid) or _record(run, unit))
        if not units:
            raise UserError(f"{Path(qrels).name}: no query has a relevant file (relevance > 0)")
        return _finish(run, units, metrics, lines, config.seed, config.trec, ["external"])
