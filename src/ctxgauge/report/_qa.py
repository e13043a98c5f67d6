"""The qa suite's part of a report: accuracy per arm with its interval, tokens per correct answer, cost,
the per-question verdicts and the trust gate. The rows summaries and exports read (leaderboard attempts,
per-question verdicts, runs, adoption, rate tables) are `_qa_rows`'s.

Reads `results.summary[arm]` (accuracy, passed, questions, tokens, cost_usd, retrieval_hit_rate, status,
reason, runs, valid_runs), `results.questions` (per question, per arm, the verdict of each repetition),
`results.runs` (one per arm x repetition with its validity) and `results.trust` (see
`ctxgauge.suites.qa._summary`). An arm without a score (skipped, not judged, did not finish) shows `-`,
never 0.
"""

from __future__ import annotations

import json
from typing import Sequence

from ctxgauge.records import ANY, INT, NUMBER, STRING, ListOf, MapOf, Obj, Opt, RunRef
from ctxgauge.report._common import dnf_note, fmt, interval, label_systems, merge_same, nice_top, num, pct, usd
from ctxgauge.report._model import Bar, BarsFigure, Cell, GridFigure, GridRow, Panel, Section, Table
from ctxgauge.report._qa_rows import arms

ACCURACY_SEED = 0
"""Seed of the accuracy intervals (qa runs record no seed of their own)."""

_ARM = Obj({k: Opt(NUMBER) for k in ("accuracy", "passed", "questions", "cost_usd", "retrieval_hit_rate", "runs",
                                      "valid_runs")}
           | {"tokens": Opt(MapOf(Opt(INT))), "panel": ANY})
RESULTS_SHAPE = Obj({
    "summary": Opt(MapOf(_ARM)),
    "questions": Opt(ListOf(Obj({"qid": ANY, "arms": Opt(MapOf(Opt(ListOf(Opt(STRING))))),
                                 "categories": Opt(ListOf(STRING))}, required=("qid",)))),
    "runs": Opt(ListOf(Obj({"validity": Opt(Obj({})), "scoring": Opt(Obj({}))}))),
    "trust": Opt(Obj({"checks": Opt(ListOf(Obj({"value": Opt(NUMBER)})))})),
    "comparisons": Opt(Obj({"arms": Opt(MapOf(Obj({}))) })),
    "arms": Opt(ListOf(Obj({}))), "notes": Opt(ListOf(ANY)),
})
"""What the qa view (this module and `_qa_rows`) reads of a qa run's `results` (checked when the record is
read; other keys are free)."""
SPEC_SHAPE = Obj({"repeat": Opt(INT)})
"""What the qa view reads of a qa run's `spec`."""
UNIT_SHAPE = Obj({"verdict": Opt(Obj({})), "figures": Opt(Obj({"tool_calls": Opt(MapOf(INT))}))})
"""What the qa view reads of a qa unit line."""

VERDICT_LEGEND = {
    "pass": "passed", "fail": "failed", "adjudicate": "needs a human (judge unsure)",
    "infra": "provider outage: a gap, not a zero", "not-judged": "not judged (no judge model)",
    "skipped": "not answered (arm skipped)", "absent": "not asked in this run",
}


def tokens(summary: dict) -> int | None:
    """Every token the answering model read or wrote for this arm (the judge's excluded)."""
    t = summary.get("tokens") or {}
    if not t or (summary.get("status") or "measured") != "measured":
        return None
    return sum(int(t.get(k) or 0) for k in ("tokens_input", "tokens_output", "tokens_cache_read", "tokens_cache_write"))


def per_correct(total: float | None, summary: dict) -> float | None:
    """`total` divided by the correct answers; None with no scored correct answer (never infinity)."""
    passed = summary.get("passed") or 0
    if total is None or summary.get("accuracy") is None or not passed:
        return None
    return total / passed


def _outcomes(run: RunRef, arm: str) -> list[float]:
    # 1 per passed question, 0 per failed or adjudicated one, over the valid repetitions only.
    valid = {r["repetition"] for r in run.results.get("runs") or []
             if r.get("arm") == arm and (r.get("validity") or {}).get("ok")}
    out = []
    for u in run.units():
        if u.data.get("arm") == arm and u.data.get("rep") in valid:
            result = (u.data.get("verdict") or {}).get("result")
            if result in ("pass", "fail", "adjudicate"):
                out.append(1.0 if result == "pass" else 0.0)
    return out


def accuracy(run: RunRef, arm: str) -> tuple[float | None, float | None, float | None]:
    """(accuracy, low, high): the recorded accuracy with a seeded bootstrap interval over its questions."""
    value = arms(run)[arm].get("accuracy")
    if value is None:
        return None, None, None
    _, low, high = interval(_outcomes(run, arm), ACCURACY_SEED)
    return value, low, high


def _same(pair: tuple[str, RunRef]) -> tuple:
    # One measurement: the same arm with the same summary and the same verdict on every question.
    arm, run = pair
    verdicts = [(q.get("qid"), (q.get("arms") or {}).get(arm)) for q in run.results.get("questions") or []]
    return arm, json.dumps(arms(run)[arm], sort_keys=True), json.dumps(verdicts)


def _shown(runs: Sequence[RunRef]) -> tuple[list[tuple[str, RunRef]], list[str]]:
    """The (arm, run) pairs to draw, an arm measured the same way in two runs once, and the runs drawn."""
    merged = merge_same([(arm, run) for run in runs for arm in arms(run)], _same, lambda pair: pair[1])
    return [pair for pair, _ in merged], list(dict.fromkeys(r.rel for _, rs in merged for r in rs))


def _figures(runs: Sequence[RunRef]) -> list[BarsFigure]:
    pairs, sources = _shown(runs)
    labels = label_systems(pairs)
    acc, hit, tpc, cpc = [], [], [], []
    for label, (arm, run) in zip(labels, pairs):
        s = arms(run)[arm]
        value, low, high = accuracy(run, arm)
        acc.append(Bar(label, value, low, high, run=run.rel, text=pct(value) if value is not None else None))
        hit.append(Bar(label, s.get("retrieval_hit_rate"), run=run.rel))
        t = per_correct(tokens(s), s)
        tpc.append(Bar(label, t, run=run.rel, text=None if t is None else f"{t:,.0f}"))
        c = per_correct(s.get("cost_usd"), s)
        cpc.append(Bar(label, c, run=run.rel, text=None if c is None else usd(c)))
    panels = [Panel("accuracy", acc)]
    if any(b.value is not None for b in hit):
        panels.append(Panel("retrieval hit rate", hit))
    out = [BarsFigure("Accuracy per arm", panels, sources,
                      caption="Share of questions passed over the valid repetitions, with a seeded 95% bootstrap "
                      "interval over questions (the whisker). Retrieval hit rate: questions whose evidence file was retrieved.")]
    if any(b.value is not None for b in tpc + cpc):
        out.append(BarsFigure("What a correct answer costs", [
            Panel("tokens per correct answer", tpc, top=nice_top((b.value for b in tpc), floor=1.0)),
            Panel("cost per correct answer (USD)", cpc, top=nice_top((b.value for b in cpc), floor=1e-6)),
        ], sources, caption="Answering model's tokens (input, output and cache) and cost, divided by the answers "
                            "judged correct; the judge's tokens are not included."))
    return out


def _table(runs: Sequence[RunRef]) -> Table:
    pairs, sources = _shown(runs)
    rows = []
    for label, (arm, run) in zip(label_systems(pairs), pairs):
        s = arms(run)[arm]
        status = str(s.get("status") or "measured")
        st = Cell(status, style="good" if status == "measured" else "muted", wrap=False)
        t = tokens(s)
        rows.append([Cell(label, run=run.rel, wrap=False), st, Cell(pct(s.get("accuracy")), num=True),
                     Cell(f"{s.get('passed', 0)}/{s.get('questions', 0)}", num=True), num(t, 0),
                     num(per_correct(t, s), 0), Cell(usd(s.get("cost_usd")), num=True),
                     Cell(usd(per_correct(s.get("cost_usd"), s)), num=True),
                     Cell(pct(s.get("retrieval_hit_rate")), num=True),
                     Cell(f"{s.get('valid_runs', 0)}/{s.get('runs', 0)}", num=True)])
    return Table("Arms: accuracy, tokens and cost",
                 ["arm", "status", "accuracy", "passed", "tokens", "tokens/correct", "cost", "cost/correct",
                  "hit rate", "valid runs"], rows, sources=sources,
                 caption="Cost is estimated from the recorded rate table where the provider reports none; `-` means "
                 "not measured (no model, no judge, or an unpriced model), never zero.")


def _grid(run: RunRef) -> GridFigure:
    questions = run.results.get("questions") or []
    names = list(arms(run))
    columns = [(q["qid"], f"{q['qid']} (difficulty {q.get('difficulty') or '-'}; "
                f"{', '.join(q.get('categories') or [])})") for q in questions]
    rows = []
    for arm in names:
        cells = []
        for q in questions:
            got = (q.get("arms") or {}).get(arm) or []
            first = next((g for g in got if g), None)  # first repetition with an outcome
            cells.append(first if first in VERDICT_LEGEND else ("absent" if first is None else "not-judged"))
        rows.append(GridRow(arm, cells, run=run.rel))
    used = {c for r in rows for c in r.cells}
    legend = {k: v for k, v in VERDICT_LEGEND.items() if k in used or k in ("pass", "fail")}
    return GridFigure(f"Per-question verdicts ({len(questions)} questions, first repetition)", columns, rows, legend,
                      [run.rel], caption="One cell per question.", hover="Hover a cell for its id, difficulty and categories.")


def _trust(run: RunRef) -> list[Table]:
    """The trust gate: the measured checks, one row per check, and the checks not measured collapsed into
    one line naming them (issue 39: a demo without a model showed four bold lines of names over fourteen
    not-measured rows); why each was not measured is a folded per-check table (`--misses`)."""
    trust = run.results.get("trust") or {}
    checks = trust.get("checks") or []
    if not checks:
        return []
    style = {"pass": "good", "warn": "warn", "fail": "bad"}

    def label(c: dict) -> str:
        return f"{c.get('name')}[{c['arm']}]" if c.get("arm") else str(c.get("name"))

    measured = [c for c in checks if c.get("status") != "not-measured"]
    missing = [c for c in checks if c.get("status") == "not-measured"]
    rows = [[Cell(str(c.get("name")), wrap=False), Cell(str(c.get("arm") or "all"), wrap=False),
             Cell(str(c.get("status")), style=style.get(str(c.get("status")), "muted")),
             Cell(fmt(c.get("value"), 4), num=True), Cell(str(c.get("threshold") or "")),
             Cell(str(c.get("detail") or ""))] for c in measured]
    # Never "pass (12 not measured)", which reads as a pass: what was measured, then how many were not.
    head = (f"nothing measured (0 of {len(checks)} checks)" if not measured else
            f"{trust.get('status')} on {len(measured)} of {len(checks)} checks")
    title = head + (f"; {len(missing)} not measured" if missing else "")
    caption = (f"Not measured ({len(missing)}): {', '.join(label(c) for c in missing)}; why, per check: "
               "report --misses (in HTML, the folded table below)." if missing else None)
    out = [Table(f"Trust gate: {title}", ["check", "arm", "status", "value", "needs", "detail"], rows,
                 sources=[run.rel], free=[5], caption=caption)]
    if missing:
        why = [[Cell(str(c.get("name")), wrap=False), Cell(str(c.get("arm") or "all"), wrap=False),
                Cell(str(c.get("threshold") or "")), Cell(str(c.get("detail") or ""))] for c in missing]
        out.append(Table(f"Trust gate: why {len(missing)} check{'s' if len(missing) != 1 else ''} "
                         f"{'were' if len(missing) != 1 else 'was'} not measured", ["check", "arm", "needs", "why"],
                         why, sources=[run.rel], detail=True, free=[3]))
    return out


def _comparisons(run: RunRef) -> Table | None:
    cmp = (run.results or {}).get("comparisons") or {}
    rows = []
    for arm, c in (cmp.get("arms") or {}).items():
        if not c.get("n"):
            continue
        rows.append([Cell(arm, run=run.rel), Cell(str(c["n"]), num=True), Cell(fmt(c["mean_diff"], 1), num=True),
                     Cell(f"[{fmt(c['ci_low'], 1)}, {fmt(c['ci_high'], 1)}]", num=True),
                     Cell(fmt(c["p_value"], 3), num=True), Cell(fmt(c.get("cohens_d"), 2), num=True),
                     Cell(f"{c['wins']}/{c['ties']}/{c['losses']}", num=True)])
    if not rows:
        return None
    return Table(f"Arms against the baseline arm {cmp['baseline']}",
                 ["arm", "questions", "mean diff (points)", "95% interval", "p", "Cohen's d", "win/tie/loss"], rows,
                 sources=[run.rel], caption="Paired over the questions both arms scored (each averaged over its "
                 "valid repetitions); seeded bootstrap interval and randomization test; Cohen's d over the pooled "
                 "standard deviation of the two arms' scores.")


def _panel(run: RunRef) -> Table | None:
    """The judge panel per arm (when `--panel` ran): the role-weighted aggregate, the role scores' standard
    deviation, the agreement score and how many answers the roles disagreed on."""
    rows = [[Cell(arm, run=run.rel), Cell(f"{p['scored']}/{p['answers']}", num=True),
             Cell(fmt(p.get("aggregate"), 1), num=True), Cell(fmt(p.get("sd"), 1), num=True),
             Cell(fmt(p.get("agreement"), 2), num=True), Cell(str(p.get("flagged", 0)), num=True)]
            for arm, s in arms(run).items() if isinstance(p := s.get("panel"), dict)]
    if not rows:
        return None
    return Table("Judge panel (technical expert, developer advocate, doc reviewer)",
                 ["arm", "scored", "aggregate", "sd", "agreement", "flagged"], rows, sources=[run.rel],
                 caption="Per answer: the role-weighted mean of the three role scores, their standard deviation, "
                 "agreement 1 - sd/50, and a flag when two roles are more than 30 points apart or split on a "
                 "numeric claim; here the mean over the answers the panel scored.")


def _key(run: RunRef) -> tuple[str, str]:
    return run.subject.dataset, run.subject.model or ""


def section(suite: str, title: str, runs: Sequence[RunRef]) -> Section:
    """The qa section: per battery and model, accuracy and cost figures, the arms table, verdicts, trust."""
    sec = Section(suite, title, notes=dnf_note(runs))
    done = [r for r in runs if r.finished]
    for key in dict.fromkeys(_key(r) for r in done):
        group = [r for r in done if _key(r) == key]
        for fig in _figures(group):
            fig.title = f"{key[0]} · {key[1] or 'no model'}: {fig.title}"
            sec.blocks.append(fig)
        sec.blocks.append(_table(group))
        sec.notes += [f"{r.rel}: {arm}: {s.get('status')}: {s['reason']}" for r in group
                      for arm, s in arms(r).items() if s.get("reason")]
        # What the run itself noted (no judge configured, records a question set read tolerantly).
        sec.notes += [f"{r.rel}: note: {n}" for r in group for n in r.results.get("notes") or []]
        for run in group:
            grid = _grid(run)
            # A grid of nothing but unanswered cells says less than the note that no model answered.
            if any(c not in ("skipped", "absent") for row in grid.rows for c in row.cells):
                sec.blocks.append(grid)
            for table in (_comparisons(run), _panel(run), *_trust(run)):
                if table is not None:
                    sec.blocks.append(table)
    return sec
