"""The judge panel (dokimi): three role-diverse judges score the same answer, aggregated here, in Python.

    role                 judges                                   dimension weights        role weight
    technical_expert     correctness, depth                       correctness 2, depth 1   2
    developer_advocate   usefulness, actionability                1, 1                     1
    doc_reviewer         completeness, fidelity_to_context        1, 1                     1

A role's score is the weighted mean of its dimensions (0-100). Every role is shown the question's
numeric claims and says of each whether the answer states it correctly, wrongly or not at all; a role
that judged one wrong scores at most 40 (`NUMERIC_CAP`), applied here, after the reply. The panel's
aggregate is the role-weighted mean of the role scores (the technical expert, who judges correctness,
counts double, as correctness does on the rubric). Beside it: the plain mean and standard deviation of
the three role scores, an agreement score `1 - sd / 50` (50 is the largest standard deviation three
0-100 scores can have, so 1 is unanimity and 0 is the widest split), and a disagreement flag for every
pair of roles more than 30 points apart and for roles that split on the numeric claims.

Each role is one request through the same provider interface as the judge (`Client.complete`), so the
panel runs on any provider, the response cache and the loopback test server alike. The rubric judge's
score stays the score of record; the panel is a second opinion whose agreement the trust gate checks.
A provider outage on any role is `infra` (a gap to retry); a role that never gives usable scores leaves
the panel `unscored`, without an aggregate or an agreement, never a zero.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ctxgauge.providers import ChatRequest, Client, Message, ProviderOutage, Usage
import ctxgauge.suites.qa.judging._prompts as prompts
from ctxgauge.suites.qa.sources._battery import Question
from ctxgauge.suites.qa.judging._rubric import cap_numeric, parse_claims
from ctxgauge.suites.qa.judging._scoring import first_json_object

DISAGREEMENT_POINTS = 30.0
"""Two roles further apart than this on one answer are flagged."""
MAX_SD = 50.0
"""The largest population standard deviation of scores on 0-100: the zero of the agreement score."""


@dataclass(frozen=True)
class Role:
    """One judge of the panel: what it attends to and how much it counts."""

    name: str
    title: str
    weights: dict[str, float]
    """Dimension -> weight inside the role's score."""
    weight: float
    """The role's weight in the panel aggregate."""
    brief: str
    """What the role judges, as its prompt says it."""

    def score_of(self, scores: dict[str, float]) -> float:
        """The weighted mean of the role's dimension scores."""
        return sum(scores[d] * w for d, w in self.weights.items()) / sum(self.weights.values())


ROLES = (
    Role("technical_expert", "technical expert", {"correctness": 2.0, "depth": 1.0}, 2.0,
         "correctness (are its technical claims true) and depth (does it explain the mechanism, not just name it)"),
    Role("developer_advocate", "developer advocate", {"usefulness": 1.0, "actionability": 1.0}, 1.0,
         "usefulness (does it help a developer with the task behind the question) and actionability (can they act "
         "on it at once: files, functions, commands)"),
    Role("doc_reviewer", "documentation reviewer", {"completeness": 1.0, "fidelity_to_context": 1.0}, 1.0,
         "completeness (does it cover everything asked) and fidelity_to_context (does it stay true to the ground "
         "truth given, or with none, claim nothing the codebase would not support)"),
)


def aggregate_panel(role_scores: dict[str, float], role_claims: dict[str, list[str]] | None = None) -> dict:
    """`{aggregate, mean, sd, agreement, flags}` from each role's (capped) score, by role name."""
    by_name = {r.name: r for r in ROLES}
    names = [r.name for r in ROLES if r.name in role_scores]
    scores = [role_scores[n] for n in names]
    total = sum(by_name[n].weight for n in names)
    agg = sum(role_scores[n] * by_name[n].weight for n in names) / total
    sd = statistics.pstdev(scores) if len(scores) > 1 else 0.0
    flags = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            gap = abs(role_scores[a] - role_scores[b])
            if gap > DISAGREEMENT_POINTS:
                flags.append(f"{a} {role_scores[a]:.0f} vs {b} {role_scores[b]:.0f}: {gap:.0f} points apart")
    claims = role_claims or {}
    wrong = [n for n in names if "wrong" in claims.get(n, [])]
    if wrong and len(wrong) < len(names):
        flags.append(f"numeric claims: judged wrong by {', '.join(wrong)}, not by "
                     f"{', '.join(n for n in names if n not in wrong)}")
    return {"aggregate": round(agg, 4), "mean": round(statistics.fmean(scores), 4), "sd": round(sd, 4),
            "agreement": round(max(0.0, 1.0 - sd / MAX_SD), 4), "flags": flags}


def _parse_role(text: str, role: Role, n_claims: int) -> tuple[dict[str, float], list[str], str] | None:
    obj = first_json_object(text)
    if obj is None:
        return None
    scores = {}
    for d in role.weights:
        v = obj.get(d)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= 100:
            return None
        scores[d] = float(v)
    claims = parse_claims(obj, n_claims)
    if claims is None:
        return None
    return scores, claims, " ".join(str(obj.get("reason") or "").split())


class Panel:
    """The three roles over one client. `score()` never raises for the provider: an outage is `infra`."""

    def __init__(self, client: Client, *, max_tokens: int = 300):
        self.client = client
        self.max_tokens = max_tokens

    def score(self, q: Question, answer: str, ground_truth: str | None = None,
              numeric_claims: tuple[str, ...] = ()) -> tuple[dict, Usage]:
        """`({result, roles: {name: {scores, score, judged_score, numeric_claims, reason}}, aggregate, mean,
        sd, agreement, flags}, usage)`; result is scored, infra or unscored."""
        usage = Usage()
        roles: dict[str, dict] = {}
        user = prompts.rubric_user(q, answer, ground_truth, numeric_claims)
        for role in ROLES:
            messages = (Message("system", prompts.panel_system(role.title, role.brief, tuple(role.weights),
                                                               claims=bool(numeric_claims))),
                        Message("user", user))
            parsed = None
            for _ in range(2):  # one retry for a reply that is not the JSON asked for
                try:
                    result = self.client.complete(ChatRequest(messages, max_tokens=self.max_tokens,
                                                              purpose=f"panel:{role.name}"))
                except ProviderOutage as exc:
                    return {"result": "infra", "reason": f"{role.name}: {exc}", "roles": roles}, usage
                usage += result.usage
                parsed = _parse_role(result.text, role, len(numeric_claims))
                if parsed is not None:
                    break
                messages = messages + (Message("assistant", result.text),
                                       Message("user", "Reply with the one JSON object asked for, every score 0-100."))
            if parsed is None:
                roles[role.name] = {"result": "unscored", "reason": "no usable scores twice"}
                continue
            scores, claims, reason = parsed
            judged = role.score_of(scores)
            roles[role.name] = {"result": "scored", "scores": scores, "score": round(cap_numeric(judged, claims), 4),
                                "judged_score": round(judged, 4), "numeric_claims": claims, "reason": reason}
        if any(r["result"] != "scored" for r in roles.values()):
            return {"result": "unscored", "reason": "a role gave no usable scores", "roles": roles}, usage
        out = aggregate_panel({n: r["score"] for n, r in roles.items()},
                              {n: r["numeric_claims"] for n, r in roles.items()})
        return {"result": "scored", "roles": roles, **out}, usage


def panel_summary(verdicts: list[dict]) -> dict | None:
    """Per arm: answers the panel scored, the mean of their aggregates, mean standard deviation, mean
    agreement and the answers flagged; None when no panel ran."""
    panels = [v["panel"] for v in verdicts if isinstance(v.get("panel"), dict)]
    if not panels:
        return None
    scored = [p for p in panels if p.get("result") == "scored"]
    mean = (lambda xs: round(statistics.fmean(xs), 4) if xs else None)  # noqa: E731
    return {"answers": len(panels), "scored": len(scored), "aggregate": mean([p["aggregate"] for p in scored]),
            "sd": mean([p["sd"] for p in scored]), "agreement": mean([p["agreement"] for p in scored]),
            "flagged": sum(1 for p in scored if p["flags"])}
