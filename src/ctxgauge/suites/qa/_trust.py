"""The trust gate: may this run's numbers be believed? Each check is pass, warn, fail or not-measured.

A check whose input the run did not produce (no baseline arm, one repetition, no evidence files in the
gold, no panel, no model) is *not measured*, listed by name, never passed: the verdict line says how many
checks were measured and names the rest (`pass on 3 of 15 checks; not measured: ...`).

Scores are on a 0-100 scale: in pass/fail mode a question's score is 100 if it passed and 0 otherwise
(so an arm's mean is its percent passed); in rubric mode it is the aggregate.

    check                    threshold   on breach  input
    questions_scored         >= 10       fail       questions with a score, per arm (fewest)
    zero_score_share         <= 0.20     fail       answers scoring zero for want of any answer (see below)
    context_arm_mean         >= 30       warn       each context arm's mean score
    mean_delta               >= -5       warn       each context or tool arm's mean minus the `none` arm's
    coefficient_of_variation <= 0.60     warn       std / mean of a context arm's per-question scores
    inter_rater_agreement    >= 0.70     warn       mean panel agreement over panel-judged answers (a panel ran)
    retrieval_hit_rate       >= 0.60     warn       share of questions whose evidence file the engine retrieved;
                                                    not measured when under 80% of the arm's evaluations record it
    multi_run_std            <= 5        fail       std of an arm's mean score across repetitions
    judge_independence       differs     warn       the judge model is not the answer model

`zero_score_share`: in rubric mode an answer with aggregate 0; in pass/fail mode an empty answer (a
failed question is a legitimate 0 there, so only answers with nothing in them count as broken).
`judge_independence`: a model grading its own answers favours them, so a judge that is the answer
model is a warning, not a silent pass.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

STATUS_ORDER = {"fail": 3, "warn": 2, "pass": 1, "not-measured": 0}
RETRIEVAL_MIN_COVERAGE = 0.80
"""Share of an arm's evaluations that must record retrieval before its hit rate is a measurement."""
AGREEMENT_MIN = 0.70


@dataclass
class ArmScores:
    """One arm's scores over its valid repetitions: per question, the score of each repetition."""

    arm: str
    kind: str
    per_question: dict[str, list[float]] = field(default_factory=dict)
    rep_means: list[float] = field(default_factory=list)
    zero_answers: int = 0
    scored_answers: int = 0
    retrieval_hits: list[bool] = field(default_factory=list)
    """Per evaluation that recorded retrieval against known evidence: whether an evidence file came back."""
    evaluations: int | None = None
    """Evaluations of the arm (first repetition) that could have recorded retrieval; None: as many as hits."""
    panel_agreement: list[float] = field(default_factory=list)
    """The panel's agreement score (0-1) on each answer it judged."""

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.rep_means) if self.rep_means else None


@dataclass
class Check:
    """One check of the gate."""

    name: str
    status: str
    """pass, warn, fail or not-measured."""
    value: float | None
    threshold: str
    arm: str | None = None
    detail: str = ""

    @property
    def label(self) -> str:
        """The check's name, with its arm when it is per arm: how the verdict line lists it."""
        return f"{self.name}[{self.arm}]" if self.arm else self.name

    def to_dict(self) -> dict:
        return {"name": self.name, "status": self.status, "value": self.value, "threshold": self.threshold,
                "arm": self.arm, "detail": self.detail}


def _check(name: str, value: float | None, ok: bool, breach: str, threshold: str, arm: str | None = None,
           detail: str = "") -> Check:
    if value is None:
        return Check(name, "not-measured", None, threshold, arm, detail)
    return Check(name, "pass" if ok else breach, round(value, 4), threshold, arm, detail)


def _retrieval(a: ArmScores) -> Check:
    thr = ">= 0.60"
    n = len(a.retrieval_hits)
    evaluations = a.evaluations if a.evaluations is not None else n
    if not n:
        return Check("retrieval_hit_rate", "not-measured", None, thr, a.arm,
                     "no evaluation records retrieval against known evidence files")
    if n < RETRIEVAL_MIN_COVERAGE * evaluations:
        return Check("retrieval_hit_rate", "not-measured", None, thr, a.arm,
                     f"only {n} of {evaluations} evaluations record retrieval (needs "
                     f"{RETRIEVAL_MIN_COVERAGE:.0%})")
    rate = sum(a.retrieval_hits) / n
    return _check("retrieval_hit_rate", rate, rate >= 0.60, "warn", thr, a.arm)


def _model_name(identity: dict | str | None) -> str | None:
    if isinstance(identity, dict):
        return identity.get("model")
    return identity


def verdict_line(status: str, checks: list[Check]) -> str:
    """`pass on 3 of 15 checks; not measured: a, b[arm]`: what was measured, and by name what was not."""
    missing = [c.label for c in checks if c.status == "not-measured"]
    measured = len(checks) - len(missing)
    head = (f"nothing measured (0 of {len(checks)} checks)" if not measured
            else f"{status} on {measured} of {len(checks)} checks")
    return head + (f"; not measured: {', '.join(missing)}" if missing else "")


def trust_gate(arms: list[ArmScores], *, model: dict | str | None = None, judge: dict | str | None = None) -> dict:
    """Every check over the arms, and the overall status: the worst status among measured checks, or
    `not-measured` when nothing was. `model` and `judge` are the answer and judge models (a name or a
    provider identity), for `judge_independence`. Returns `{status, verdict, measured, checks_total,
    not_measured: [labels], checks: [...]}`."""
    checks: list[Check] = []
    scored = [a for a in arms if a.per_question]
    fewest = min((len(a.per_question) for a in scored), default=None)
    checks.append(_check("questions_scored", fewest, fewest is not None and fewest >= 10, "fail", ">= 10",
                         detail="" if scored else "no arm produced a score"))
    answers = sum(a.scored_answers for a in arms)
    share = sum(a.zero_answers for a in arms) / answers if answers else None
    checks.append(_check("zero_score_share", share, share is not None and share <= 0.20, "fail", "<= 0.20",
                         detail="" if answers else "no answer was scored"))
    baseline = next((a for a in arms if a.kind == "none" and a.mean is not None), None)
    contexts = [a for a in arms if a.kind == "context"]
    treatments = [a for a in arms if a.kind in ("context", "tool", "mcp-tools")]
    if not contexts:
        for name, thr in (("context_arm_mean", ">= 30"), ("coefficient_of_variation", "<= 0.60"),
                          ("retrieval_hit_rate", ">= 0.60")):
            checks.append(Check(name, "not-measured", None, thr, None, "no context arm in this run"))
    for a in contexts:
        m = a.mean
        checks.append(_check("context_arm_mean", m, m is not None and m >= 30, "warn", ">= 30", a.arm,
                             "" if m is not None else "the arm produced no score"))
        q_means = [statistics.fmean(v) for v in a.per_question.values() if v]
        cv = None
        detail = ""
        if len(q_means) >= 2 and statistics.fmean(q_means) > 0:
            cv = statistics.pstdev(q_means) / statistics.fmean(q_means)
        else:
            detail = "needs two or more scored questions and a mean above zero"
        checks.append(_check("coefficient_of_variation", cv, cv is not None and cv <= 0.60, "warn", "<= 0.60",
                             a.arm, detail))
        checks.append(_retrieval(a))
    if not treatments:
        checks.append(Check("mean_delta", "not-measured", None, ">= -5", None, "no context or tool arm"))
    for a in treatments:
        delta = a.mean - baseline.mean if baseline is not None and a.mean is not None else None
        why = "" if delta is not None else ("no scored `none` arm to compare with" if baseline is None
                                            else "the arm produced no score")
        checks.append(_check("mean_delta", delta, delta is not None and delta >= -5, "warn", ">= -5", a.arm, why))
    agreement = [x for a in arms for x in a.panel_agreement]
    mean_agreement = statistics.fmean(agreement) if agreement else None
    checks.append(_check("inter_rater_agreement", mean_agreement,
                         mean_agreement is not None and mean_agreement >= AGREEMENT_MIN, "warn",
                         f">= {AGREEMENT_MIN:.2f}", None, "" if agreement else "no judge panel ran (--panel)"))
    multi = [a for a in arms if len(a.rep_means) >= 2]
    if not multi:
        checks.append(Check("multi_run_std", "not-measured", None, "<= 5", None,
                            "needs two or more valid repetitions (--repeat)"))
    for a in multi:
        sd = statistics.stdev(a.rep_means)
        checks.append(_check("multi_run_std", sd, sd <= 5, "fail", "<= 5", a.arm))
    answer_model, judge_model = _model_name(model), _model_name(judge)
    if not judge_model or not answer_model:
        checks.append(Check("judge_independence", "not-measured", None, "judge is not the answer model", None,
                            "no judge ran" if not judge_model else "no answer model ran"))
    else:
        same = judge_model == answer_model
        checks.append(Check("judge_independence", "warn" if same else "pass", None, "judge is not the answer model",
                            None, f"the judge model {judge_model!r} is the answer model: it grades its own "
                                  "answers" if same else ""))
    measured = [c for c in checks if c.status != "not-measured"]
    status = max((c.status for c in measured), key=STATUS_ORDER.__getitem__) if measured else "not-measured"
    return {"status": status, "verdict": verdict_line(status, checks), "measured": len(measured),
            "checks_total": len(checks), "not_measured": [c.label for c in checks if c.status == "not-measured"],
            "checks": [c.to_dict() for c in checks]}
