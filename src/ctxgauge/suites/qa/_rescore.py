"""`qa rescore RUN`: re-judge the banked answers of a run without asking the answer model again.

Scores are derived state: the answers (answers/<qid>.md) are the evidence, verdicts are recomputed from
them with the run's judge (or another one) and compared with the recorded ones. With the same judge and
the response cache the rescore is free and must reproduce the record exactly; a difference is listed.
The run directory is never modified (its run.json hashes every file); `--out FILE` saves the rescore.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

from ctxgauge.errors import UserError
from ctxgauge.records import check_not_written
from ctxgauge.report import read_checked
from ctxgauge.results import QAResults, QASpec, Verdict
from ctxgauge.results._qa import QARescore, VerdictChange
from ctxgauge.results._qa_files import QAContext, SourceIdentity
from ctxgauge.suites.qa.arms._arms import parse_arm
from ctxgauge.suites.qa.sources._battery import Battery
from ctxgauge.suites.qa.judging._grounding import plan_grounding
from ctxgauge.suites.qa.judging._panel import Panel
from ctxgauge.suites.qa.judging._rubric import RubricJudge
from ctxgauge.suites.qa._answer import score_text
from ctxgauge.suites.qa._config import SUITE, QAConfig
from ctxgauge.suites.qa._plan import client_for, load_source
from ctxgauge.suites.qa.judging._scoring import SCORER_V1, Judge, check_scorer
from ctxgauge.suites.qa._summary import adjudicated, read_adjudications, summarize

_HEADER = re.compile(r"\A<!--.*?-->\n\n", re.S)


def read_answer(run_dir: Path, answer_file: str) -> str:
    """The banked answer text, without the provenance comment the file starts with."""
    path = run_dir / answer_file
    if not path.is_file():
        raise UserError(f"{path}: banked answer missing; the run directory is incomplete")
    return _HEADER.sub("", path.read_text(encoding="utf-8"), count=1).rstrip("\n")


def find_source(run_dir: Path, context: QAContext, spec: QASpec, override: str | Path | None = None):
    """The run's battery or question set, wherever the rescore is run from: `override` if given, else the
    path recorded relative to the run directory, else the source as the run was given it (a bundled name,
    an absolute path, or a path from the directory the run was started in). The first whose hash matches
    the recorded one wins; a changed battery is refused, since another key reproduces nothing."""
    recorded = context.source_identity.hash if context.source_identity is not None else None
    given = context.source or spec.source or ""
    tried, changed = [], None
    candidates = [str(override)] if override is not None else [
        *([str(run_dir / context.source_from_run)] if context.source_from_run else []), given]
    for cand in candidates:
        try:
            source = load_source(cand)
        except UserError as exc:
            tried.append(f"{cand} ({exc})")
            continue
        found = SourceIdentity.from_json(source.identity(), cand, "identity").hash
        if not recorded or found == recorded:
            return source
        changed = changed or (cand, found)
    if changed:
        raise UserError(f"{run_dir}: the battery at {changed[0]} changed since the run (hash {changed[1]} != "
                        f"{recorded}); rescoring against another key would not reproduce anything")
    raise UserError(f"{run_dir}: cannot find the run's battery {given!r} (tried {'; '.join(tried)}); "
                    "give --battery PATH")


def rescore_run(run_dir: str | Path, *, judge: str | None = None, battery: str | Path | None = None,
                scorer: str | None = None, judge_provider: str | None = None,
                judge_base_url: str | None = None, cache_dir: Path | None = None, use_cache: bool = True,
                timeout: float = 120.0, retries: int = 3, backoff: float = 1.0,
                env: Mapping[str, str] | None = None, sleep=None) -> QARescore:
    """Re-judge every banked answer; returns the recomputed results, the verdicts that changed and whether
    the record is reproduced (`QARescore`; its `to_json()` is `qa rescore --out`'s file)."""
    run_dir = Path(run_dir)
    # A run another process is writing is not rescored (its units are still landing); the rescore itself
    # writes nothing into the run directory, so it takes no lock there.
    check_not_written(run_dir)
    ref = read_checked(run_dir)
    record = ref.record
    if record.suite != SUITE:
        raise UserError(f"{run_dir}: a {record.suite} run, not a qa run")
    if not record.results:
        raise UserError(f"{run_dir}: the run has no results ({record.status}); resume it first")
    spec, results = ref.spec, ref.results  # read through the suite's typed classes (`read_checked`)
    source = find_source(run_dir, QAContext.from_json(record.context or {}, str(run_dir / "run.json"), "context"),
                         spec, battery)
    judge_model = judge or spec.judge
    if not judge_model:
        raise UserError(f"{run_dir}: the run had no judge; give --judge MODEL to rescore it")
    cfg = QAConfig(source=spec.source or "", arms=[], cache_dir=cache_dir, use_cache=use_cache, timeout=timeout,
                   retries=retries, backoff=backoff)
    client, why = client_for(judge_model, judge_provider or spec.judge_provider or spec.provider,
                          judge_base_url, cfg, env, sleep)
    if client is None:
        raise UserError(f"judge {judge_model!r} is not available: {why}")
    scorer = check_scorer(scorer or spec.scorer or SCORER_V1)  # runs before scorer versions were v1
    battery = source if isinstance(source, Battery) else None
    judge_obj = Judge(client, battery, scorer=scorer) if battery else None
    rubric = RubricJudge(client, panel=Panel(client) if spec.panel else None) if not battery else None
    by_qid = {q.qid: q for q in source.questions}
    grounding = None if battery else plan_grounding(source, from_topics=bool(spec.grounded_from_topics))
    units, changed = [], []
    try:
        for unit in ref.units():
            if unit.answer_status == "ok" and unit.answer_file:
                text = read_answer(run_dir, unit.answer_file)
                got = score_text(by_qid[unit.qid], text, battery, source, judge_obj, rubric, scorer, grounding)
                old, new = unit.verdict or Verdict(), Verdict.from_json(got, "rescore", "verdict")
                if (old.result, old.tier, old.aggregate) != (new.result, new.tier, new.aggregate):
                    changed.append(VerdictChange(unit=unit.id, recorded=old.result, rescored=new.result,
                                                 reason=new.reason))
                units.append({**unit.to_json(), "verdict": got})  # the writer's JSON form, as `summarize` reads it
                continue
            units.append(unit.to_json())
    finally:
        client.close()
    evidence = {q.qid: battery.gold[q.qid].evidence_files for q in source.questions} if battery else {}
    identity = {"battery": source.identity(), "protocol": spec.protocol, "model": {"model": spec.model},
                "judge": client.identity()}
    units = adjudicated(units, read_adjudications(run_dir))  # a human's verdict outranks any judge's
    baseline = str(parse_arm(spec.baseline_arm)) if spec.baseline_arm else None
    new_results = summarize([a.to_json() for a in results.arms], int(spec.repeat or 1), units, source.questions,
                            evidence, identity, baseline)
    new = QAResults.from_json(new_results, "rescore", "results")
    same = not changed and all(
        a in results.summary and results.summary[a].passed == s.passed and results.summary[a].accuracy == s.accuracy
        for a, s in new.summary.items())
    return QARescore(run_dir=str(run_dir), judge=f"{client.kind}:{client.model}", reproduced=same,
                     changed=changed, ledger=client.ledger.to_dict(), results=new)
