"""The qa pipeline, in named phases, each in its own module:

1. plan (`_plan`): load the source, parse the arms, check the options, make the clients; nothing is asked;
2. build (here): each arm's engine, over the battery's pinned tree or the question set's --repo;
3. answer (`_answer`): per arm x repetition, the protocol asks (`_protocols`), each answer is scored
   (`_scoring`, `_rubric`) and its unit recorded as it lands;
4. record (`_record`): the figures derived from the units (`_summary`, `_trust`), each repetition's
   record.json and verdicts.json, and run.json's results; the run directory's layout is documented there.

Arms that need a model are skipped, with the reason, when none is configured; the context arm still
measures retrieval. `--resume` redoes failed units; session protocols replay the whole session, which
the response cache makes free for the turns already answered.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Mapping

from ctxgauge.corpus import open_corpus
from ctxgauge.errors import EngineError, UserError
from ctxgauge.records import RunDir, Subject, default_run_dir
from ctxgauge.suites._progress import Progress, Steps
from ctxgauge.suites.qa._answer import answer_rep
from ctxgauge.suites.qa.arms._arms import ArmSpec, EngineHandle
from ctxgauge.suites.qa.arms._mcp_tools import McpToolsHandle
from ctxgauge.suites.qa._config import SUITE, SUITE_VERSION, QAConfig
from ctxgauge.suites.qa.judging._panel import Panel
from ctxgauge.suites.qa._plan import Plan, plan, source_from_run
from ctxgauge.suites.qa.arms._protocols import ArmContext
from ctxgauge.results import QAResults, QARun, QASpec
from ctxgauge.suites.qa._record import finish_run
from ctxgauge.suites.qa.judging._rubric import RubricJudge
from ctxgauge.suites.qa.judging._scoring import Judge
from ctxgauge.suites.qa.sources._source import open_battery_corpus
from ctxgauge.suites.qa._summary import unit_id


def run_qa(cfg: QAConfig, *, env: Mapping[str, str] | None = None, sleep=None,
           progress: Progress | None = None) -> QARun:
    """Run the qa suite and return its typed result (`QARun`: run_dir, spec, status and the results as
    recorded: summary, questions, runs, trust, skipped, arms, notes, ...). Phases: plan, then per arm build and answer (scored and recorded as each answer lands), then
    record the derived figures. `progress(done, total, label)` is told each unit recorded (arm x repetition x
    question, suites/_progress.py) and what runs meanwhile (an engine building)."""
    p = plan(cfg, env, sleep)
    out = Path(cfg.out) if cfg.out else default_run_dir(SUITE)
    try:
        subject = Subject(dataset=str(p.source.identity().get("name") or cfg.source), systems=[str(a) for a in p.arms],
                          model=cfg.model)
        run = RunDir.start(out, suite=SUITE, suite_version=SUITE_VERSION, subject=subject, spec=run_spec(cfg, p),
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
            per_arm = cfg.repeat * len(p.source.questions)
            steps = Steps(progress, total=len(p.arms) * per_arm)
            rows = [_run_arm(run, p, cfg, arm, corpus, work, judge, rubric, steps, i * per_arm)
                    for i, arm in enumerate(p.arms)]
            record = finish_run(run, p, cfg, rows)
    finally:
        p.close()
    return QARun(run_dir=str(run.path), spec=QASpec.from_json(record["spec"], str(run.path), "spec"),
                 status=record["status"], results=QAResults.from_json(record["results"], str(run.path), "results"))


def run_spec(cfg: QAConfig, p: Plan) -> dict:
    """The recorded options, with the tokenizer budgets are counted in when an arm counts tokens."""
    return {**cfg.spec(), **({"tokenizer": p.tokenizer} if p.tokenizer else {})}


def _add_units(run: RunDir, p: Plan, cfg: QAConfig, arm: ArmSpec, status: str, reason: str, answer_status: str) -> None:
    """One unit per repetition and question not yet done, all with one status and reason (an arm skipped, an
    engine that failed to build)."""
    for rep in range(1, cfg.repeat + 1):
        for q in p.source.questions:
            if not run.is_done(unit_id(arm.slug, rep, q.qid)):
                run.add_unit(unit_id(arm.slug, rep, q.qid), status, reason=reason, arm=str(arm), rep=rep,
                             qid=q.qid, answer_status=answer_status, scoring=p.scoring)


def _run_arm(run: RunDir, p: Plan, cfg: QAConfig, arm: ArmSpec, corpus, work: Path, judge, rubric, steps: Steps,
             base: int) -> dict:
    """Phases 2 and 3 for one arm: build its engine, then answer, score and record every repetition (its
    units are numbers `base` on of the run's, for `steps`). Returns the arm's row (status, reason, engine
    identity, cost basis) for the summary."""
    client = p.client if arm.needs_model else None
    row = {"arm": str(arm), "slug": arm.slug, "kind": arm.kind, "engine": arm.engine, "scoring": p.scoring,
           "status": "measured", "reason": None,
           "cost_basis": client.rates.cost_basis if client else ("reported" if arm.kind == "command" else None),
           "rates": client.rates.to_dict() if client else None}
    model_missing = arm.needs_model and p.client is None
    if model_missing and arm.kind != "context":
        row.update(status="skipped", reason=f"needs a model: {p.client_why}")
        _add_units(run, p, cfg, arm, "skipped", row["reason"], "skipped")
        steps.done = base + cfg.repeat * len(p.source.questions)
        steps.step(f"skipped {arm} (needs a model)", 0)
        return row
    if model_missing:
        row.update(status="retrieval-only", reason=f"answers skipped, retrieval measured: {p.client_why}")
    engine = None
    try:
        if arm.engine:
            steps.done = base
            steps.step(f"building {arm.engine}", 0)
            handle = McpToolsHandle if arm.kind == "mcp-tools" else EngineHandle
            engine = handle(arm.engine, corpus, work / "index" / arm.slug)
            row["engine_identity"] = engine.identity()
    except (EngineError, UserError) as exc:
        if engine is not None:  # built, then its identity failed: end its process now, not at exit
            engine.close()
        row.update(status="failed", reason=str(exc))
        _add_units(run, p, cfg, arm, "failed", str(exc), "infra")  # a gap per question: --resume retries
        steps.done = base + cfg.repeat * len(p.source.questions)
        steps.step(f"{arm} failed", 0)
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
            answer_rep(run, ctx, p, cfg, rep, judge, rubric, model_missing, steps,
                       base + (rep - 1) * len(p.source.questions))
    finally:
        if engine is not None:
            engine.close()
    return row


__all__ = ["run_qa"]
