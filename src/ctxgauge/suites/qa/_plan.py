"""Phase 1 of the qa pipeline: load the source, parse the arms, check every option and make the clients
(the answer model's and the judge's, or the reason there is none). Nothing is asked yet."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ctxgauge._io import safe_file_names
from ctxgauge.errors import UserError
from ctxgauge.providers import Client, ProviderConfig, load_rates, make_client, provider_status
from ctxgauge.suites.qa.arms._arms import ArmSpec, parse_arm
from ctxgauge.suites.qa.sources._battery import Battery, load_battery, resolve_battery_dir
from ctxgauge.suites.qa._config import SUITE_VERSION, QAConfig
from ctxgauge.suites.qa.judging._grounding import Grounding, plan_grounding
from ctxgauge.suites.qa.judging._prompts import PROMPT_VERSION
from ctxgauge.suites.qa.arms._protocols import PROTOCOLS
from ctxgauge.suites.qa.sources._questions import QuestionSet, load_question_set
from ctxgauge.suites.qa.judging._scoring import check_scorer


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


def client_for(model: str | None, kind: str | None, base_url: str | None, cfg: QAConfig,
            env: Mapping[str, str] | None, sleep) -> tuple[Client | None, str | None]:
    if not model:
        # Read in the demo's report too, and `ctxgauge demo` has no --model: name the command that has one.
        return None, "no model configured (ctxgauge qa run --model MODEL asks one; the demo asks none)"
    pc = ProviderConfig(model=model, kind=kind, base_url=base_url, timeout=cfg.timeout, retries=cfg.retries,
                        backoff=cfg.backoff, cache_dir=cfg.cache_dir, use_cache=cfg.use_cache, rates=cfg.rates)
    ok, why = provider_status(pc, env)
    if not ok:
        return None, why
    return make_client(pc, env=env, sleep=sleep), None



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
    tokenizer: dict | None = None
    """`{name, version}` of the tokenizer context and read budgets are counted in, when an arm counts
    tokens (context, tool); None otherwise. The run's spec records it."""

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
    if isinstance(cfg.token_budget, bool) or not isinstance(cfg.token_budget, int) or cfg.token_budget < 1:
        raise UserError(f"--token-budget must be a whole number of tokens, at least 1, not {cfg.token_budget!r}")
    check_scorer(cfg.scorer)
    if cfg.rates:  # read only when a client is made: with no model, a bad table went unreported
        load_rates(cfg.rates)
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
    client, client_why = client_for(cfg.model, cfg.provider, cfg.base_url, cfg, env, sleep)
    judge_client, judge_why = (None, "no judge configured (give --judge)") if not cfg.judge else client_for(
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
                identity, notes, grounding, tokenizer_spec(arms))


def tokenizer_spec(arms: list[ArmSpec]) -> dict | None:
    """The tokenizer's `{name, version}` when an arm counts tokens (the context arm packs under the budget,
    the tool arm cuts a long read), loaded now so a missing package is one line before anything is asked."""
    if not any(a.kind in ("context", "tool") for a in arms):
        return None
    from ctxgauge.metrics.tokens import default_tokenizer

    return default_tokenizer().spec


def question_files(questions) -> dict[str, str]:
    """The file name (no suffix) each question's answer and transcript are written under: its id when that is
    a plain name, else made safe (`../../x` would write outside the run); two ids that come out the same are a
    UserError, never one file written over the other (see `_io.safe_file_names`)."""
    return safe_file_names([q.qid for q in questions], "question id")
