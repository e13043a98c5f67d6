"""`qa adjudicate RUN QID --verdict pass|fail --why TEXT`: a human's verdict on one answer.

A human outranks the judge: the adjudicated verdict replaces the judge's in every figure (tier `human`),
while the judge's stays beside it (`judge_verdict`) and in units.jsonl, so nothing is lost. Each
adjudication is one line of `adjudications.jsonl` in the run directory, with who made it and when:

    {unit, qid, arm, rep, verdict, why, by, at, judge_result}

Adjudications are listed apart in each repetition's `scoring.adjudications`, and in the run's results.
The per-repetition records, the summary and run.json's file hashes are derived again, so an export of the
run stays a valid hash chain. A later adjudication of the same unit wins; the earlier line stays.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ctxgauge._io import write_json_atomic
from ctxgauge.errors import UserError
from ctxgauge.records import RUN_FILE, hash_files, lock_dir, read_run, read_units, utc_now
from ctxgauge.results import QAResults, QASpec
from ctxgauge.results._qa import Adjudication, QAAdjudicated
from ctxgauge.report import read_checked
from ctxgauge.suites.qa.sources._battery import Battery
from ctxgauge.results._qa_files import QAContext
from ctxgauge.suites.qa._rescore import find_source
from ctxgauge.suites.qa._record import derive
from ctxgauge.suites.qa._summary import ADJUDICATIONS_FILE

VERDICTS = ("pass", "fail")


def adjudicate(run_dir: str | Path, qid: str, verdict: str, why: str, *, arm: str | None = None,
               rep: int | None = None, by: str | None = None) -> QAAdjudicated:
    """Record a human verdict on the answer(s) to `qid` (of one arm and repetition when given) and derive
    the run's figures again. Returns the verdicts recorded and the arms' figures (`QAAdjudicated`).

    It writes the run directory, so it holds the run's writer lock throughout (`records.lock_dir`): never
    while a `qa run --resume` or another adjudication writes it."""
    run_dir = Path(run_dir)
    read_run(run_dir)  # not a run: refused before a lock file lands in someone's folder
    with lock_dir(run_dir):
        return _adjudicate(run_dir, qid, verdict, why, arm, rep, by)


def _adjudicate(run_dir: Path, qid: str, verdict: str, why: str, arm: str | None, rep: int | None,
                by: str | None) -> QAAdjudicated:
    ref = read_checked(run_dir)
    record = ref.record
    if record.suite != "qa":
        raise UserError(f"{run_dir}: a {record.suite} run, not a qa run")
    if verdict not in VERDICTS:
        raise UserError(f"--verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
    if not why.strip():
        raise UserError("--why must say why (one line a reader can check against the answer)")
    if record.status == "started" or not record.results:
        raise UserError(f"{run_dir}: the run has no results yet ({record.status}); finish or resume it first")
    units = [u for u in (x.to_json() for x in ref.units()) if u.get("qid") == qid]
    if not units:
        raise UserError(f"{run_dir}: no question {qid!r} in this run")
    chosen = [u for u in units if (arm is None or u.get("arm") == arm) and (rep is None or u.get("rep") == rep)
              and u.get("status") == "ok" and u.get("answer_status") == "ok"]
    if not chosen:
        raise UserError(f"{run_dir}: no answered unit of {qid!r} matches (arm {arm or 'any'}, repetition "
                        f"{rep or 'any'}); answered units: {', '.join(u['id'] for u in units if u.get('answer_status') == 'ok') or 'none'}")
    if len({u["arm"] for u in chosen}) > 1:
        raise UserError(f"{qid} was answered by several arms ({', '.join(sorted({u['arm'] for u in chosen}))}); "
                        "give --arm")
    who = by or os.environ.get("CTXGAUGE_ADJUDICATOR") or os.environ.get("USER") or "unknown"
    at = utc_now()
    new = [{"unit": u["id"], "qid": qid, "arm": u["arm"], "rep": u["rep"], "verdict": verdict,
            "why": " ".join(why.split()), "by": who, "at": at,
            "judge_result": (u.get("verdict") or {}).get("result")} for u in sorted(chosen, key=lambda u: u["id"])]
    with open(run_dir / ADJUDICATIONS_FILE, "a", encoding="utf-8") as fh:
        for a in new:
            fh.write(json.dumps(a, sort_keys=True, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    rederived = _rederive(run_dir, record)
    record.results = rederived.to_json()
    record.files = hash_files(run_dir)
    write_json_atomic(run_dir / RUN_FILE, record.to_json())
    where = str(run_dir / ADJUDICATIONS_FILE)
    return QAAdjudicated(adjudications=[Adjudication.from_json(a, where, "adjudication") for a in new],
                         summary=rederived.summary)


def _rederive(run_dir: Path, record) -> QAResults:
    where = str(run_dir / RUN_FILE)
    spec = QASpec.from_json(record.spec, where, "spec")
    results = QAResults.from_json(record.results, where, "results")
    source = find_source(run_dir, QAContext.from_json(record.context or {}, where, "context"), spec)
    battery = source if isinstance(source, Battery) else None
    evidence = {q.qid: battery.gold[q.qid].evidence_files for q in source.questions} if battery else {}
    identity = results.identity or {"battery": source.identity(), "protocol": spec.protocol}
    units = [u.to_json() for u in read_units(run_dir)]
    baseline = results.comparisons.baseline if results.comparisons is not None else None
    out = derive(run_dir, [a.to_json() for a in results.arms], int(spec.repeat or 1), units, source.questions,
                 evidence, identity, results.notes, baseline)
    typed = QAResults.from_json(out, where, "results")
    # Which questions were graded against ground truth: a fact of the run, kept.
    typed.grounding = results.grounding
    return typed
