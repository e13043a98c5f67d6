"""Derived state: per-run records, per-arm summaries and the per-question table, from the units alone.

Everything here is a pure function of the unit records (and the questions), so `qa rescore` can swap in
new verdicts and recompute every figure, and a report can regenerate them byte for byte.

A run is one arm x one repetition. It is valid when every question got an answer (no `infra` answer);
an invalid run is published with its reason and no score, and never enters a mean. An arm's `accuracy`
is the share passed over its valid runs, and is null while any question is not judged or has an `infra`
verdict: a partial score is not presented as a score.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict

from ctxgauge.providers import Usage
from ctxgauge.suites.qa.sources._battery import Question
from ctxgauge.suites.qa.judging._panel import panel_summary
from ctxgauge.suites.qa._trust import ArmScores, trust_gate


def unit_id(arm_slug: str, rep: int, qid: str) -> str:
    return f"{arm_slug}/rep{rep:02d}/{qid}"


def all_verdicts(units: list[dict], questions: list[Question]) -> list[dict]:
    """A verdict for every question, in question order: the scored one, or for a gap its kind (`infra`:
    an outage or a failed harness; `skipped`; `unanswered`: no unit at all) with the reason."""
    by_q = {u["qid"]: u for u in units}
    out = []
    for q in questions:
        u = by_q.get(q.qid)
        if u is not None and u.get("verdict") and u.get("status") != "failed":
            out.append(u["verdict"])
            continue
        result = "unanswered" if u is None else "infra" if u.get("status") == "failed" else str(
            u.get("answer_status") or "skipped")
        why = "no answer was recorded" if u is None else u.get("reason") or (u.get("verdict") or {}).get("reason")
        out.append({"qid": q.qid, "result": result, "tier": None, "reason": why or "",
                    **({"judge_verdict": u["verdict"]} if u is not None and u.get("verdict") else {})})
    return out


ADJUDICATIONS_FILE = "adjudications.jsonl"
"""Human verdicts of a run, one JSON object a line, in the order made (see `_adjudicate`)."""


def read_adjudications(run_dir) -> list[dict]:
    """Every adjudication of a run directory, in the order made (none: an empty list)."""
    import json
    from pathlib import Path

    path = Path(run_dir) / ADJUDICATIONS_FILE
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def adjudicated(units: list[dict], adjudications: list[dict]) -> list[dict]:
    """The units with each human adjudication in place of the judge's verdict (the latest per unit wins);
    the judge's verdict is kept under `judge_verdict`, never lost."""
    latest = {a["unit"]: a for a in adjudications}
    out = []
    for u in units:
        a = latest.get(u["id"])
        if a is None or u.get("status") != "ok":
            out.append(u)
            continue
        old = u.get("verdict") or {}
        out.append({**u, "verdict": {"qid": u["qid"], "result": a["verdict"], "tier": "human", "reason": a["why"],
                                     "facets": {}, "judge": f"human:{a['by']}", "gold_rev": old.get("gold_rev"),
                                     "scorer": old.get("scorer"), "judged_at": a["at"], "adjudication": a,
                                     "judge_verdict": old}})
    return out


def _score(unit: dict) -> float | None:
    """0-100 for a decided pass/fail verdict or a scored rubric answer, else None."""
    v = unit.get("verdict") or {}
    if unit.get("scoring") == "rubric":
        return v.get("aggregate") if v.get("result") == "scored" else None
    if v.get("result") in ("pass", "fail", "adjudicate"):
        return 100.0 if v["result"] == "pass" else 0.0
    return None


def _scale(unit: dict) -> str | None:
    """Rubric scale of a scored unit: grounded and ungrounded aggregates are never averaged together."""
    v = unit.get("verdict") or {}
    if unit.get("scoring") != "rubric" or v.get("result") != "scored":
        return None
    return "grounded" if v.get("grounded") else "ungrounded"


def _by_scale(units: list[dict]) -> dict[str, float]:
    """Mean rubric aggregate per scale, for the scales present."""
    out: dict[str, list[float]] = defaultdict(list)
    for u in units:
        if (sc := _scale(u)) is not None:
            out[sc].append(float((u.get("verdict") or {})["aggregate"]))
    return {k: statistics.fmean(v) for k, v in sorted(out.items())}


def run_record(arm: dict, rep: int, units: list[dict], questions: list[Question], identity: dict) -> dict:
    """The record of one arm x repetition: identity, validity, economics, scoring."""
    by_q = {u["qid"]: u for u in units}
    missing = [q.qid for q in questions if q.qid not in by_q]
    infra = [q.qid for q in questions if q.qid in by_q and by_q[q.qid].get("answer_status") == "infra"]
    skipped = [q.qid for q in questions if q.qid in by_q and by_q[q.qid].get("answer_status") == "skipped"]
    if skipped and len(skipped) == len(questions):
        validity = {"ok": False, "reason": "skipped", "detail": by_q[skipped[0]].get("reason")}
    elif missing or infra or skipped:
        detail = f"unanswered: {', '.join((missing + infra + skipped)[:10])}"
        validity = {"ok": False, "reason": "did-not-finish", "detail": detail}
    else:
        validity = {"ok": True, "reason": "run_ok", "detail": None}
    usage, judge_usage = Usage(), Usage()
    tools: Counter[str] = Counter()
    costs = []
    adopted = seconds = llm_calls = cache_hits = 0
    for u in units:
        f = u.get("figures") or {}
        usage += Usage.from_dict(f)
        judge_usage += Usage.from_dict({k[6:]: v for k, v in (u.get("verdict") or {}).items() if k.startswith("judge_")})
        tools.update(f.get("tool_calls") or {})
        adopted += int(bool((f.get("tool_calls") or {}).get("search")))
        seconds += f.get("seconds") or 0.0
        llm_calls += f.get("llm_calls") or 0
        cache_hits += f.get("cache_hits") or 0
        costs.append(f.get("cost_usd"))
    cost = sum(costs) if costs and all(c is not None for c in costs) else None
    sources = {(u.get("figures") or {}).get("token_source") for u in units if u.get("answer_status") == "ok"}
    token_source = sources.pop() if len(sources) == 1 else ("mixed" if sources else None)
    verdicts = [u.get("verdict") or {} for u in units]
    results = Counter(v.get("result") for v in verdicts if v)
    scores = [s for u in units if (s := _score(u)) is not None]
    by_diff: dict[str, dict[str, int]] = defaultdict(lambda: {"passed": 0, "questions": 0})
    for q in questions:
        if q.qid in by_q:
            d = by_diff[str(q.difficulty) if q.difficulty else "unrated"]
            d["questions"] += 1
            d["passed"] += int((by_q[q.qid].get("verdict") or {}).get("result") == "pass")
    scales = _by_scale(units)
    mixed = len(scales) > 1  # grounded and ungrounded: two scales, no single mean
    complete = validity["ok"] and not results.get("infra") and not results.get("not-judged") \
        and not results.get("unscored")
    scoring = {
        "total": results.get("pass", 0) if complete and arm.get("scoring") != "rubric" else None,
        "denominator": len(questions),
        "mean_score": statistics.fmean(scores) if complete and scores and not mixed else None,
        "mean_score_by_scale": scales or None,
        "by_difficulty": dict(sorted(by_diff.items())),
        "tier_census": {"tier1": sum(v.get("tier") == 1 for v in verdicts),
                        "tier2": sum(v.get("tier") == 2 for v in verdicts),
                        "human": sum(v.get("tier") == "human" for v in verdicts)},
        "scorer": sorted({v["scorer"] for v in verdicts if v.get("scorer")}) or None,
        "adjudications": [v["adjudication"] for v in sorted(verdicts, key=lambda v: v.get("qid") or "")
                          if v.get("adjudication")],
        "results": dict(sorted((k, n) for k, n in results.items() if k)),
        "adjudicate": sorted(u["qid"] for u in units if (u.get("verdict") or {}).get("result") == "adjudicate"),
        "infra": sorted(u["qid"] for u in units if (u.get("verdict") or {}).get("result") == "infra"),
        "note": ("grounded and ungrounded rubric scores are different scales: see mean_score_by_scale" if mixed
                 else None if complete else "no score: the run did not finish or some verdicts are missing"),
    }
    economics = {**usage.to_dict(), "token_source": token_source, "cost_usd": cost, "cost_basis": arm.get("cost_basis"),
                 "seconds": round(seconds, 3), "llm_calls": llm_calls, "cache_hits": cache_hits,
                 "tool_calls": {"total": sum(tools.values()), "by_tool": dict(sorted(tools.items())),
                                "by_class": {"index": tools.get("search", 0), "read": tools.get("read", 0),
                                             "other": sum(n for t, n in tools.items() if t not in ("search", "read"))}},
                 "index_adoption": {"questions_with_search": adopted, "questions": len(units)},
                 "judge": judge_usage.to_dict(),
                 "per_question": [{"qid": u["qid"], **{k: (u.get("figures") or {}).get(k) for k in (
                     "tokens_input", "tokens_output", "tokens_cache_read", "tokens_cache_write", "token_source",
                     "llm_calls", "seconds", "cost_usd")}, "tool_calls": (u.get("figures") or {}).get("tool_calls") or {},
                     **_context_figures(u)}
                     for u in sorted(units, key=lambda u: u["qid"])]}
    counted = [c for u in units if (c := _context_figures(u).get("context_tokens")) is not None]
    if counted:  # a context arm: ctxgauge's count of its packed contexts, beside the provider's input tokens
        economics["context_tokens"] = sum(counted)
    battery = identity.get("battery") or {}
    ident = {**identity, "repetition": rep, "family": arm.get("kind"), "exam": identity.get("protocol"),
             "denominator": len(questions), "repository": battery.get("repository"), "commit": battery.get("commit"),
             "run_key": run_key(identity, arm, rep)}
    return {"identity": ident, "validity": validity, "economics": economics, "scoring": scoring}


def _context_figures(unit: dict) -> dict:
    """A context arm's per-question context figures (none for other arms and older records)."""
    f = unit.get("figures") or {}
    return {k: f[k] for k in ("context_tokens", "context_ran_out") if k in f}


def context_summary(kind: str | None, valid_units: list[dict], passed: int, decided: bool) -> dict:
    """A context arm's packed-context figures over its valid repetitions: `context_tokens` (their sum, as
    ctxgauge counted them), `context_tokens_per_correct` (that sum over the answers passed: Corograph's
    measure, so "as accurate with less context" is measured; None with no decided score or no correct
    answer, never infinity) and `context_ran_out` (answers whose ranking ran out before the budget). Empty
    for other arms, and for a context arm with no valid repetition (no model: nothing was answered)."""
    counted = [int(f["context_tokens"]) for u in valid_units
               if isinstance(f := u.get("figures"), dict) and f.get("context_tokens") is not None]
    if kind != "context" or not counted:
        return {}
    total = sum(counted)
    return {"context_tokens": total,
            "context_tokens_per_correct": total / passed if decided and passed else None,
            "context_ran_out": sum(bool((u.get("figures") or {}).get("context_ran_out")) for u in valid_units)}


def run_key(identity: dict, arm: dict, rep: int) -> str:
    """What makes runs comparable, as one string: battery hash, protocol, arm, model, judge, scorer, plus
    the repetition (two runs with the same key but the repetition are repeats of one measurement)."""
    return "|".join(str(x) for x in comparable_key(identity, arm["arm"]) + (f"rep{rep:02d}",))


def comparable_key(identity: dict, arm: str) -> tuple:
    """(battery hash, protocol, arm, model, judge, scorer, rubric): runs sharing it may be averaged."""
    battery, model, judge = identity.get("battery") or {}, identity.get("model") or {}, identity.get("judge") or {}
    return (battery.get("hash"), identity.get("protocol"), arm, model.get("model"), judge.get("model"),
            identity.get("scorer"), identity.get("rubric"))


COMPARISON_SEED = 0
"""Seed of the paired bootstrap and randomization test of arm against baseline arm."""


def compare_arms(per_question: dict[str, dict[str, list[float]]], baseline: str | None) -> dict | None:
    """Each arm against the named baseline arm, paired over the questions both scored (each question's
    score averaged over its valid repetitions): mean difference with its seeded 95% bootstrap interval,
    randomization p-value, win/tie/loss, and Cohen's d beside them. None without a baseline arm."""
    from ctxgauge.metrics import cohens_d, paired_comparison

    if baseline is None or baseline not in per_question:
        return None
    base = per_question[baseline]
    out = {}
    for arm, scores in per_question.items():
        if arm == baseline:
            continue
        qids = sorted(set(scores) & set(base))
        if not qids:
            out[arm] = {"n": 0, "note": "no question scored in both arms"}
            continue
        a = [statistics.fmean(scores[q]) for q in qids]
        b = [statistics.fmean(base[q]) for q in qids]
        cmp = paired_comparison(a, b, COMPARISON_SEED, n_resamples=2000)
        out[arm] = {**cmp.to_dict(), "cohens_d": cohens_d(a, b)}
    return {"baseline": baseline, "arms": out}


def summarize(arms: list[dict], repeat: int, units: list[dict], questions: list[Question],
              evidence: dict[str, tuple[str, ...]], identity: dict, baseline: str | None = None) -> dict:
    """`{summary, questions, runs, trust, skipped}` for the whole invocation. `arms` are dicts with
    `arm` (spec string), `slug`, `kind`, `scoring`, `status`, `reason`, `cost_basis`."""
    by_arm: dict[str, list[dict]] = defaultdict(list)
    for u in units:
        by_arm[u["arm"]].append(u)
    summary, runs, trust_in, skipped = {}, [], [], []
    paired: dict[str, dict[str, list[float]]] = {}
    for arm in arms:
        name = arm["arm"]
        arm_units = by_arm.get(name, [])
        recs = []
        for rep in range(1, repeat + 1):
            rep_units = [u for u in arm_units if u["rep"] == rep]
            rec = run_record(arm, rep, rep_units, questions, {**identity, "arm": name, "engine": arm.get("engine")})
            recs.append(rec)
            runs.append({"arm": name, "repetition": rep, "path": f"arms/{arm['slug']}/rep{rep:02d}",
                         **{k: rec[k] for k in ("validity", "scoring")}})
        valid = [(r, [u for u in arm_units if u["rep"] == r["identity"]["repetition"]])
                 for r in recs if r["validity"]["ok"]]
        valid_units = [u for _, us in valid for u in us]
        results = Counter((u.get("verdict") or {}).get("result") for u in valid_units)
        mixed = len(_by_scale(valid_units)) > 1
        decided_all = bool(valid) and not results.get("not-judged") and not results.get("infra") \
            and not results.get("unscored") and not mixed
        econ = [r["economics"] for r in recs]
        costs = [e["cost_usd"] for e in econ]
        hits = [bool(set((u.get("figures") or {}).get("retrieved") or ()) & set(evidence.get(u["qid"], ())))
                for u in arm_units if u["rep"] == 1 and evidence.get(u["qid"])
                and (u.get("figures") or {}).get("retrieved") is not None]
        tools: Counter[str] = Counter()
        for e in econ:
            tools.update(e["tool_calls"]["by_tool"])
        rep_means = [r["scoring"]["mean_score"] for r, _ in valid if r["scoring"]["mean_score"] is not None]
        rubric = arm.get("scoring") == "rubric"
        status = arm.get("status") or "measured"
        summary[name] = {
            "status": status, "reason": arm.get("reason"),
            "questions": len(valid_units),
            "passed": results.get("pass", 0), "failed": results.get("fail", 0),
            "adjudicate": results.get("adjudicate", 0), "not_judged": results.get("not-judged", 0),
            "infra": results.get("infra", 0) + sum(u.get("answer_status") == "infra" for u in arm_units),
            "accuracy": (results.get("pass", 0) / len(valid_units)) if decided_all and not rubric and valid_units else None,
            "mean_score": statistics.fmean(rep_means) if rep_means and decided_all else None,
            "mean_score_by_scale": _by_scale(valid_units) or None,
            "runs": len(recs), "valid_runs": len(valid),
            "tokens": sum((Usage.from_dict(e) for e in econ), Usage()).to_dict(),
            "judge_tokens": sum((Usage.from_dict(e["judge"]) for e in econ), Usage()).to_dict(),
            "cost_usd": sum(costs) if costs and all(c is not None for c in costs) and status == "measured" else None,
            "cost_basis": arm.get("cost_basis"),
            "retrieval_hit_rate": sum(hits) / len(hits) if hits else None,
            "panel": panel_summary([u.get("verdict") or {} for u in valid_units]),
            "tool_calls": dict(sorted(tools.items())),
            "index_adoption": (sum(e["index_adoption"]["questions_with_search"] for e in econ) /
                               max(1, sum(e["index_adoption"]["questions"] for e in econ))) if arm["kind"] == "tool" else None,
            **context_summary(arm.get("kind"), valid_units, results.get("pass", 0), decided_all and not rubric),
        }
        if status != "measured":
            skipped.append({"arm": name, "reason": arm.get("reason")})
        per_q: dict[str, list[float]] = defaultdict(list)
        zero = scored = 0
        for u in valid_units:
            s = _score(u)
            if s is None:
                continue
            per_q[u["qid"]].append(s)
            scored += 1
            zero += int(s == 0 and (rubric or not (u.get("answer_text_len") or 0)))
        # Retrieval is recorded per first-repetition evaluation; the gate measures a hit rate only when
        # most evaluations record one (a few hits over many questions would read as a rate of the whole).
        evaluations = sum(1 for u in arm_units if u["rep"] == 1 and u.get("answer_status") != "infra")
        agreement = [float(p["agreement"]) for u in valid_units
                     if isinstance(p := (u.get("verdict") or {}).get("panel"), dict) and p.get("agreement") is not None]
        trust_in.append(ArmScores(name, arm["kind"], dict(per_q) if decided_all else {},
                                  rep_means if decided_all else [], zero, scored, hits, evaluations, agreement))
        if decided_all:
            paired[name] = dict(per_q)
    table = []
    for q in questions:
        row = {"qid": q.qid, "difficulty": q.difficulty, "categories": list(q.categories), "arms": {}}
        for arm in arms:
            got = sorted((u for u in by_arm.get(arm["arm"], []) if u["qid"] == q.qid), key=lambda u: u["rep"])
            row["arms"][arm["arm"]] = [(u.get("verdict") or {}).get("result") or u.get("answer_status") for u in got]
        table.append(row)
    if baseline is None and any(a["arm"] == "none" for a in arms):
        baseline = "none"  # the model alone: what every context is measured against
    trust = trust_gate(trust_in, model=identity.get("model"), judge=identity.get("judge"))
    return {"summary": summary, "questions": table, "runs": runs, "trust": trust, "skipped": skipped,
            "comparisons": compare_arms(paired, baseline)}
