"""Pass/fail scoring in two tiers.

Tier 1 is mechanical: the answer passes if it contains every token of the gold answer or of one accepted
variant (case-folded alphanumeric tokens). It can only pass; it never fails an answer.
Tier 2 is an LLM judge (see `_prompts`) that returns `{verdict, reason, facets}` for ONE answer. A fail
verdict whose reason reads as a pass (or a reply that is not the JSON asked for) is retried once with a
stern instruction; if it still disagrees with itself, the result is `adjudicate` (counted as a fail and
listed for a human). A provider outage is `infra`: a gap to retry, never a fail.
Without a judge, an answer tier 1 cannot pass is `not-judged`: counted apart, never a pass or a fail.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ctxgauge.providers import ChatRequest, Client, Message, ProviderOutage, Usage
import ctxgauge.suites.qa._prompts as prompts
from ctxgauge.suites.qa._battery import Battery, Gold, Question

RESULTS = ("pass", "fail", "adjudicate", "infra", "not-judged")
FACETS = ("extra_correct_info", "missing_minor", "erroneous_assertion")
SCORER_VERSION = "ctxgauge-qa-1"

_TOKEN = re.compile(r"[a-z0-9]+")
_PASS_WORDS = re.compile(r"\b(correct(ly)?|accurate(ly)?|matches|match|right|consistent|agrees?|identifies|"
                         r"names|states|captures|covers|meets|satisf(ies|ied)|complete|fully|exactly)\b", re.I)
_FAIL_WORDS = re.compile(r"\b(not|no|never|none|incorrect(ly)?|wrong(ly)?|miss(es|ing)?|omit(s|ted)?|lacks?|"
                         r"fails?|but|however|instead|contradicts?|partial(ly)?|only|hallucinat\w*|invent\w*|"
                         r"false|unsupported|mistaken(ly)?|confuses?|inaccurate|without|neither|nor|doesn't|"
                         r"isn't|didn't|vague|unclear|rather)\b", re.I)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def tier1_match(answer: str, gold: Gold) -> str | None:
    """The gold form (answer or variant) whose every token the answer contains, or None."""
    have = set(tokens(answer))
    for form in (gold.answer_gold, *gold.answer_gold_variants):
        need = set(tokens(form))
        if need and need <= have:
            return form
    return None


# Phrases that quote the question's own subject, not a defect of the answer ("correctly rejects the false
# premise", "says no such endpoint exists"): removed before looking for defect words.
_SUBJECT_PHRASES = re.compile(r"\"[^\"]*\"|'[^']*'|`[^`]*`|false premise|premise is false|no such|"
                              r"does(n't| not) exist|not exist", re.I)


def reads_as_pass(reason: str) -> bool:
    """A reason that praises the answer and names no defect: a fail verdict carrying it contradicts itself."""
    plain = _SUBJECT_PHRASES.sub(" ", reason)
    return bool(_PASS_WORDS.search(plain)) and not _FAIL_WORDS.search(plain)


@dataclass
class Verdict:
    """The score of one answer."""

    qid: str
    result: str
    """pass, fail, adjudicate (the judge contradicted itself twice; counted as fail), infra (no verdict
    could be had: retry), or not-judged (tier 1 could not pass it and no judge was configured)."""
    tier: int | None = None
    """1 (mechanical), 2 (judge), or None when nothing decided."""
    reason: str = ""
    facets: dict = field(default_factory=dict)
    judge: str | None = None
    gold_rev: int | None = None
    attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    """The judge's tokens for this verdict (kept apart from the answer's)."""

    @property
    def passed(self) -> bool:
        return self.result == "pass"

    @property
    def decided(self) -> bool:
        """pass, fail or adjudicate: the question enters the denominator."""
        return self.result in ("pass", "fail", "adjudicate")

    def to_dict(self) -> dict:
        return {"qid": self.qid, "result": self.result, "tier": self.tier, "reason": self.reason,
                "facets": self.facets, "judge": self.judge, "gold_rev": self.gold_rev, "attempts": self.attempts,
                "scorer": SCORER_VERSION, **{f"judge_{k}": v for k, v in self.usage.to_dict().items()}}

    @classmethod
    def from_dict(cls, d: dict) -> "Verdict":
        usage = Usage.from_dict({k[len("judge_"):]: v for k, v in d.items() if k.startswith("judge_tokens_")})
        return cls(d["qid"], d["result"], d.get("tier"), d.get("reason") or "", d.get("facets") or {},
                   d.get("judge"), d.get("gold_rev"), int(d.get("attempts") or 0), usage)


def first_json_object(text: str) -> dict | None:
    """The JSON object spanning the first `{` to the last `}` of a model's reply, or None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start:end + 1])
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def parse_judgement(text: str) -> dict | None:
    """The judge's JSON object (the first `{...}` in its reply), or None if there is none usable."""
    obj = first_json_object(text)
    if obj is None or str(obj.get("verdict", "")).lower() not in ("pass", "fail"):
        return None
    return obj


class Judge:
    """Tier 2 over one battery. `judge()` never raises for the provider: an outage is an `infra` verdict."""

    def __init__(self, client: Client, battery: Battery, *, max_tokens: int = 300):
        self.client = client
        self.battery = battery
        self.max_tokens = max_tokens

    @property
    def name(self) -> str:
        return f"{self.client.kind}:{self.client.model}"

    def judge(self, q: Question, answer: str) -> Verdict:
        gold = self.battery.gold[q.qid]
        user = prompts.judge_user(q, gold, self.battery.policies, self.battery.exemplars.get(q.qid, []), answer)
        messages: tuple[Message, ...] = (Message("system", prompts.JUDGE_SYSTEM), Message("user", user))
        v = Verdict(q.qid, "infra", None, judge=self.name, gold_rev=gold.gold_rev)
        for attempt in (1, 2):
            v.attempts = attempt
            try:
                result = self.client.complete(ChatRequest(messages, max_tokens=self.max_tokens, purpose="judge"))
            except ProviderOutage as exc:
                v.result, v.tier, v.reason = "infra", None, str(exc)
                return v
            v.usage += result.usage
            obj = parse_judgement(result.text)
            if obj is not None:
                verdict = str(obj["verdict"]).lower()
                reason = " ".join(str(obj.get("reason") or "").split())
                facets = obj.get("facets") if isinstance(obj.get("facets"), dict) else {}
                v.reason, v.facets = reason, {k: bool(facets.get(k, False)) for k in FACETS}
                if not (verdict == "fail" and reads_as_pass(reason)):
                    v.result, v.tier = verdict, 2
                    return v
            else:
                v.reason = "judge reply was not the JSON verdict asked for: " + " ".join(result.text.split())[:120]
            messages = messages + (Message("assistant", result.text), Message("user", prompts.JUDGE_STERN))
        v.result, v.tier = "adjudicate", 2
        return v


def score_answer(q: Question, answer_text: str, gold: Gold, judge: Judge | None) -> Verdict:
    """Tier 1, then the judge if there is one, else not-judged."""
    form = tier1_match(answer_text, gold)
    if form is not None:
        return Verdict(q.qid, "pass", 1, reason=f"contains every token of the key form {form!r}",
                       gold_rev=gold.gold_rev)
    if judge is None:
        return Verdict(q.qid, "not-judged", None, reason="tier 1 could not pass it and no judge is configured",
                       gold_rev=gold.gold_rev)
    return judge.judge(q, answer_text)
