"""Phase 3 of the qa pipeline, per arm x repetition: ask (through the protocol), score (tier 1 and the judge
against a battery's gold, or the rubric for a question set) and record each answer's unit as it lands, so a
crash loses at most the answer being asked and `--resume` asks only what is missing."""

from __future__ import annotations

from ctxgauge._io import write_text_atomic
from ctxgauge.records import RunDir
from ctxgauge.suites._progress import Steps
from ctxgauge.suites.qa.sources._battery import Battery
from ctxgauge.suites.qa._config import QAConfig
from ctxgauge.suites.qa.judging._grounding import Grounding, plan_grounding
from ctxgauge.suites.qa._plan import Plan, question_files
from ctxgauge.suites.qa.arms._protocols import Answer, ArmContext, retrieve_only, run_protocol
from ctxgauge.suites.qa._record import answer_md, write_transcript
from ctxgauge.suites.qa.judging._scoring import SCORER_VERSION, score_answer
from ctxgauge.suites.qa._summary import unit_id


def answer_rep(run: RunDir, ctx: ArmContext, p: Plan, cfg: QAConfig, rep: int, judge, rubric, retrieval_only: bool,
               steps: Steps, base: int) -> None:
    """The answer phase for one arm x repetition: ask the questions not yet answered (a session protocol asks
    them all again: it cannot start mid-way), score each answer and record its unit as it lands. `steps`
    counts units done; this repetition's first unit is number `base` of the run's."""
    arm, questions = ctx.arm, p.source.questions
    todo = [q for q in questions if not run.is_done(unit_id(arm.slug, rep, q.qid))]
    steps.done = base + len(questions) - len(todo)  # the units an earlier attempt finished count as done
    if not todo:
        return
    if cfg.protocol != "zero-shot":
        todo = list(questions)  # a session cannot start mid-way: replay it (cache hits cost nothing)
        steps.done = base
    by_qid = {q.qid: q for q in questions}
    files = question_files(questions)
    rep_dir = run.path / "arms" / arm.slug / f"rep{rep:02d}"
    steps.step(f"{arm} rep {rep}: {todo[0].qid}", 0)

    def record(a: Answer) -> None:
        q = by_qid[a.qid]
        figures = {**a.usage.to_dict(), "llm_calls": a.llm_calls, "cache_hits": a.cache_hits,
                   "tool_calls": a.tool_calls, "retrieved": a.retrieved, "in_context": a.in_context,
                   "seconds": round(a.seconds, 3), "token_source": a.token_source,
                   "cost_usd": a.cost_reported if arm.kind == "command" else (
                       ctx.client.cost(a.usage) if ctx.client else None)}
        if a.context_tokens is not None:  # context arms: ctxgauge's count beside the provider's input tokens
            figures.update(context_tokens=a.context_tokens, context_ran_out=a.context_ran_out)
        verdict = None
        answer_file = None
        if a.status == "ok":
            answer_file = f"arms/{arm.slug}/rep{rep:02d}/answers/{files[a.qid]}.md"
            write_text_atomic(run.path / answer_file, answer_md(str(arm), rep, q, a, cfg.model))
            verdict = score_text(q, a.text, p.battery, p.source, judge, rubric, cfg.scorer, p.grounding)
        transcript_file = write_transcript(run.path, f"arms/{arm.slug}/rep{rep:02d}", a, files[a.qid])
        status = {"ok": "ok", "skipped": "skipped"}.get(a.status, "failed")
        if verdict is not None and verdict.get("result") in ("infra",):
            status = "failed"  # the judge had an outage: the unit is a gap to retry
        run.add_unit(unit_id(arm.slug, rep, a.qid), status, figures=figures, reason=a.reason, arm=str(arm), rep=rep,
                     qid=a.qid, answer_status=a.status, answer_file=answer_file, answer_text_len=len(a.text.strip()),
                     verdict=verdict, scoring=p.scoring, transcript_file=transcript_file)
        steps.step(f"{arm} rep {rep}: {a.qid}")

    if retrieval_only:
        retrieve_only(ctx, todo, on_answer=record)
        return
    rep_dir.mkdir(parents=True, exist_ok=True)
    run_protocol(cfg.protocol, ctx, todo, rep - 1, on_answer=record)


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

