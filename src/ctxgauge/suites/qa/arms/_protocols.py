"""Exam protocols: how the questions reach the model.

    zero-shot      one question per fresh session (clean attribution of tokens, time and tools per question)
    multi-turn     one session, one question per turn; history accumulates (later questions pay for it)
    whole-battery  every question in one prompt; answers extracted by their labels

A protocol returns one `Answer` per question. A provider outage marks the questions it hit `infra` (a gap
to retry, never a zero); the rest of the session goes on.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ctxgauge.errors import EngineError
from ctxgauge.providers import ChatRequest, Client, Message, ProviderOutage, Usage
import ctxgauge.suites.qa.judging._prompts as prompts
from ctxgauge.suites.qa.arms._arms import ArmSpec, EngineHandle, pack_context, run_command
from ctxgauge.suites.qa.sources._battery import Question

PROTOCOLS = ("zero-shot", "multi-turn", "whole-battery")


@dataclass
class Answer:
    """One question's answer from one arm in one repetition."""

    qid: str
    text: str = ""
    status: str = "ok"
    """ok, or infra (the provider or harness failed: a gap to retry)."""
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    """The four token columns spent on this answer (a whole-battery sheet's usage sits on its first question)."""
    llm_calls: int = 0
    cache_hits: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    retrieved: list[str] | None = None
    """Paths the engine returned for this question (context arm): the input of the retrieval hit rate."""
    in_context: list[str] | None = None
    """Paths that fitted the token budget and so reached the model."""
    context_tokens: int | None = None
    """Context arm: tokens (o200k_base) of the packed context the model read, counted by ctxgauge beside the
    provider's input tokens (a whole-battery sheet's context sits on its first question, 0 on the others)."""
    context_ran_out: bool | None = None
    """Context arm: the ranking ran out before the budget did (every hit fitted: a shorter context)."""
    cost_reported: float | None = None
    seconds: float = 0.0
    token_source: str | None = None
    """Who counted the tokens: provider (the model API's usage), harness (a command arm's envelope), or
    None (nobody reported any: the four columns are not a measurement)."""
    transcript: list[dict] = field(default_factory=list)
    """The unit's transcript (TRANSCRIPT_EVENTS), written as JSON lines beside the answer."""


TRANSCRIPT_EVENTS = {
    "user": "a message to the model or harness: {event, text}",
    "assistant": "a reply: {event, text, tool_calls: [ids]}",
    "tool_result": "one tool call answered: {event, id, name, status ok|error|reported, latency_ms, arguments "
                   "(search, read, and every mcp-tools call) or size (characters returned), result_tokens with "
                   "tokenizer (mcp-tools: the result's size in that tokenizer's tokens; result_bytes without "
                   "it), count (a harness's reported calls)}",
    "turn_end": "a model call or harness run ended: {event, usage: the four token columns, cached}",
}
"""Every transcript record by its `event`: the one table the records and docs read."""


@dataclass
class ArmContext:
    """What a protocol needs to run one arm: the client (None for command arms), the engine, options."""

    arm: ArmSpec
    client: Client | None
    engine: EngineHandle | None
    repo_name: str
    commit: str | None
    token_budget: int = 6000
    max_turns: int = 8
    max_tokens: int = 1024
    command_timeout: float = 600.0
    corpus_dir: Path | None = None


class Session:
    """One conversation with the model. `turn` asks one user message, runs the tool loop if the arm has
    tools, and returns the reply with what it cost."""

    def __init__(self, ctx: ArmContext, repetition: int):
        self.ctx = ctx
        self.repetition = repetition
        self.toolbox = ctx.engine.toolbox() if ctx.arm.kind in ("tool", "mcp-tools") and ctx.engine else None
        self.messages: list[Message] = [Message("system", prompts.answer_system(
            ctx.repo_name, ctx.commit, tools=self.toolbox is not None,
            tool_note=self.toolbox.prompt_note if self.toolbox else None))]

    def turn(self, user_text: str, answer: Answer) -> str:
        client = self.ctx.client
        assert client is not None
        start = len(self.messages)
        self.messages.append(Message("user", user_text))
        answer.transcript.append({"event": "user", "text": user_text})
        tools = self.toolbox.tools if self.toolbox else ()
        before = Counter(self.toolbox.counts) if self.toolbox else Counter()
        try:
            for _ in range(self.ctx.max_turns):
                result = client.complete(ChatRequest(tuple(self.messages), tools=tools, repetition=self.repetition,
                                                     max_tokens=self.ctx.max_tokens))
                answer.llm_calls += 1
                answer.cache_hits += int(result.cached)
                answer.usage += result.usage
                answer.token_source = "provider"
                answer.transcript += [
                    {"event": "assistant", "text": result.text, "tool_calls": [c.id for c in result.tool_calls]},
                    {"event": "turn_end", "usage": result.usage.to_dict(), "cached": bool(result.cached)}]
                if result.tool_calls and self.toolbox:
                    self.messages.append(Message("assistant", result.text, tool_calls=result.tool_calls))
                    for call in result.tool_calls:
                        t0 = time.perf_counter()
                        out = self.toolbox.call(call)
                        answer.transcript.append({
                            "event": "tool_result", "id": call.id, "name": call.name,
                            "latency_ms": round(1000 * (time.perf_counter() - t0), 1),
                            **self.toolbox.describe(call, out)})
                        self.messages.append(Message("tool", out, tool_call_id=call.id))
                    continue
                self.messages.append(Message("assistant", result.text))
                return result.text
            answer.reason = f"no final answer within {self.ctx.max_turns} model turns"
            self.messages.append(Message("assistant", ""))
            return ""
        except ProviderOutage:
            del self.messages[start:]  # the failed turn never happened, for the questions that follow
            raise
        finally:
            if self.toolbox:
                answer.tool_calls = dict(self.toolbox.counts - before)


def _context_for(ctx: ArmContext, text: str, answer: Answer) -> str | None:
    if ctx.arm.kind != "context" or ctx.engine is None:
        return None
    hits = ctx.engine.query(text, ctx.arm.k)
    answer.retrieved = [h.path for h in hits]
    packed = pack_context(hits, ctx.engine.corpus, ctx.token_budget)
    answer.in_context, answer.context_tokens, answer.context_ran_out = packed.paths, packed.tokens, packed.ran_out
    return packed.text


def retrieve_only(ctx: ArmContext, questions: list[Question], *,
                  on_answer: Callable[[Answer], None] = lambda a: None) -> list[Answer]:
    """The context arm with no model: what the engine retrieves per question, nothing asked; `on_answer`
    sees each as soon as it exists (as in `run_protocol`)."""
    out = []
    for q in questions:
        a = Answer(q.qid, status="skipped", reason="no model configured: retrieval measured, nothing asked")
        _context_for(ctx, q.prompt, a)
        on_answer(a)
        out.append(a)
    return out


def _ask(ctx: ArmContext, session: Session | None, q: Question, text: str) -> Answer:
    answer = Answer(q.qid)
    t0 = time.perf_counter()
    try:
        if ctx.arm.kind == "command":
            env = {"CTXGAUGE_QID": q.qid, "CTXGAUGE_REPO": str(ctx.corpus_dir or "")}
            answer.transcript.append({"event": "user", "text": text})
            out = run_command(ctx.arm.command or "", text, cwd=ctx.corpus_dir, env=env, timeout=ctx.command_timeout)
            answer.text, answer.usage, answer.tool_calls, answer.cost_reported = (
                out.answer, out.usage, out.tool_calls, out.cost_usd)
            answer.token_source = "harness" if out.usage_reported else None
            # What the harness reported, as it reported it: its own transcript is not ours to invent.
            answer.transcript += [{"event": "assistant", "text": out.answer, "tool_calls": []},
                                  *({"event": "tool_result", "name": name, "status": "reported", "count": n}
                                    for name, n in sorted(out.tool_calls.items())),
                                  {"event": "turn_end", "usage": out.usage.to_dict() if out.usage_reported else None,
                                   "cached": False}]
        else:
            assert session is not None
            answer.text = session.turn(text, answer)
    except (ProviderOutage, EngineError) as exc:
        answer.status, answer.reason = "infra", str(exc)
    answer.seconds = time.perf_counter() - t0
    return answer


def run_protocol(protocol: str, ctx: ArmContext, questions: list[Question], repetition: int,
                 *, on_answer: Callable[[Answer], None] = lambda a: None) -> list[Answer]:
    """Ask every question under `protocol`; `on_answer` sees each answer as soon as it exists."""
    if protocol == "whole-battery":
        return _whole_battery(ctx, questions, repetition, on_answer)
    out = []
    session = Session(ctx, repetition) if protocol == "multi-turn" and ctx.client else None
    for q in questions:
        s = session if protocol == "multi-turn" else (Session(ctx, repetition) if ctx.client else None)
        probe = Answer(q.qid)
        context = _context_for(ctx, q.prompt, probe)
        answer = _ask(ctx, s, q, prompts.question_text(q, context=context))
        answer.retrieved, answer.in_context = probe.retrieved, probe.in_context
        answer.context_tokens, answer.context_ran_out = probe.context_tokens, probe.context_ran_out
        on_answer(answer)
        out.append(answer)
    return out


def _whole_battery(ctx: ArmContext, questions: list[Question], repetition: int,
                   on_answer: Callable[[Answer], None]) -> list[Answer]:
    probes = {q.qid: Answer(q.qid) for q in questions}
    context = None
    if ctx.arm.kind == "context" and ctx.engine is not None:
        # One context for the sheet: each question's hits, interleaved by rank so every question gets
        # its best file in before any gets its second.
        per_q = {q.qid: ctx.engine.query(q.prompt, ctx.arm.k) for q in questions}
        for q in questions:
            probes[q.qid].retrieved = [h.path for h in per_q[q.qid]]
        merged, seen = [], set()
        for rank in range(ctx.arm.k):
            for q in questions:
                hits = per_q[q.qid]
                if rank < len(hits) and hits[rank].path not in seen:
                    seen.add(hits[rank].path)
                    merged.append(hits[rank])
        packed = pack_context(merged, ctx.engine.corpus, ctx.token_budget)
        context = packed.text
        for i, p in enumerate(probes.values()):
            p.in_context = [x for x in packed.paths if x in (p.retrieved or [])]
            # One context for the sheet, read once: its count sits on the first question, as its usage does.
            p.context_tokens, p.context_ran_out = (packed.tokens if i == 0 else 0), packed.ran_out
    session = Session(ctx, repetition) if ctx.client else None
    sheet = _ask(ctx, session, Question("sheet", 0, ""), prompts.battery_sheet(questions, context=context))
    texts = prompts.extract_answers(sheet.text, [q.qid for q in questions]) if sheet.status == "ok" else {}
    out = []
    for i, q in enumerate(questions):
        a = probes[q.qid]
        a.status, a.reason = sheet.status, sheet.reason
        a.text = texts.get(q.qid, "")
        a.token_source = sheet.token_source
        if i == 0:  # one call answered the whole sheet: its cost is counted once
            a.usage, a.llm_calls, a.cache_hits, a.tool_calls = sheet.usage, sheet.llm_calls, sheet.cache_hits, sheet.tool_calls
            a.seconds, a.cost_reported, a.transcript = sheet.seconds, sheet.cost_reported, sheet.transcript
        on_answer(a)
        out.append(a)
    return out
