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
from ctxgauge.suites.qa._battery import Question
from ctxgauge.suites.qa._trust import ArmScores, trust_gate


def unit_id(arm_slug: str, rep: int, qid: str) -> str:
    return f"{arm_slug}/rep{rep:02d}/{qid}"


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
                        "tier2": sum(v.get("tier") == 2 for v in verdicts)},
        "results": dict(sorted((k, n) for k, n in results.items() if k)),
        "adjudicate": sorted(u["qid"] for u in units if (u.get("verdict") or {}).get("result") == "adjudicate"),
        "infra": sorted(u["qid"] for u in units if (u.get("verdict") or {}).get("result") == "infra"),
        "note": ("grounded and ungrounded rubric scores are different scales: see mean_score_by_scale" if mixed
                 else None if complete else "no score: the run did not finish or some verdicts are missing"),
    }
    economics = {**usage.to_dict(), "cost_usd": cost, "cost_basis": arm.get("cost_basis"),
                 "seconds": round(seconds, 3), "llm_calls": llm_calls, "cache_hits": cache_hits,
                 "tool_calls": {"total": sum(tools.values()), "by_tool": dict(sorted(tools.items()))},
                 "index_adoption": {"questions_with_search": adopted, "questions": len(units)},
                 "judge": judge_usage.to_dict()}
    return {"identity": {**identity, "repetition": rep}, "validity": validity, "economics": economics,
            "scoring": scoring}


def summarize(arms: list[dict], repeat: int, units: list[dict], questions: list[Question],
              evidence: dict[str, tuple[str, ...]], identity: dict) -> dict:
    """`{summary, questions, runs, trust, skipped}` for the whole invocation. `arms` are dicts with
    `arm` (spec string), `slug`, `kind`, `scoring`, `status`, `reason`, `cost_basis`."""
    by_arm: dict[str, list[dict]] = defaultdict(list)
    for u in units:
        by_arm[u["arm"]].append(u)
    summary, runs, trust_in, skipped = {}, [], [], []
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
            "tool_calls": dict(sorted(tools.items())),
            "index_adoption": (sum(e["index_adoption"]["questions_with_search"] for e in econ) /
                               max(1, sum(e["index_adoption"]["questions"] for e in econ))) if arm["kind"] == "tool" else None,
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
        trust_in.append(ArmScores(name, arm["kind"], dict(per_q) if decided_all else {},
                                  rep_means if decided_all else [], zero, scored, hits))
    table = []
    for q in questions:
        row = {"qid": q.qid, "difficulty": q.difficulty, "categories": list(q.categories), "arms": {}}
        for arm in arms:
            got = sorted((u for u in by_arm.get(arm["arm"], []) if u["qid"] == q.qid), key=lambda u: u["rep"])
            row["arms"][arm["arm"]] = [(u.get("verdict") or {}).get("result") or u.get("answer_status") for u in got]
        table.append(row)
    return {"summary": summary, "questions": table, "runs": runs, "trust": trust_gate(trust_in), "skipped": skipped}
