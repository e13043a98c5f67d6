"""The qa pipeline, in named phases: plan (source, arms, providers), build (engines), answer (protocols),
score (tier 1, judge or rubric), record (units as they finish, then per-run records and the summary).

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
                  report), token_source (provider | harness | null: nobody counted, the zeros are no measurement)

record.json (one per arm x repetition: Corograph's run) holds identity (battery, model, judge, protocol as
`exam`, arm, `family` (its kind), engine and its identity, repetition, denominator, repository, commit,
scorer, rubric, `run_key`), provenance (ctxgauge version, machine, capture time, the lanes: answer model,
judge, engine, scorer), validity ({ok, reason: run_ok | did-not-finish | skipped, detail}), economics (the
four columns summed with their token_source, cost with its basis, seconds, calls, cache hits, tool calls
by tool and by class, index adoption, the judge's tokens, per-question rows), scoring (total over
denominator, mean score, by difficulty, tier census, scorer versions, adjudications, results, adjudicate
and infra lists; total is null unless the run finished and every answer was decided), transcript (lane,
per-unit file and event count) and files (SHA-256 of every other file of the repetition).

Arms that need a model are skipped, with the reason, when none is configured; the context arm still
measures retrieval. `--resume` redoes failed units; session protocols replay the whole session, which
the response cache makes free for the turns already answered.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from ctxgauge import __version__
from ctxgauge._io import safe_file_names, write_json_atomic, write_text_atomic
from ctxgauge.corpora import open_corpus
from ctxgauge.errors import EngineError, UserError
from ctxgauge.providers import Client, ProviderConfig, make_client, provider_status
from ctxgauge.records import RunDir, Subject, default_run_dir, hash_files, machine, utc_now
from ctxgauge.suites.qa._arms import ArmSpec, EngineHandle, parse_arm
from ctxgauge.suites.qa._battery import Battery, load_battery, resolve_battery_dir
from ctxgauge.suites.qa._grounding import Grounding, grounding_record, plan_grounding
from ctxgauge.suites.qa._prompts import PROMPT_VERSION
from ctxgauge.suites.qa._panel import Panel
from ctxgauge.suites.qa._protocols import PROTOCOLS, Answer, ArmContext, retrieve_only, run_protocol
from ctxgauge.suites.qa._questions import QuestionSet, load_question_set
from ctxgauge.suites.qa._rubric import RubricJudge
from ctxgauge.suites.qa._scoring import SCORER_VERSION, Judge, Verdict, check_scorer, score_answer
from ctxgauge.suites.qa._source import open_battery_corpus
from ctxgauge.suites.qa._summary import (
    adjudicated, all_verdicts, read_adjudications, run_record, summarize, unfinished, unit_id,
)

SUITE = "qa"
SUITE_VERSION = 1
"""The suite's own version (an integer; dc65eaf and before wrote the string "1" in each arm's identity)."""


@dataclass
class QAConfig:
    """Every option of `ctxgauge qa run`; the recorded spec is this minus where things live."""

    source: str
    arms: list[str]
    model: str | None = None
    judge: str | None = None
    provider: str | None = None
    base_url: str | None = None
    judge_provider: str | None = None
    judge_base_url: str | None = None
    protocol: str = "zero-shot"
    repeat: int = 1
    out: Path | None = None
    resume: bool = False
    repo: Path | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    timeout: float = 120.0
    retries: int = 3
    backoff: float = 1.0
    token_budget: int = 6000
    max_turns: int = 8
    max_tokens: int = 1024
    command_timeout: float = 600.0
    rates: str | None = None
    scorer: str = SCORER_VERSION
    """The scorer version (SCORERS): ctxgauge-qa-2, or ctxgauge-qa-1 for Corograph's published behaviour."""
    baseline_arm: str | None = None
    """The arm every other is compared with (paired interval, p-value, Cohen's d); default `none`."""
    grounded_from_topics: bool = False
    """Promote curated expected_topics (mean length >= 40 characters) to ground truth (see `_grounding`)."""
    panel: bool = False
    """Question sets: the judge panel (three roles, `_panel`) scores every answer beside the rubric."""
    extra: dict = field(default_factory=dict)

    def spec(self) -> dict:
        """The recorded options: no base URL, cache path or output path (where, not what), never a key."""
        d = asdict(self)
        for k in ("out", "resume", "repo", "cache_dir", "base_url", "judge_base_url", "extra", "use_cache"):
            d.pop(k)
        return d


def load_source(source: str) -> Battery | QuestionSet:
    """A battery directory (or bundled battery name), or a dokimi question-set JSON file."""
    p = Path(source)
    if p.is_file():
        return load_question_set(p)
    resolve_battery_dir(source)
    return load_battery(source)


def source_from_run(given: str, source, run_dir: Path) -> str | None:
    """Where the source lies relative to the run directory (so `qa rescore` finds it from any working
    directory); None for a bundled battery, found by its name wherever ctxgauge is installed."""
    path = Path(getattr(source, "path", None) or given)
    if "/" not in given and not Path(given).exists():
        return None  # a bundled battery's name: recording its install path would pin one machine
    return Path(os.path.relpath(path.resolve(), Path(run_dir).resolve())).as_posix()


def _client(model: str | None, kind: str | None, base_url: str | None, cfg: QAConfig,
            env: Mapping[str, str] | None, sleep) -> tuple[Client | None, str | None]:
    if not model:
        return None, "no model configured (give --model)"
    pc = ProviderConfig(model=model, kind=kind, base_url=base_url, timeout=cfg.timeout, retries=cfg.retries,
                        backoff=cfg.backoff, cache_dir=cfg.cache_dir, use_cache=cfg.use_cache, rates=cfg.rates)
    ok, why = provider_status(pc, env)
    if not ok:
        return None, why
    return make_client(pc, env=env, sleep=sleep), None


def _answer_md(arm: str, rep: int, q, answer: Answer, model: str | None) -> str:
    head = f"<!-- qid: {q.qid} | arm: {arm} | repetition: {rep} | model: {model or '-'} | status: {answer.status} -->"
    return f"{head}\n\n{answer.text.strip()}\n"


@dataclass
class Plan:
    """What `plan` decided: the source, the arms, the clients (None with the reason when unavailable)."""

    source: Battery | QuestionSet
    battery: Battery | None
    scoring: str
    arms: list[ArmSpec]
    client: Client | None
    client_why: str | None
    judge_client: Client | None
    identity: dict
    notes: list[str]
    grounding: dict[str, Grounding] = field(default_factory=dict)
    """A question set's grounding per question (empty for a battery)."""

    def close(self) -> None:
        for c in (self.client, self.judge_client):
            if c is not None:
                c.close()


def plan(cfg: QAConfig, env: Mapping[str, str] | None = None, sleep=None) -> Plan:
    """Phase 1: load the source, parse the arms, check the options, make the clients. Nothing is asked."""
    source = load_source(cfg.source)
    battery = source if isinstance(source, Battery) else None
    if cfg.protocol not in PROTOCOLS:
        raise UserError(f"unknown protocol {cfg.protocol!r} (known: {', '.join(PROTOCOLS)})")
    if cfg.repeat < 1:
        raise UserError("--repeat must be at least 1")
    check_scorer(cfg.scorer)
    question_files(source.questions)  # a question id that would climb out of the run, or collide: refused now
    arms: list[ArmSpec] = list(dict.fromkeys(parse_arm(a) for a in cfg.arms))
    if not arms:
        raise UserError("give at least one --arm (none, context:ENGINE@k, tool:ENGINE, command:CMD)")
    if cfg.baseline_arm is not None and parse_arm(cfg.baseline_arm) not in arms:
        raise UserError(f"--baseline-arm {cfg.baseline_arm!r} is not one of the --arm given "
                        f"({', '.join(str(a) for a in arms)})")
    if cfg.protocol == "multi-turn" and any(a.kind == "command" for a in arms):
        raise UserError("a command arm runs its own sessions: use --protocol zero-shot or whole-battery with it")
    if battery is None and cfg.repo is None and any(a.needs_corpus for a in arms):
        raise UserError("a question set names no repository: give --repo PATH for context, tool and command arms")
    client, client_why = _client(cfg.model, cfg.provider, cfg.base_url, cfg, env, sleep)
    judge_client, judge_why = (None, "no judge configured (give --judge)") if not cfg.judge else _client(
        cfg.judge, cfg.judge_provider or cfg.provider, cfg.judge_base_url or cfg.base_url, cfg, env, sleep)
    notes = list(getattr(source, "notes", []))
    if judge_client is None and (client is not None or any(a.kind == "command" for a in arms)):
        notes.append(f"answers tier 1 cannot pass are not judged: {judge_why}")
    identity = {"battery": source.identity(), "model": client.identity() if client else {"model": cfg.model},
                "judge": judge_client.identity() if judge_client else None, "protocol": cfg.protocol,
                "scorer": cfg.scorer, "rubric": f"{'pass-fail' if battery else 'rubric'}:{PROMPT_VERSION}",
                "suite_version": SUITE_VERSION}
    if cfg.panel and (battery is not None or not cfg.judge):
        raise UserError("--panel scores a question set's answers with the judge model: give a question set and --judge")
    if cfg.grounded_from_topics and battery is not None:
        raise UserError("--grounded-from-topics reads a question set's expected_topics; a battery has gold answers")
    grounding = {} if battery else plan_grounding(source, from_topics=cfg.grounded_from_topics)
    if battery is None:  # every record says which questions were graded against ground truth
        identity["grounding"] = {"from_topics": cfg.grounded_from_topics,
                                 "grounded": [qid for qid, g in grounding.items() if g.grounded]}
    return Plan(source, battery, "pass-fail" if battery else "rubric", arms, client, client_why, judge_client,
                identity, notes, grounding)


def run_qa(cfg: QAConfig, *, env: Mapping[str, str] | None = None, sleep=None,
           progress: Callable[[str], None] = lambda s: None) -> dict:
    """Run the qa suite and return `{run_dir, spec, status, summary, questions, runs, trust, skipped, arms,
    notes}`. Phases: plan, then per arm build and answer (scored and recorded as each answer lands), then
    record the derived figures."""
    p = plan(cfg, env, sleep)
    out = Path(cfg.out) if cfg.out else default_run_dir(SUITE)
    try:
        subject = Subject(dataset=str(p.source.identity().get("name") or cfg.source), systems=[str(a) for a in p.arms],
                          model=cfg.model)
        run = RunDir.start(out, suite=SUITE, suite_version=SUITE_VERSION, subject=subject, spec=cfg.spec(),
                           resume=cfg.resume,
                           context={"source": cfg.source, "source_identity": p.source.identity(),
                                    "source_from_run": source_from_run(cfg.source, p.source, out),
                                    "rubric": p.identity["rubric"],
                                    "base_url_given": bool(cfg.base_url)})
        with run, tempfile.TemporaryDirectory(prefix="ctxgauge-qa-") as tmp:
            work = Path(tmp)
            corpus = None
            if any(a.needs_corpus for a in p.arms):
                corpus = open_battery_corpus(p.battery, work, cfg.repo) if p.battery else open_corpus(cfg.repo)
            judge = Judge(p.judge_client, p.battery, scorer=cfg.scorer) if p.judge_client and p.battery else None
            rubric = RubricJudge(p.judge_client, panel=Panel(p.judge_client) if cfg.panel else None) \
                if p.judge_client and not p.battery else None
            rows = [_run_arm(run, p, cfg, arm, corpus, work, judge, rubric, progress) for arm in p.arms]
            record = _record(run, p, cfg, rows)
    finally:
        p.close()
    return {"run_dir": str(run.path), "spec": record["spec"], "status": record["status"], **record["results"]}


def _add_units(run: RunDir, p: Plan, cfg: QAConfig, arm: ArmSpec, status: str, reason: str, answer_status: str) -> None:
    for rep in range(1, cfg.repeat + 1):
        for q in p.source.questions:
            if not run.is_done(unit_id(arm.slug, rep, q.qid)):
                run.add_unit(unit_id(arm.slug, rep, q.qid), status, reason=reason, arm=str(arm), rep=rep,
                             qid=q.qid, answer_status=answer_status, scoring=p.scoring)


def _run_arm(run: RunDir, p: Plan, cfg: QAConfig, arm: ArmSpec, corpus, work: Path, judge, rubric, progress) -> dict:
    """Phases 2 and 3 for one arm: build its engine, then answer, score and record every repetition.
    Returns the arm's row (status, reason, engine identity, cost basis) for the summary."""
    client = p.client if arm.needs_model else None
    row = {"arm": str(arm), "slug": arm.slug, "kind": arm.kind, "engine": arm.engine, "scoring": p.scoring,
           "status": "measured", "reason": None,
           "cost_basis": client.rates.cost_basis if client else ("reported" if arm.kind == "command" else None),
           "rates": client.rates.to_dict() if client else None}
    model_missing = arm.needs_model and p.client is None
    if model_missing and arm.kind != "context":
        row.update(status="skipped", reason=f"needs a model: {p.client_why}")
        progress(f"skipped {arm}: {p.client_why}")
        _add_units(run, p, cfg, arm, "skipped", row["reason"], "skipped")
        return row
    if model_missing:
        row.update(status="retrieval-only", reason=f"answers skipped, retrieval measured: {p.client_why}")
    engine = None
    try:
        if arm.engine:
            progress(f"building {arm.engine}")
            engine = EngineHandle(arm.engine, corpus, work / "index" / arm.slug)
            row["engine_identity"] = engine.identity()
    except (EngineError, UserError) as exc:
        row.update(status="failed", reason=str(exc))
        _add_units(run, p, cfg, arm, "failed", str(exc), "infra")  # a gap per question: --resume retries
        return row
    checkout = None
    if arm.kind == "command":  # the harness reads the pinned tree, not whatever is checked out
        checkout = work / "checkout"
        if not checkout.exists():
            corpus.materialize(checkout)
    commit = p.battery.commit if p.battery else getattr(corpus, "rev", None)
    ctx = ArmContext(arm, client, engine, corpus.name if corpus else p.source.name, commit, cfg.token_budget,
                     cfg.max_turns, cfg.max_tokens, cfg.command_timeout, checkout)
    try:
        for rep in range(1, cfg.repeat + 1):
            _run_arm_rep(run, ctx, arm, rep, p.source.questions, cfg, p.battery, p.source, p.scoring, judge, rubric,
                         model_missing, progress, p.grounding)
    finally:
        if engine is not None:
            engine.close()
    return row


def _record(run: RunDir, p: Plan, cfg: QAConfig, rows: list[dict]) -> dict:
    """Phase 4: the per-run records, the summary and the trust gate, derived from the units; then finish."""
    questions = p.source.questions
    evidence = {q.qid: p.battery.gold[q.qid].evidence_files for q in questions} if p.battery else {}
    units = [u.to_json() for u in run.units()]
    baseline = str(parse_arm(cfg.baseline_arm)) if cfg.baseline_arm else None
    results = derive(run.path, rows, cfg.repeat, units, questions, evidence, p.identity, p.notes, baseline)
    if p.battery is None:
        results["grounding"] = grounding_record(p.grounding, from_topics=cfg.grounded_from_topics)
    gaps = len((results["unfinished"] or {}).get("gaps") or ())
    # A gap (an outage, a failed engine) leaves the run unfinished: published with its results, but marked
    # error so `--resume` can fill it, and never read as a finished score.
    return run.finish("error" if gaps else "success", results=results, headline=headline(results, p.arms),
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
    results.update(arms=rows, notes=notes, identity=identity, unfinished=unfinished(units, results["runs"]),
                   adjudications=adjudications)
    return results


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


def question_files(questions) -> dict[str, str]:
    """The file name (no suffix) each question's answer and transcript are written under: its id when that is
    a plain name, else made safe (`../../x` would write outside the run); two ids that come out the same are a
    UserError, never one file written over the other (see `_io.safe_file_names`)."""
    return safe_file_names([q.qid for q in questions], "question id")


def write_transcript(run_path: Path, rep_dir: str, a: Answer, name: str) -> str | None:
    """`transcript/<name>.jsonl` of one unit (see TRANSCRIPT_EVENTS; `name` from question_files); its path
    relative to the run."""
    if not a.transcript:
        return None
    rel = f"{rep_dir}/transcript/{name}.jsonl"
    write_text_atomic(run_path / rel, "".join(json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n"
                                              for e in a.transcript))
    return rel


def _run_arm_rep(run: RunDir, ctx: ArmContext, arm: ArmSpec, rep: int, questions, cfg: QAConfig,
                 battery: Battery | None, source, scoring: str, judge, rubric, retrieval_only: bool, progress,
                 grounding: dict[str, Grounding]) -> None:
    todo = [q for q in questions if not run.is_done(unit_id(arm.slug, rep, q.qid))]
    if not todo:
        return
    if cfg.protocol != "zero-shot":
        todo = list(questions)  # a session cannot start mid-way: replay it (cache hits cost nothing)
    by_qid = {q.qid: q for q in questions}
    files = question_files(questions)
    rep_dir = run.path / "arms" / arm.slug / f"rep{rep:02d}"
    progress(f"{arm} rep {rep}: {len(todo)} question(s)")

    def record(a: Answer) -> None:
        q = by_qid[a.qid]
        figures = {**a.usage.to_dict(), "llm_calls": a.llm_calls, "cache_hits": a.cache_hits,
                   "tool_calls": a.tool_calls, "retrieved": a.retrieved, "in_context": a.in_context,
                   "seconds": round(a.seconds, 3), "token_source": a.token_source,
                   "cost_usd": a.cost_reported if arm.kind == "command" else (
                       ctx.client.cost(a.usage) if ctx.client else None)}
        verdict = None
        answer_file = None
        if a.status == "ok":
            answer_file = f"arms/{arm.slug}/rep{rep:02d}/answers/{files[a.qid]}.md"
            write_text_atomic(run.path / answer_file, _answer_md(str(arm), rep, q, a, cfg.model))
            verdict = score_text(q, a.text, battery, source, judge, rubric, cfg.scorer, grounding)
        transcript_file = write_transcript(run.path, f"arms/{arm.slug}/rep{rep:02d}", a, files[a.qid])
        status = {"ok": "ok", "skipped": "skipped"}.get(a.status, "failed")
        if verdict is not None and verdict.get("result") in ("infra",):
            status = "failed"  # the judge had an outage: the unit is a gap to retry
        run.add_unit(unit_id(arm.slug, rep, a.qid), status, figures=figures, reason=a.reason, arm=str(arm), rep=rep,
                     qid=a.qid, answer_status=a.status, answer_file=answer_file, answer_text_len=len(a.text.strip()),
                     verdict=verdict, scoring=scoring, transcript_file=transcript_file)

    if retrieval_only:
        for a in retrieve_only(ctx, todo):
            record(a)
        return
    rep_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    run_protocol(cfg.protocol, ctx, todo, rep - 1, on_answer=record)
    progress(f"{arm} rep {rep} done in {time.perf_counter() - t0:.1f}s")


def score_text(q, text: str, battery: Battery | None, source, judge, rubric, scorer: str = SCORER_VERSION,
               grounding: dict[str, Grounding] | None = None) -> dict:
    """The verdict of one answer: pass/fail against a battery's gold (with the scorer version), or the
    rubric (grounded as `grounding` says, with the question's numeric claims) for a question set."""
    if battery is not None:
        return score_answer(q, text, battery.gold[q.qid], judge, scorer).to_dict()
    if rubric is None:
        return {"qid": q.qid, "result": "not-judged", "reason": "no judge configured (give --judge)"}
    g = (grounding or plan_grounding(source))[q.qid]
    return rubric.score(q, text, g.text, source.records[q.qid].numeric_claims, grounding_source=g.source).to_dict()


__all__ = ["Plan", "QAConfig", "Verdict", "load_source", "plan", "run_qa", "score_text", "write_run_record"]
