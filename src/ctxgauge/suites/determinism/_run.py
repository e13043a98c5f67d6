"""The determinism pipeline: plan, then per engine base build, families, fingerprint, record.

Per engine, in this order (each family is one unit `<engine>/<family>` of the run record, written as soon
as it finishes, so an interrupted run resumes at the first family not recorded):

1. base build: a cold build of the corpus with a fresh engine object, kept for the query work;
2. rebuild: R - 1 more cold builds, each with its own fresh engine object; units of the run's executor,
   handed to it before the base build, so with `local:N` they run in worker processes beside steps 1-4
   and the family is recorded after drift (cold: no work cache is read or written, see `Workspace.build`)
3. query: T trials per query on the base build (the engine object of the base build);
4. drift: a noisy corpus built cold with a fresh engine object, its answers set beside the base build's;
5. update: build at revision A, update to the measured revision, with a fresh engine object (the work
   cache allowed, as for any incremental index);
6. the fingerprint (base build's artifact hash, first-trial rankings) is written;
7. cross-machine: the fingerprint compared with those given with `--against`.

A family not requested is recorded as not measured (never as a pass); an unavailable engine is recorded
as skipped with the reason.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxgauge.engines import call_engine
from ctxgauge.engines import engine_available, get_engine
from ctxgauge.errors import EngineError, UserError
from ctxgauge.executors import Executor, InlineExecutor, PoolExecutor, parse_executor
from ctxgauge.records import RunDir, Subject, corpus_label, default_run_dir
from ctxgauge.results import DeterminismResults, DeterminismSpec

from ._config import DeterminismConfig
from ._cross_machine import run_cross_machine
from ._drift import run_drift
from ._fingerprint import RUN_NONCE, build_fingerprint, fingerprint_run_id, new_run_nonce, save_fingerprint
from ._levels import Flag, degenerate_flags
from ._plan import Plan, make_plan
from ._query import run_query
from ._rebuild import run_rebuild, start_rebuilds, warm
from ._results import ENGINE_FAILED, MEASURED, SKIPPED, DeterminismResult, EngineResult
from ._update import run_update
from ctxgauge.suites._progress import Progress, Steps

from ._work import FAILED, FAMILIES, NOT_MEASURED, Answer, FamilyResult, Workspace, scratch_dir

__all__ = ["SUITE", "SUITE_VERSION", "run_determinism"]

SUITE = "determinism"
SUITE_VERSION = 2
"""The suite's own version (run records of dc65eaf and before carried none: read as 1). 2: CTL 3 needs
the answers' spans identical too, not only their files (`span_exact_match_rate` 1.0), and built-in
engines hand spans over by default; a level of version 1 is not a level of version 2."""


def _steps(plan: Plan) -> int:
    c, q = plan.config, len(plan.queries)
    per_engine = 1 + (c.rebuilds - 1 if "rebuild" in c.families else 0)
    per_engine += q * c.trials if "query" in c.families else q
    per_engine += len(c.noise) * q if "drift" in c.families else 0
    per_engine += 1 if "update" in c.families else 0
    return per_engine * len(plan.engines)


def _builders(spec: str) -> Executor:
    """Where builds 2..R run: `local:N` is N processes, this one (base build, queries, drift) and N - 1
    workers for the rebuilds; `local` (or `local:1`) this process alone."""
    processes = parse_executor(spec)[1]
    return PoolExecutor(processes - 1) if processes > 1 else InlineExecutor()


class _EngineRun:
    """One engine's pass through the pipeline, recording each family as a unit."""

    def __init__(self, plan: Plan, spec: str, run: RunDir, reporter: Steps,
                 factory: Callable[[str], Any], scratch: Path, executor: Executor):
        self.plan, self.spec, self.run, self.executor = plan, spec, run, executor
        self.ws = Workspace(spec, plan.corpus, plan.queries, plan.config.k, scratch, factory, reporter.step)
        self.result = EngineResult(engine=spec, status=MEASURED)

    def _uid(self, family: str) -> str:
        return f"{self.spec}/{family}"

    def _reused(self, family: str) -> FamilyResult | None:
        unit = self.run.done.get(self._uid(family))
        if unit is None:
            return None
        status = NOT_MEASURED if unit["status"] == "skipped" else unit["status"]
        return FamilyResult(family, status, unit.get("reason"), unit.get("figures") or {})

    def _record(self, fam: FamilyResult, seconds: float, **extra: Any) -> FamilyResult:
        self.result.families[fam.family] = fam
        self.run.add_unit(self._uid(fam.family), fam.unit_status, figures=fam.figures, reason=fam.reason,
                          timing={"seconds": round(seconds, 3)}, engine=self.spec, family=fam.family, **extra)
        return fam

    def _family(self, family: str, work: Callable[[], FamilyResult], **extra: Any) -> FamilyResult:
        reused = self._reused(family)
        if reused is not None:
            self.result.families[family] = reused
            return reused
        if family not in self.plan.config.families:
            return self._record(FamilyResult(family, NOT_MEASURED, "not requested (--families)"), 0.0, **extra)
        t0 = time.perf_counter()
        fam = work()
        return self._record(fam, time.perf_counter() - t0, **extra)

    def _all(self, status: str, reason: str) -> EngineResult:
        for family in FAMILIES:
            if family not in self.result.families:
                self._record(FamilyResult(family, status, reason), 0.0)
        return self.result

    def _from_record(self) -> EngineResult | None:
        # Every family recorded in an earlier attempt: nothing to build again.
        reused = {f: self._reused(f) for f in FAMILIES}
        if any(fam is None for fam in reused.values()):
            return None
        unit = self.run.done[self._uid("cross-machine")]
        self.result.families = {f: fam for f, fam in reused.items() if fam is not None}
        self.result.identity = unit.get("identity")
        self.result.flags = [Flag(f["flag"], f["reason"]) for f in unit.get("flags", [])]
        self.result.status = unit.get("engine_status", MEASURED)
        self.result.reason = unit.get("engine_reason")
        record = unit.get("fingerprint")
        if record:
            self.result.fingerprint_record = record
            self.result.fingerprint_path = self._show(self.run.path / record)
        return self.result

    def _show(self, recorded: Path) -> Path:
        target = self.plan.config.fingerprint_dir
        if target is None:
            return recorded
        target.mkdir(parents=True, exist_ok=True)
        (target / recorded.name).write_bytes(recorded.read_bytes())
        return target / recorded.name

    def measure(self) -> EngineResult:
        """Run every family for this engine (or take them from the record when resuming)."""
        done = self._from_record()
        if done is not None:
            return done
        ws = self.ws
        try:
            engine = ws.new_engine()
        except UserError as exc:
            return self._skip(str(exc))
        ok, why = engine_available(engine)
        if not ok:
            return self._skip(why or "not available")
        config = self.plan.config
        # An engine whose out directory holds nothing (an MCP server without out=): hashing the empty
        # directory would pass Rebuild and Update Identity on no evidence.
        no_artifact = getattr(engine, "no_artifact", None)
        rebuilding = "rebuild" in config.families and self._reused("rebuild") is None and not no_artifact
        # handed over before the base build: a pool builds them while this process builds the base
        started = start_rebuilds(ws, self.executor, config.rebuilds) if rebuilding else iter(())
        try:
            self.result.identity = call_engine("identity", engine, engine.identity)
            ws.progress(f"{self.spec}: base build", 0)
            base_dir, base_hash = ws.build(engine, ws.corpus, "base")
            ws.progress(f"{self.spec}: base build", 1)
        except EngineError as exc:
            self.result.status, self.result.reason = ENGINE_FAILED, f"base build failed: {exc}"
            return self._all(FAILED, self.result.reason)

        def rebuild() -> None:
            self._family("rebuild", lambda: FamilyResult("rebuild", NOT_MEASURED, no_artifact) if no_artifact
                         else run_rebuild(ws, base_hash, config.rebuilds, started))

        # In this process the rebuilds run when collected, right after the base build; in worker processes
        # they are collected after query and drift, which this process does while they build.
        beside = not isinstance(self.executor, InlineExecutor)
        if not beside:
            rebuild()
        rankings: dict[str, list[str]] = {}
        answers: dict[str, Answer] = {}

        def query() -> FamilyResult:
            fam, first, first_answers = run_query(ws, engine, base_dir, config.trials)
            rankings.update(first)
            answers.update(first_answers)
            return fam

        self._family("query", query)
        if len(rankings) < len(ws.queries):
            # The query family did not run now (not requested, resumed, or failed part-way): one pass on the
            # base build gives the rankings the fingerprint and the degenerate check need.
            try:
                answers = ws.answer_all(engine, base_dir)
                rankings = {q: [path for path, _ in a] for q, a in answers.items()}
                for _ in ws.queries:
                    ws.progress(f"{self.spec}: base queries", 1)
            except EngineError as exc:
                self.result.status, self.result.reason = ENGINE_FAILED, f"base queries failed: {exc}"
                return self._all(FAILED, self.result.reason)
        self.result.flags = degenerate_flags(rankings)

        self._family("drift", lambda: run_drift(ws, engine, base_dir, rankings, config.noise, config.noise_dir))
        if beside:
            rebuild()
        self._family("update", lambda: FamilyResult("update", NOT_MEASURED, no_artifact) if no_artifact
                     else run_update(ws, self.plan.old_corpus, self.plan.update_why_not, base_hash, rankings,
                                     answers))
        fp = build_fingerprint(getattr(engine, "name", self.spec), self.result.identity, ws.corpus, config.k,
                               base_hash, rankings, ws.queries,
                               {"suite": SUITE, "runId": fingerprint_run_id(self.run.record)}, answers)
        record, shown = save_fingerprint(fp, self.plan.fingerprint_names[self.spec], self.run.path,
                                        config.fingerprint_dir)
        self.result.fingerprint_record, self.result.fingerprint_path = record, shown
        self._family("cross-machine",
                     lambda: run_cross_machine(fp.adapter, self.run.path / record, self.plan.against),
                     **self._summary())
        return self.result

    def _summary(self) -> dict[str, Any]:
        # Stored on the last unit, so a resumed run can rebuild this engine's result without building.
        return {"identity": self.result.identity, "flags": [f.to_json() for f in self.result.flags],
                "fingerprint": self.result.fingerprint_record, "engine_status": self.result.status,
                "engine_reason": self.result.reason}

    def _skip(self, why: str) -> EngineResult:
        self.result.status, self.result.reason = SKIPPED, why
        for family in FAMILIES:
            if family not in self.result.families:
                self._record(FamilyResult(family, NOT_MEASURED, f"engine unavailable: {why}"), 0.0,
                             **(self._summary() if family == "cross-machine" else {}))
        return self.result

    def close(self) -> None:
        self.ws.close()


def run_determinism(config: DeterminismConfig, *, progress: Progress | None = None,
                    factory: Callable[[str], Any] = get_engine) -> DeterminismResult:
    """Run the determinism suite and record it; return the results.

    `factory` makes an engine object from a spec string (default: the registry); tests and Python callers
    may pass their own. Raises UserError for options the user must mend; an engine's failure is recorded
    in its units and never raised.
    """
    reporter = Steps(progress)
    config.validate()
    with _builders(config.executor) as executor:
        if "rebuild" in config.families:
            # A worker takes about a second to start: a pool starts its workers now, beside the corpus read
            # and the base build (this process's executor runs nothing until parts are read: these never).
            executor.map(warm, [(factory, e) for e in config.engines for _ in range(executor.workers)])
        plan = make_plan(config, factory)
        try:
            return _measure(plan, config, reporter, factory, executor)
        finally:
            plan.close()


def _measure(plan: Plan, config: DeterminismConfig, reporter: Steps, factory: Callable[[str], Any],
             executor: Executor) -> DeterminismResult:
    run_path = Path(config.out) if config.out is not None else default_run_dir(SUITE)
    spec = DeterminismSpec.from_json(plan.record_spec(), "determinism", "spec").to_json()
    subject = Subject(dataset=corpus_label(spec["corpus"]), systems=list(plan.engines))
    with RunDir.start(run_path, suite=SUITE, suite_version=SUITE_VERSION, subject=subject, spec=spec,
                      resume=config.resume, context={"corpus": plan.corpus.summary(), RUN_NONCE: new_run_nonce()}) as run:
        reporter.total = _steps(plan)
        engines: dict[str, EngineResult] = {}
        with scratch_dir(Path(tempfile.mkdtemp(prefix="ctxgauge-determinism-"))) as scratch:
            for i, spec in enumerate(plan.engines):
                one = _EngineRun(plan, spec, run, reporter, factory, scratch / f"engine-{i}", executor)
                try:
                    engines[spec] = one.measure()
                finally:
                    one.close()
        result = DeterminismResult(run.path, plan.corpus.summary(), plan.queries, config.k, engines)
        # Written through the typed model every reader parses into (`ctxgauge.results.DeterminismResults`).
        typed = DeterminismResults.from_json(result.to_json(record=True), str(run.path), "results")
        run.finish("success", results=typed.to_json(), headline=", ".join(
            f"{name} {typed.engines[name].label}" for name in plan.engines if name in typed.engines))
    return result
