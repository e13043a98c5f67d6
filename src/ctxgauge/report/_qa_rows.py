"""The qa suite's rows for summaries and exports: the leaderboard's attempts (one per arm and repetition),
per-question verdicts, per-repetition score, token and cost rows, index adoption of the tool arms, the rate
tables costs were estimated from, and what must match for two qa runs to be averaged.

Reads what `_qa`'s shapes declare, plus each repetition's own `record.json` (its economics); a missing or
unreadable one shows its figures as not measured, never as zero. The report section is `_qa`'s.
"""

from __future__ import annotations

import json
from typing import Any

from ctxgauge.records import RunRef
from ctxgauge.report._leaderboard import Attempt, Value


def arms(run: RunRef) -> dict[str, dict[str, Any]]:
    """Arm spec -> its summary in a finished run, in the order the run was given its arms (run.json
    stores its keys sorted)."""
    summary = run.results.get("summary") or {}
    order = [a for a in run.subject.systems if a in summary]
    return {a: summary[a] for a in order + sorted(set(summary) - set(order))}


def rep_values(run: RunRef, arm: str) -> list[tuple[bool, str, dict[str, float | None]]]:
    """Per repetition of an arm: (valid, validity reason, metric -> value) for accuracy, tokens, cost and
    their per-correct ratios, read from the repetition's own `record.json` (economics) and the run's
    `results.runs`."""
    out = []
    for r in run.results.get("runs") or []:
        if r.get("arm") != arm:
            continue
        ok = bool((r.get("validity") or {}).get("ok"))
        sc = r.get("scoring") or {}
        total, den = sc.get("total"), sc.get("denominator")
        econ = _economics(run, r)
        used = sum(int(econ.get(k) or 0) for k in ("tokens_input", "tokens_output", "tokens_cache_read",
                                                   "tokens_cache_write")) if econ else None
        cost = econ.get("cost_usd")
        acc = total / den if ok and total is not None and den else None
        good = total if ok and total else None  # correct answers, when there are any
        reason = str((r.get("validity") or {}).get("reason") or "")
        out.append((ok, reason, {"accuracy": acc, "tokens": used if ok else None, "cost_usd": cost if ok else None,
                         "tokens_per_correct": used / good if good and used is not None else None,
                         "cost_per_correct": cost / good if good and cost is not None else None}))
    return out


def arm_values(run: RunRef, arm: str) -> dict[str, float | None]:
    """Arm-level figures only the summary holds (measured over the first repetition)."""
    return {"retrieval_hit_rate": arms(run).get(arm, {}).get("retrieval_hit_rate")}


def repetitions(run: RunRef) -> int:
    """Attempts per arm: the run's repetitions."""
    return int(run.spec.get("repeat") or 1)


LOWER_IS_BETTER = {"tokens", "cost_usd", "tokens_per_correct", "cost_per_correct"}
"""The qa figures where less is better."""

_DECIDED = {"pass": 1.0, "fail": 0.0, "adjudicate": 0.0}


def _question_values(run: RunRef, arm: str) -> list[list[tuple[str, float]]]:
    """Per repetition of an arm (in `rep_values`' order): (qid, 1 passed / 0 not) for every question decided
    in it, in question order; [] for a repetition whose decided questions do not add up to its accuracy's
    denominator (its accuracy then has no per-question values: no interval is better than a wrong one)."""
    out = []
    questions = run.results.get("questions") or []
    for r in run.results.get("runs") or []:
        if r.get("arm") != arm:
            continue
        i = int(r.get("repetition") or 1) - 1
        got = []
        for q in questions:
            verdicts = (q.get("arms") or {}).get(arm) or []
            if 0 <= i < len(verdicts) and verdicts[i] in _DECIDED:
                got.append((str(q["qid"]), _DECIDED[verdicts[i]]))
        sc = r.get("scoring") or {}
        passed = sum(v for _, v in got)
        if len(got) != sc.get("denominator") or passed != sc.get("total"):
            got = []
        out.append(got)
    return out


def leaderboard(run: RunRef) -> list[Attempt]:
    """Per arm of a finished run: a skipped arm once; otherwise one attempt per repetition (valid; skipped
    when no answer was given, as with no model; else did-not-finish) with its figures, then the arm-level
    figures of the summary."""
    out = []
    for arm, summary in arms(run).items():
        if (summary.get("status") or "measured") == "skipped":
            out.append(Attempt(arm, "skipped"))
            continue
        seed = int(run.spec.get("seed") or 0)
        for (ok, reason, values), per_question in zip(rep_values(run, arm), _question_values(run, arm)):
            outcome = "valid" if ok else "skipped" if reason == "skipped" else "dnf"
            figures = []
            for m, v in values.items():
                if m == "accuracy" and v is not None and per_question:
                    ids, units = zip(*per_question)
                    figures.append(Value(m, v, units, seed, unit_ids=ids, repetitions=True))
                else:
                    figures.append(Value(m, v, higher_is_better=m not in LOWER_IS_BETTER))
            out.append(Attempt(arm, outcome, tuple(figures) if ok else ()))
        out.append(Attempt(arm, None, tuple(Value(m, v) for m, v in arm_values(run, arm).items())))
    return out


def item_rows(run: RunRef) -> list[dict]:
    """Per question and arm: the verdict of every repetition."""
    rows = []
    for q in run.results.get("questions") or []:
        for arm, got in sorted((q.get("arms") or {}).items()):
            rows.append({"qid": q["qid"], "arm": arm, "difficulty": q.get("difficulty"),
                         "categories": ";".join(q.get("categories") or []), "verdicts": list(got)})
    return rows


def _economics(run: RunRef, r: dict) -> dict:
    """The `economics` of a repetition's record.json ({} when missing or unreadable: its figures show as not
    measured, never as zero). `rep_values` and `run_rows` both read it here, so they agree on what is
    unreadable."""
    rec = run.path / str(r.get("path") or "") / "record.json"
    try:
        data = json.loads(rec.read_text(encoding="utf-8")) if r.get("path") and rec.is_file() else {}
    except ValueError:
        return {}
    econ = data.get("economics") if isinstance(data, dict) else None
    return econ if isinstance(econ, dict) else {}


def comparable(run: RunRef) -> dict[str, str]:
    """Battery hash, protocol, judge, scorer version and rubric: two qa runs differing in any of them
    measured different things and are never averaged (a run before scorer versions was ctxgauge-qa-1)."""
    context = run.record.context or {}
    ident = context.get("source_identity") or {}
    return {"dataset_hash": str(ident.get("hash") or ""), "protocol": str(run.spec.get("protocol") or ""),
            "judge": str(run.spec.get("judge") or ""), "scorer": str(run.spec.get("scorer") or "ctxgauge-qa-1"),
            "rubric": str(context.get("rubric") or "")}


def scorers(run: RunRef) -> set[str]:
    """The scorer versions of a run's verdicts (the run's own when it has no verdict yet)."""
    found = {str(v.get("scorer")) for u in run.units() if isinstance(v := u.data.get("verdict"), dict)
             and v.get("scorer")}
    return found or {comparable(run)["scorer"]}


def run_rows(run: RunRef) -> list[dict]:
    """Per arm x repetition: score over denominator, the four token columns with their source, cost
    with its basis, validity."""
    out = []
    for r in (run.results or {}).get("runs") or []:
        econ, sc = _economics(run, r), r.get("scoring") or {}
        out.append({"arm": r.get("arm"), "repetition": r.get("repetition"),
                    "valid": bool((r.get("validity") or {}).get("ok")),
                    "validity": (r.get("validity") or {}).get("reason"),
                    "score": sc.get("total"), "denominator": sc.get("denominator"),
                    **{k: econ.get(k) for k in ("tokens_input", "tokens_output", "tokens_cache_read",
                                                "tokens_cache_write", "token_source", "cost_usd", "cost_basis")}})
    return out


INDEX_TOOLS = ("search",)
"""Tool calls that query the arm's index (the tool arm's `search`; a harness reporting calls by that
name). `read` and a harness's setup (building its index) are not index calls."""


def adoption(run: RunRef) -> list[dict]:
    """Per tool or command arm of a finished run: question runs that called the arm's index at least
    once, over all its answered question runs, and the index calls summed."""
    kinds = {a.get("arm"): a.get("kind") for a in (run.results or {}).get("arms") or []}
    agg: dict[str, dict] = {}
    for u in run.units():
        d = u.data
        arm = d.get("arm")
        if kinds.get(arm) not in ("tool", "command") or d.get("answer_status") != "ok":
            continue
        calls = sum(int(n) for t, n in (u.figures.get("tool_calls") or {}).items() if t in INDEX_TOOLS)
        a = agg.setdefault(arm, {"arm": arm, "kind": kinds[arm], "question_runs": 0, "adopted": 0, "index_calls": 0})
        a["question_runs"] += 1
        a["adopted"] += int(calls > 0)
        a["index_calls"] += calls
    return [agg[k] for k in sorted(agg)]


def rate_tables(run: RunRef) -> list[dict]:
    """The rate tables the run's cost estimates used (recorded per arm)."""
    seen = {}
    for a in (run.results or {}).get("arms") or []:
        if isinstance(a.get("rates"), dict):
            seen[a["rates"].get("version")] = a["rates"]
    return [seen[k] for k in sorted(seen, key=str)]
