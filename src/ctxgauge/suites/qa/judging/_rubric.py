"""Rubric mode (dokimi): an answer scored 0-100 on five dimensions, aggregated with fixed weights.

    correctness 2, completeness 1, code quality 1, actionability 1, specificity 0 (reported, not weighted)
    grounded mode adds factual grounding, weight 2, when the question carries ground truth

Grounded and ungrounded aggregates are different scales (one has a heavily weighted dimension the other
lacks), so `mean_aggregate` refuses to average them together. A provider outage leaves the score empty
(`infra`); a reply without usable scores is `unscored`: neither ever becomes a zero.

Numeric claims: when a question lists `numeric_claims`, the judge says of each whether the answer states
it correctly, wrongly, or not at all; one judged wrong caps correctness at 40 (`NUMERIC_CAP`). The cap is
applied here, in Python, after the judge replied: a judge asked to cap its own score may not, and the
record keeps the judged correctness beside the capped one.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ctxgauge.providers import ChatRequest, Client, Message, ProviderOutage, Usage
import ctxgauge.suites.qa.judging._prompts as prompts
from ctxgauge.suites.qa.sources._battery import Question
from ctxgauge.suites.qa.judging._scoring import first_json_object

WEIGHTS = {"correctness": 2, "completeness": 1, "specificity": 0, "code_quality": 1, "actionability": 1}
GROUNDED_WEIGHTS = {**WEIGHTS, "factual_grounding": 2}
NUMERIC_CAP = 40.0
"""The most correctness (or, on the panel, a role's score) an answer gets with a numeric claim wrong."""
CLAIM_VERDICTS = ("correct", "wrong", "absent")


def parse_claims(obj: dict, n: int) -> list[str] | None:
    """The judge's verdict on each of the question's `n` numeric claims, in order, or None when the
    reply does not give exactly one of correct/wrong/absent per claim."""
    if n == 0:
        return []
    got = obj.get("numeric_claims")
    if not isinstance(got, list) or len(got) != n:
        return None
    out = [str(v).strip().lower() for v in got]
    return out if all(v in CLAIM_VERDICTS for v in out) else None


def cap_numeric(score: float, claims: list[str]) -> float:
    """`score` capped at NUMERIC_CAP when any numeric claim was judged wrong."""
    return min(score, NUMERIC_CAP) if "wrong" in claims else score


def aggregate(scores: dict[str, float], *, grounded: bool) -> float:
    """Weighted mean of the dimension scores (0-100) with dokimi's weights."""
    weights = GROUNDED_WEIGHTS if grounded else WEIGHTS
    missing = [d for d, w in weights.items() if w and d not in scores]
    if missing:
        raise ValueError(f"missing rubric dimensions: {', '.join(missing)}")
    total = sum(weights.values())
    return sum(float(scores[d]) * w for d, w in weights.items() if w) / total


@dataclass
class RubricScore:
    """One answer's rubric scores."""

    qid: str
    result: str
    """scored, infra (provider outage: retry) or unscored (the judge never gave usable scores)."""
    grounded: bool = False
    scores: dict[str, float] = field(default_factory=dict)
    """The dimension scores after the numeric-claims cap."""
    aggregate: float | None = None
    reason: str = ""
    judge: str | None = None
    usage: Usage = field(default_factory=Usage)
    grounding_source: str | None = None
    """Where the ground truth came from (see `_grounding`), None when ungrounded."""
    numeric_claims: list[str] = field(default_factory=list)
    """The judge's verdict on each numeric claim of the question, in order: correct, wrong or absent."""
    judged_correctness: float | None = None
    """Correctness as the judge gave it, kept when the numeric-claims cap lowered it."""
    panel: dict | None = None
    """The judge panel's scores of the same answer, when a panel ran (see `_panel`)."""

    @property
    def capped(self) -> bool:
        return self.judged_correctness is not None

    def to_dict(self) -> dict:
        d = {"qid": self.qid, "result": self.result, "grounded": self.grounded, "scores": self.scores,
             "aggregate": self.aggregate, "reason": self.reason, "judge": self.judge,
             "grounding_source": self.grounding_source, "numeric_claims": self.numeric_claims,
             "capped": self.capped, "judged_correctness": self.judged_correctness,
             **{f"judge_{k}": v for k, v in self.usage.to_dict().items()}}
        if self.panel is not None:
            d["panel"] = self.panel
        return d


def _parse_scores(text: str, dims: tuple[str, ...]) -> tuple[dict[str, float], str] | None:
    obj = first_json_object(text)
    if obj is None:
        return None
    scores = {}
    for d in dims:
        v = obj.get(d)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= 100:
            return None
        scores[d] = float(v)
    return scores, " ".join(str(obj.get("reason") or "").split())


class RubricJudge:
    """Scores answers on the rubric; grounded when ground truth is given for the question."""

    def __init__(self, client: Client, *, max_tokens: int = 300, panel=None):
        self.client = client
        self.max_tokens = max_tokens
        self.panel = panel
        """A `_panel.Panel` to score every answer the rubric scored as well, or None."""

    def score(self, q: Question, answer: str, ground_truth: str | None = None,
              numeric_claims: tuple[str, ...] = (), *, grounding_source: str | None = None) -> RubricScore:
        grounded = bool(ground_truth)
        dims = tuple(GROUNDED_WEIGHTS if grounded else WEIGHTS)
        out = RubricScore(q.qid, "unscored", grounded, judge=f"{self.client.kind}:{self.client.model}",
                          grounding_source=grounding_source if grounded else None)
        messages = (Message("system", prompts.rubric_system(grounded, claims=bool(numeric_claims))),
                    Message("user", prompts.rubric_user(q, answer, ground_truth, numeric_claims)))
        for _ in range(2):  # one retry for a reply that is not the JSON asked for
            try:
                result = self.client.complete(ChatRequest(messages, max_tokens=self.max_tokens, purpose="rubric"))
            except ProviderOutage as exc:
                out.result, out.reason = "infra", str(exc)
                return out
            out.usage += result.usage
            parsed = _parse_scores(result.text, dims)
            claims = parse_claims(first_json_object(result.text) or {}, len(numeric_claims))
            if parsed is not None and claims is not None:
                out.scores, out.reason = parsed
                out.numeric_claims = claims
                capped = cap_numeric(out.scores["correctness"], claims)
                if capped != out.scores["correctness"]:
                    out.judged_correctness, out.scores["correctness"] = out.scores["correctness"], capped
                out.aggregate = aggregate(out.scores, grounded=grounded)
                out.result = "scored"
                if self.panel is not None:
                    out.panel, panel_usage = self.panel.score(q, answer, ground_truth, numeric_claims)
                    out.usage += panel_usage
                    if out.panel["result"] == "infra":  # an outage on the panel is a gap to retry, not a score
                        out.result, out.reason = "infra", out.panel["reason"]
                return out
            messages = messages + (Message("assistant", result.text),
                                   Message("user", "Reply with the one JSON object asked for, every score 0-100."))
        out.reason = "the judge gave no usable scores twice"
        return out


def mean_aggregate(scores: list[RubricScore]) -> float | None:
    """Mean aggregate of scored answers; refuses to mix grounded and ungrounded scales."""
    scored = [s for s in scores if s.result == "scored" and s.aggregate is not None]
    if not scored:
        return None
    if len({s.grounded for s in scored}) > 1:
        raise ValueError("grounded and ungrounded rubric scores are different scales and are never averaged together")
    return statistics.fmean(s.aggregate for s in scored)  # type: ignore[misc]
