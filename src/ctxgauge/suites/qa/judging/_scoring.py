"""Pass/fail scoring in two tiers.

Tier 1 is mechanical: the answer passes if it contains every token of the gold answer or of one accepted
variant (case-folded alphanumeric tokens). It can only pass; it never fails an answer.
Tier 2 is an LLM judge (see `_prompts`) that returns `{verdict, reason, facets}` for ONE answer. A fail
verdict whose reason reads as a pass (or a reply that is not the JSON asked for) is retried once with a
stern instruction; if it still disagrees with itself, the result is `adjudicate` (counted as a fail and
listed for a human). A provider outage is `infra`: a gap to retry, never a fail.
Without a judge, an answer tier 1 cannot pass is `not-judged`: counted apart, never a pass or a fail.

Scorer versions (`SCORERS`; every verdict records its version, and an export refuses to mix them):
    ctxgauge-qa-1  Corograph's published behaviour: any key form passes, however short; only a fail verdict
                   whose reason reads as a pass is retried.
    ctxgauge-qa-2  (default) a key form too short to be an answer (one token, or ruling text such as
                   "ACCEPTED VARIANTS (owner-ruled ...)") never passes an answer alone, so a one-word variant
                   ("SSE") no longer passes every answer that mentions `sse_hub.go`; the stern retry also
                   fires for a pass verdict whose reason describes a failure.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ctxgauge.providers import ChatRequest, Client, Message, ProviderOutage, Usage
import ctxgauge.suites.qa.judging._prompts as prompts
from ctxgauge.records import utc_now
from ctxgauge.suites.qa.sources._battery import Battery, Gold, Question

RESULTS = ("pass", "fail", "adjudicate", "infra", "not-judged")
FACETS = ("extra_correct_info", "missing_minor", "erroneous_assertion")
SCORER_V1 = "ctxgauge-qa-1"
SCORER_V2 = "ctxgauge-qa-2"
SCORERS = {
    SCORER_V1: "Corograph's published tier 1 (every key form, however short) and judge retry (fail verdicts only)",
    SCORER_V2: "tier 1 ignores key forms too short to be an answer; the judge retry also covers pass verdicts "
               "whose reason describes a failure",
}
"""Every scorer version by name, with what it does: the one table the CLI, records and docs read."""
SCORER_VERSION = SCORER_V2
"""The default scorer version."""


def check_scorer(name: str) -> str:
    """`name` if it is a known scorer version; a one-line user error otherwise."""
    if name not in SCORERS:
        from ctxgauge.errors import UserError
        raise UserError(f"unknown scorer {name!r} (known: {', '.join(SCORERS)})")
    return name

_TOKEN = re.compile(r"[a-z0-9]+")
_PASS_WORDS = re.compile(r"\b(correct(ly)?|accurate(ly)?|matches|match|right|consistent|agrees?|identifies|"
                         r"names|states|captures|covers|meets|satisf(ies|ied)|complete|fully|exactly)\b", re.I)
_FAIL_WORDS = re.compile(r"\b(not|no|never|none|incorrect(ly)?|wrong(ly)?|miss(es|ing)?|omit(s|ted)?|lacks?|"
                         r"fails?|but|however|instead|contradicts?|partial(ly)?|only|hallucinat\w*|invent\w*|"
                         r"false|unsupported|mistaken(ly)?|confuses?|inaccurate|without|neither|nor|doesn't|"
                         r"isn't|didn't|vague|unclear|rather)\b", re.I)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


# A key form that tells the grader what to accept instead of stating an answer.
_RULING = re.compile(r"^\W*(accepted (variants?|answers?)|any (of|answer)|either\b|fail(s|ed)?\b|pass(es)?\b|"
                     r"full credit|owner[- ]ruled|ruling)", re.I)


def short_form(form: str) -> str | None:
    """Why a key form is too short to be an answer ("one token", "ruling text"), or None when it is one."""
    if len(set(tokens(form))) <= 1:
        return "one token"
    if _RULING.search(form):
        return "ruling text"
    return None


def short_forms(gold: Gold) -> list[tuple[str, str]]:
    """(form, why) for each key form of `gold` that ctxgauge-qa-2's tier 1 never passes on alone."""
    return [(f, why) for f in (gold.answer_gold, *gold.answer_gold_variants) if (why := short_form(f))]


def tier1_match(answer: str, gold: Gold, scorer: str = SCORER_VERSION) -> str | None:
    """The gold form (answer or variant) whose every token the answer contains, or None. Under
    ctxgauge-qa-2 a form too short to be an answer (`short_form`) is never that form."""
    have = set(tokens(answer))
    for form in (gold.answer_gold, *gold.answer_gold_variants):
        if scorer != SCORER_V1 and short_form(form):
            continue
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


# Words that say the answer is defective (not the hedges of _FAIL_WORDS, which a pass reason may use).
_DEFECT_WORDS = re.compile(r"\b(incorrect(ly)?|wrong(ly)?|miss(es|ing)|omit(s|ted)?|lacks?|fails?|contradicts?|"
                           r"hallucinat\w*|invent(s|ed)|fabricat\w*|unsupported|mistaken(ly)?|inaccurate|"
                           r"erroneous(ly)?)\b", re.I)


# Praise proper: the neutral verbs of _PASS_WORDS ("names", "states") describe a failing answer as well.
_PRAISE_WORDS = re.compile(r"\b(correct(ly)?|accurate(ly)?|matches|right|consistent|agrees?|meets|"
                           r"satisf(ies|ied)|complete|fully|exactly|acceptable|passes)\b", re.I)


def reads_as_fail(reason: str) -> bool:
    """A reason that names a defect and praises nothing: a pass verdict carrying it contradicts itself."""
    plain = _SUBJECT_PHRASES.sub(" ", reason)
    return bool(_DEFECT_WORDS.search(plain)) and not _PRAISE_WORDS.search(plain)


def contradicts(verdict: str, reason: str, scorer: str = SCORER_VERSION) -> bool:
    """The verdict and its reason disagree (a stern retry is due)."""
    if verdict == "fail":
        return reads_as_pass(reason)
    return scorer != SCORER_V1 and verdict == "pass" and reads_as_fail(reason)


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
    scorer: str = SCORER_VERSION
    """The scorer version that decided it (SCORERS)."""
    transport: str | None = None
    """How the judge was reached: its provider kind (openai, anthropic, local); None for tier 1."""
    judged_at: str | None = None
    """UTC time the verdict was made (provenance: it never enters a figure)."""

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
                "scorer": self.scorer, "transport": self.transport, "judged_at": self.judged_at,
                **{f"judge_{k}": v for k, v in self.usage.to_dict().items()}}

    @classmethod
    def from_dict(cls, d: dict) -> "Verdict":
        usage = Usage.from_dict({k[len("judge_"):]: v for k, v in d.items() if k.startswith("judge_tokens_")})
        return cls(d["qid"], d["result"], d.get("tier"), d.get("reason") or "", d.get("facets") or {},
                   d.get("judge"), d.get("gold_rev"), int(d.get("attempts") or 0), usage,
                   d.get("scorer") or SCORER_V1, d.get("transport"), d.get("judged_at"))


def first_json_object(text: str) -> dict | None:
    """The JSON object spanning the first `{` to the last `}` of a model's reply, or None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start:end + 1])
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser descends
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

    def __init__(self, client: Client, battery: Battery, *, max_tokens: int = 300, scorer: str = SCORER_VERSION):
        self.client = client
        self.battery = battery
        self.max_tokens = max_tokens
        self.scorer = scorer

    @property
    def name(self) -> str:
        return f"{self.client.kind}:{self.client.model}"

    def judge(self, q: Question, answer: str) -> Verdict:
        gold = self.battery.gold[q.qid]
        user = prompts.judge_user(q, gold, self.battery.policies, self.battery.exemplars.get(q.qid, []), answer)
        messages: tuple[Message, ...] = (Message("system", prompts.JUDGE_SYSTEM), Message("user", user))
        v = Verdict(q.qid, "infra", None, judge=self.name, gold_rev=gold.gold_rev, scorer=self.scorer,
                    transport=self.client.kind, judged_at=utc_now())
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
                if not contradicts(verdict, reason, self.scorer):
                    v.result, v.tier = verdict, 2
                    return v
            else:
                v.reason = "judge reply was not the JSON verdict asked for: " + " ".join(result.text.split())[:120]
            messages = messages + (Message("assistant", result.text), Message("user", prompts.JUDGE_STERN))
        v.result, v.tier = "adjudicate", 2
        return v


def score_answer(q: Question, answer_text: str, gold: Gold, judge: Judge | None,
                 scorer: str = SCORER_VERSION) -> Verdict:
    """Tier 1, then the judge if there is one, else not-judged."""
    form = tier1_match(answer_text, gold, scorer)
    if form is not None:
        return Verdict(q.qid, "pass", 1, reason=f"contains every token of the key form {form!r}",
                       gold_rev=gold.gold_rev, scorer=scorer, judged_at=utc_now())
    if judge is None:
        return Verdict(q.qid, "not-judged", None, reason="tier 1 could not pass it and no judge is configured",
                       gold_rev=gold.gold_rev, scorer=scorer, judged_at=utc_now())
    return judge.judge(q, answer_text)
