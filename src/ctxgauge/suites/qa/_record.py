"""Phase 4 of the qa pipeline, and every file a qa run writes: answers and transcripts as they land, then
the figures derived from the units (each repetition's record.json and verdicts.json, run.json's results).


    <run dir>/
      run.json                          spec, provenance, results {summary, questions, runs, trust, skipped,
                                        comparisons, unfinished, adjudications, identity}
      units.jsonl                       one line per arm x repetition x question: answer status, verdict, figures
      adjudications.jsonl               human verdicts (`qa adjudicate`), one a line, in the order made
      arms/<arm>/rep<NN>/answers/<qid>.md   the answer exactly as the judge saw it
      arms/<arm>/rep<NN>/transcript/<qid>.jsonl   the unit's transcript (`_protocols.TRANSCRIPT_EVENTS`)
      arms/<arm>/rep<NN>/record.json    identity, provenance, validity, economics, scoring, transcript, files
      arms/<arm>/rep<NN>/verdicts.json  {verdicts: one per question, gaps included, score: the assembled scoring}

Fields of a unit (units.jsonl):
    id            <arm slug>/rep<NN>/<qid>
    status        ok | failed (a gap: provider outage, harness or engine failure; --resume retries it) | skipped
    reason        why it failed or was skipped
    arm, rep, qid the arm spec string, the repetition (1-based), the question
    answer_status ok | infra | skipped (the answer side alone)
    answer_file   the banked answer, relative to the run directory (only for answered units)
    answer_text_len  characters in the answer (an empty answer is a zero in the trust gate)
    verdict       pass/fail: {qid, result, tier, reason, facets, judge, transport, judged_at, gold_rev, attempts,
                  scorer, judge_tokens_*}; rubric: {qid, result, grounded, scores, aggregate, reason, judge,
                  judge_tokens_*}. A human adjudication replaces it in every figure (tier `human`, the
                  judge's kept under `judge_verdict`); units.jsonl keeps the judge's.
    transcript_file  the unit's transcript, relative to the run directory
    scoring       pass-fail | rubric
    figures       tokens_input, tokens_output, tokens_cache_read, tokens_cache_write (the answer's four
                  columns; a cached answer reports the tokens it cost when made, so figures repeat),
                  llm_calls, cache_hits, tool_calls {tool: n}, retrieved (paths the engine returned),
                  in_context (paths that fitted the budget), seconds, cost_usd (estimate, or the harness's
                  report), token_source (provider | harness | null: nobody counted, the zeros are no measurement);
                  context arms also context_tokens (the packed context's tokens, o200k_base, counted by
                  ctxgauge: a whole-battery sheet's on its first question) and context_ran_out (the ranking
                  ran out before the budget did)

record.json (one per arm x repetition: Corograph's run) holds identity (battery, model, judge, protocol as
`exam`, arm, `family` (its kind), engine and its identity, repetition, denominator, repository, commit,
scorer, rubric, `run_key`), provenance (ctxgauge version, machine, capture time, the lanes: answer model,
judge, engine, scorer), validity ({ok, reason: run_ok | did-not-finish | skipped, detail}), economics (the
four columns summed with their token_source, cost with its basis, seconds, calls, cache hits, tool calls
by tool and by class, index adoption, the judge's tokens, per-question rows; a context arm's also its packed
context tokens), scoring (total over
denominator, mean score, by difficulty, tier census, scorer versions, adjudications, results, adjudicate
and infra lists; total is null unless the run finished and every answer was decided), transcript (lane,
per-unit file and event count) and files (SHA-256 of every other file of the repetition).
"""

from __future__ import annotations

import json
from pathlib import Path

from ctxgauge import __version__
from ctxgauge._io import write_json_atomic, write_text_atomic
from ctxgauge.records import RunDir, Unit, hash_files, machine, outcome_of, utc_now
from ctxgauge.suites.qa.arms._arms import parse_arm
from ctxgauge.results import QAResults
from ctxgauge.suites.qa._config import QAConfig
from ctxgauge.suites.qa.judging._grounding import grounding_record
from ctxgauge.suites.qa._plan import Plan
from ctxgauge.suites.qa.arms._protocols import Answer
from ctxgauge.suites.qa._summary import adjudicated, all_verdicts, read_adjudications, run_record, summarize


def finish_run(run: RunDir, p: Plan, cfg: QAConfig, rows: list[dict]) -> dict:
    """Phase 4: the per-run records, the summary and the trust gate, derived from the units; then finish."""
    questions = p.source.questions
    evidence = {q.qid: p.battery.gold[q.qid].evidence_files for q in questions} if p.battery else {}
    units = [u.to_json() for u in run.units()]
    baseline = str(parse_arm(cfg.baseline_arm)) if cfg.baseline_arm else None
    results = derive(run.path, rows, cfg.repeat, units, questions, evidence, p.identity, p.notes, baseline)
    if p.battery is None:
        results["grounding"] = grounding_record(p.grounding, from_topics=cfg.grounded_from_topics)
    typed = QAResults.from_json(results, str(run.path), "results")  # the one model every reader reads
    gaps = len((typed.unfinished or {}).get("gaps") or ())
    # A gap (an outage, a failed engine) leaves the run unfinished: published with its results, but marked
    # error so `--resume` can fill it, and never read as a finished score.
    return run.finish("error" if gaps else "success", results=typed.to_json(), headline=headline(results, p.arms),
                      error=f"{gaps} unit(s) failed (provider outage or engine failure); "
                            "run again with --resume to fill the gaps" if gaps else None)


def headline(results: dict, arms: list) -> str:
    """The runs list's one line: each arm's accuracy (`-` where not measured), in the order given."""
    summary = results.get("summary") or {}
    parts = []
    for arm in (str(a) for a in arms):
        if arm in summary:
            acc = summary[arm].get("accuracy")
            parts.append(f"{arm} {'-' if acc is None else f'{100 * acc:.1f}%'}")
    return ", ".join(parts)


def derive(run_path: Path, rows: list[dict], repeat: int, units: list[dict], questions, evidence: dict,
           identity: dict, notes: list[str], baseline: str | None = None) -> dict:
    """Every derived file and figure of a run from its units and its human adjudications (which outrank
    the judge): each repetition's record.json and verdicts.json, and the results run.json holds."""
    adjudications = read_adjudications(run_path)
    units = adjudicated(units, adjudications)
    results = summarize(rows, repeat, units, questions, evidence, identity, baseline)
    by_arm = {a["arm"]: a for a in rows}
    for r in results["runs"]:
        mine = [u for u in units if u.get("arm") == r["arm"] and u.get("rep") == r["repetition"]]
        write_run_record(run_path / r["path"], by_arm[r["arm"]], r["repetition"], mine, questions, identity)
    results.update(arms=rows, notes=notes, identity=identity, unfinished=unfinished_record(units, results["runs"]),
                   adjudications=adjudications)
    return results


def unfinished_record(units: list[dict], runs: list[dict]) -> dict | None:
    """What keeps a run from being finished, or None when it measured what it was asked to: the one
    outcome rule of every suite (`records.outcome`, the rule behind exit codes 6 and 7) on the units, with
    which units are gaps (failed: an outage, a failed harness or engine; `--resume` retries them) and which
    repetitions did not finish."""
    verdict = outcome_of(Unit.from_json(u) for u in units)
    if verdict.exit_code is None:
        return None
    gaps = sorted(u["id"] for u in units if u.get("status") == "failed")
    dnf = [f"{r['arm']} rep {r['repetition']}" for r in runs if (r.get("validity") or {}).get("reason") == "did-not-finish"]
    return {"gaps": gaps, "did_not_finish": dnf, "nothing_measured": verdict.state == "nothing-measured",
            "message": verdict.message}


def write_run_record(path: Path, row: dict, rep: int, units: list[dict], questions, identity: dict) -> dict:
    """`record.json` and `verdicts.json` (a verdict for every question, gaps included, and the assembled
    score) of one arm x repetition."""
    rec = run_record(row, rep, units, questions, {**identity, "arm": row["arm"], "engine": row.get("engine"),
                                                  "engine_identity": row.get("engine_identity")})
    write_json_atomic(path / "verdicts.json", {"verdicts": all_verdicts(units, questions), "score": rec["scoring"]})
    rec["provenance"] = {"ctxgauge": __version__, "machine": machine(), "captured_at": utc_now(),
                         "lanes": {"answer": identity.get("model"), "judge": identity.get("judge"),
                                   "engine": row.get("engine_identity"), "scorer": identity.get("scorer")}}
    rec["transcript"] = {"lane": row.get("kind"), "units": {
        u["qid"]: {"file": u["transcript_file"], "events": _count_lines(path.parents[2] / u["transcript_file"])}
        for u in sorted(units, key=lambda u: u["qid"]) if u.get("transcript_file")}}
    rec["files"] = {name: digest for name, digest in hash_files(path).items() if name != "record.json"}
    write_json_atomic(path / "record.json", rec)
    return rec


def _count_lines(p: Path) -> int:
    return sum(1 for _ in p.open(encoding="utf-8")) if p.is_file() else 0


def write_transcript(run_path: Path, rep_dir: str, a: Answer, name: str) -> str | None:
    """`transcript/<name>.jsonl` of one unit (see TRANSCRIPT_EVENTS; `name` from question_files); its path
    relative to the run."""
    if not a.transcript:
        return None
    rel = f"{rep_dir}/transcript/{name}.jsonl"
    write_text_atomic(run_path / rel, "".join(json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n"
                                              for e in a.transcript))
    return rel


def answer_md(arm: str, rep: int, q, answer: Answer, model: str | None) -> str:
    """An answer file: a one-line header (question, arm, repetition, model, status), then the answer as
    the judge saw it."""
    head = f"<!-- qid: {q.qid} | arm: {arm} | repetition: {rep} | model: {model or '-'} | status: {answer.status} -->"
    return f"{head}\n\n{answer.text.strip()}\n"
