"""Rubric mode (dokimi): an answer scored 0-100 on five dimensions, aggregated with fixed weights.

    correctness 2, completeness 1, code quality 1, actionability 1, specificity 0 (reported, not weighted)
    grounded mode adds factual grounding, weight 2, when the question carries ground truth

Grounded and ungrounded aggregates are different scales (one has a heavily weighted dimension the other
lacks), so `mean_aggregate` refuses to average them together. A provider outage leaves the score empty
(`infra`); a reply without usable scores is `unscored`: neither ever becomes a zero.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ctxgauge.providers import ChatRequest, Client, Message, ProviderOutage, Usage
import ctxgauge.suites.qa._prompts as prompts
from ctxgauge.suites.qa._battery import Question
from ctxgauge.suites.qa._scoring import first_json_object

WEIGHTS = {"correctness": 2, "completeness": 1, "specificity": 0, "code_quality": 1, "actionability": 1}
GROUNDED_WEIGHTS = {**WEIGHTS, "factual_grounding": 2}


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
    aggregate: float | None = None
    reason: str = ""
    judge: str | None = None
    usage: Usage = field(default_factory=Usage)

    def to_dict(self) -> dict:
        return {"qid": self.qid, "result": self.result, "grounded": self.grounded, "scores": self.scores,
                "aggregate": self.aggregate, "reason": self.reason, "judge": self.judge,
                **{f"judge_{k}": v for k, v in self.usage.to_dict().items()}}


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

    def __init__(self, client: Client, *, max_tokens: int = 300):
        self.client = client
        self.max_tokens = max_tokens

    def score(self, q: Question, answer: str, ground_truth: str | None = None) -> RubricScore:
        grounded = bool(ground_truth)
        dims = tuple(GROUNDED_WEIGHTS if grounded else WEIGHTS)
        out = RubricScore(q.qid, "unscored", grounded, judge=f"{self.client.kind}:{self.client.model}")
        messages = (Message("system", prompts.rubric_system(grounded)),
                    Message("user", prompts.rubric_user(q, answer, ground_truth)))
        for _ in range(2):  # one retry for a reply that is not the JSON asked for
            try:
                result = self.client.complete(ChatRequest(messages, max_tokens=self.max_tokens, purpose="rubric"))
            except ProviderOutage as exc:
                out.result, out.reason = "infra", str(exc)
                return out
            out.usage += result.usage
            parsed = _parse_scores(result.text, dims)
            if parsed is not None:
                out.scores, out.reason = parsed
                out.aggregate = aggregate(out.scores, grounded=grounded)
                out.result = "scored"
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
