"""The qa suite's part of a report: accuracy per arm with its interval, tokens per correct answer (and a
context arm's packed context tokens per correct answer), cost,
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

from ctxgauge.results import ArmSummary, TypedRun
from ctxgauge.results._qa import TrustCheck
from ctxgauge.results._qa_files import PanelSummary
from ctxgauge.report._common import started_at, dnf_note, fmt, interval, label_systems, merge_same, nice_top, num, pct, usd
from ctxgauge.report._model import Bar, BarsFigure, Cell, GridFigure, GridRow, Panel, Section, Table
from ctxgauge.report._qa_rows import MEASURED, arms

ACCURACY_SEED = 0
"""Seed of the accuracy intervals (qa runs record no seed of their own)."""

VERDICT_LEGEND = {
    "pass": "passed", "fail": "failed", "adjudicate": "needs a human (judge unsure)",
    "infra": "provider outage: a gap, not a zero", "not-judged": "not judged (no judge model)",
    "skipped": "not answered (arm skipped)", "absent": "not asked in this run",
}


def tokens(summary: ArmSummary) -> int | None:
    """Every token the answering model read or wrote for this arm (the judge's excluded)."""
    t = summary.tokens
    if t is None or (summary.status or MEASURED) != MEASURED:
        return None
    return t.tokens_input + t.tokens_output + t.tokens_cache_read + t.tokens_cache_write


def per_correct(total: float | None, summary: ArmSummary) -> float | None:
    """`total` divided by the correct answers; None with no scored correct answer (never infinity)."""
    passed = summary.passed or 0
    if total is None or summary.accuracy is None or not passed:
        return None
    return total / passed


def _outcomes(run: TypedRun, arm: str) -> list[float]:
    # 1 per passed question, 0 per failed or adjudicated one, over the valid repetitions only.
    valid = {r.repetition for r in run.results.runs
             if r.arm == arm and r.validity is not None and r.validity.ok}
    out = []
    for u in run.units():
        if u.arm == arm and u.rep in valid:
            result = u.verdict.result if u.verdict is not None else None
            if result in ("pass", "fail", "adjudicate"):
                out.append(1.0 if result == "pass" else 0.0)
    return out


def accuracy(run: TypedRun, arm: str) -> tuple[float | None, float | None, float | None]:
    """(accuracy, low, high): the recorded accuracy with a seeded bootstrap interval over its questions."""
    value = arms(run)[arm].accuracy
    if value is None:
        return None, None, None
    _, low, high = interval(_outcomes(run, arm), ACCURACY_SEED)
    return value, low, high


def _same(pair: tuple[str, TypedRun]) -> tuple:
    # One measurement: the same arm with the same summary and the same verdict on every question.
    arm, run = pair
    verdicts = [(q.qid, q.arms.get(arm)) for q in run.results.questions]
    return arm, json.dumps(arms(run)[arm].to_json(), sort_keys=True), json.dumps(verdicts)


def _shown(runs: Sequence[TypedRun]) -> tuple[list[tuple[str, TypedRun]], list[str]]:
    """The (arm, run) pairs to draw, an arm measured the same way in two runs once, and the runs drawn."""
    merged = merge_same([(arm, run) for run in runs for arm in arms(run)], _same, lambda pair: pair[1])
    return [pair for pair, _ in merged], list(dict.fromkeys(r.rel for _, rs in merged for r in rs))


def _figures(runs: Sequence[TypedRun]) -> list[BarsFigure]:
    pairs, sources = _shown(runs)
    labels = label_systems(pairs)
    acc, hit, tpc, cpc = [], [], [], []
    for label, (arm, run) in zip(labels, pairs):
        s = arms(run)[arm]
        value, low, high = accuracy(run, arm)
        acc.append(Bar(label, value, low, high, run=run.rel, text=pct(value) if value is not None else None))
        hit.append(Bar(label, s.retrieval_hit_rate, run=run.rel))
        t = per_correct(tokens(s), s)
        tpc.append(Bar(label, t, run=run.rel, text=None if t is None else f"{t:,.0f}"))
        c = per_correct(s.cost_usd, s)
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


def _tied(labels: Sequence[str], pairs: Sequence[tuple[str, TypedRun]]) -> tuple[dict[str, int], int]:
    """(arm label -> rank group, n questions) on accuracy where more than two arms are compared: each arm's
    per-question outcomes over its valid repetitions (the leaderboard's own values), the questions every
    arm has, `_leaderboard.cross_groups` (Holm-adjusted paired sign-flip test against the best); ({}, 0)
    with two arms or fewer, or no question shared."""
    from ctxgauge.report._leaderboard import Scored, cross_groups
    from ctxgauge.report._qa_rows import leaderboard

    attempts = {run.rel: leaderboard(run) for run in {run.rel: run for _, run in pairs}.values()}
    scored: dict[str, list[Scored]] = {}
    for label, (arm, run) in zip(labels, pairs):
        for attempt in attempts[run.rel]:
            if attempt.system == arm and attempt.outcome == "valid":
                scored.setdefault(label, []).extend(Scored(v, (started_at(run), run.rel)) for v in attempt.values
                                                    if v.metric == "accuracy" and v.unit_ids)
    return cross_groups(scored)


def _table(runs: Sequence[TypedRun]) -> Table:
    pairs, sources = _shown(runs)
    # Context tokens per correct answer (suite version 2 on): a column only where an arm recorded its packed
    # context, so a run made before the count renders as it did.
    packed = any(arms(run)[arm].context_tokens is not None for arm, run in pairs)
    rows = []
    labels = label_systems(pairs)
    groups, n = _tied(labels, pairs)
    for label, (arm, run) in zip(labels, pairs):
        s = arms(run)[arm]
        status = str(s.status or MEASURED)
        st = Cell(status, style="good" if status == MEASURED else "muted", wrap=False)
        t = tokens(s)
        rows.append([Cell(label, run=run.rel, wrap=False), st, Cell(pct(s.accuracy), num=True),
                     Cell(f"{s.passed}/{s.questions}", num=True), num(t, 0),
                     num(per_correct(t, s), 0),
                     *([num(s.context_tokens_per_correct, 0)] if packed else []),
                     Cell(usd(s.cost_usd), num=True),
                     Cell(usd(per_correct(s.cost_usd, s)), num=True),
                     Cell(pct(s.retrieval_hit_rate), num=True),
                     Cell(f"{s.valid_runs}/{s.runs}", num=True)] + ([num(groups.get(label), 0)] if groups else []))
    caption = ("Cost is estimated from the recorded rate table where the provider reports none; `-` means not "
               "measured (no model, no judge, or an unpriced model), never zero.")
    if packed:
        caption += (" context/correct: the context arm's packed context tokens (counted by ctxgauge's tokenizer) "
                    "over its correct answers.")
    if groups:
        caption += (f" Tied group: on accuracy over the {n} questions every arm answered, group 1 is the best arm "
                    "and every arm whose Holm-adjusted paired sign-flip p against it is at least 0.05; then the "
                    "best of the rest anchors group 2, and so on.")
    return Table("Arms: accuracy, tokens and cost",
                 ["arm", "status", "accuracy", "passed", "tokens", "tokens/correct",
                  *(["context/correct"] if packed else []), "cost", "cost/correct",
                  "hit rate", "valid runs"] + ([f"tied group (n {n})"] if groups else []), rows, sources=sources,
                 caption=caption)


def _grid(run: TypedRun) -> GridFigure:
    questions = run.results.questions
    names = list(arms(run))
    columns = [(q.qid, f"{q.qid} (difficulty {q.difficulty or '-'}; "
                f"{', '.join(q.categories)})") for q in questions]
    rows = []
    for arm in names:
        cells = []
        for q in questions:
            got = q.arms.get(arm) or []
            first = next((g for g in got if g), None)  # first repetition with an outcome
            cells.append(first if first in VERDICT_LEGEND else ("absent" if first is None else "not-judged"))
        rows.append(GridRow(arm, cells, run=run.rel))
    used = {c for r in rows for c in r.cells}
    legend = {k: v for k, v in VERDICT_LEGEND.items() if k in used or k in ("pass", "fail")}
    return GridFigure(f"Per-question verdicts ({len(questions)} questions, first repetition)", columns, rows, legend,
                      [run.rel], caption="One cell per question.", hover="Hover a cell for its id, difficulty and categories.")


def _trust(run: TypedRun) -> list[Table]:
    """The trust gate: the measured checks, one row per check, and the checks not measured collapsed into
    one line naming them (issue 39: a demo without a model showed four bold lines of names over fourteen
    not-measured rows); why each was not measured is a folded per-check table (`--misses`)."""
    trust = run.results.trust
    checks = trust.checks if trust is not None else []
    if not checks:
        return []
    style = {"pass": "good", "warn": "warn", "fail": "bad"}

    def label(c: TrustCheck) -> str:
        return f"{c.name}[{c.arm}]" if c.arm else c.name

    measured = [c for c in checks if c.status != "not-measured"]
    missing = [c for c in checks if c.status == "not-measured"]
    rows = [[Cell(c.name, wrap=False), Cell(str(c.arm or "all"), wrap=False),
             Cell(c.status, style=style.get(c.status, "muted")),
             Cell(fmt(c.value, 4), num=True), Cell(str(c.threshold or "")),
             Cell(str(c.detail or ""))] for c in measured]
    # Never "pass (12 not measured)", which reads as a pass: what was measured, then how many were not.
    head = (f"nothing measured (0 of {len(checks)} checks)" if not measured else
            f"{trust.status} on {len(measured)} of {len(checks)} checks")
    title = head + (f"; {len(missing)} not measured" if missing else "")
    caption = (f"Not measured ({len(missing)}): {', '.join(label(c) for c in missing)}; why, per check: "
               "report --misses (in HTML, the folded table below)." if missing else None)
    out = [Table(f"Trust gate: {title}", ["check", "arm", "status", "value", "needs", "detail"], rows,
                 sources=[run.rel], free=[5], caption=caption)]
    if missing:
        why = [[Cell(c.name, wrap=False), Cell(str(c.arm or "all"), wrap=False),
                Cell(str(c.threshold or "")), Cell(str(c.detail or ""))] for c in missing]
        out.append(Table(f"Trust gate: why {len(missing)} check{'s' if len(missing) != 1 else ''} "
                         f"{'were' if len(missing) != 1 else 'was'} not measured", ["check", "arm", "needs", "why"],
                         why, sources=[run.rel], detail=True, free=[3]))
    return out


def _comparisons(run: TypedRun) -> Table | None:
    cmp = run.results.comparisons
    rows = []
    for arm, c in (cmp.arms if cmp is not None else {}).items():
        if c is None or not c.n:
            continue
        rows.append([Cell(arm, run=run.rel), Cell(str(c.n), num=True), Cell(fmt(c.mean_diff, 1), num=True),
                     Cell(f"[{fmt(c.ci_low, 1)}, {fmt(c.ci_high, 1)}]", num=True),
                     Cell(fmt(c.p_value, 3), num=True), Cell(fmt(c.cohens_d, 2), num=True),
                     Cell(f"{c.wins}/{c.ties}/{c.losses}", num=True)])
    if not rows:
        return None
    return Table(f"Arms against the baseline arm {cmp.baseline}",
                 ["arm", "questions", "mean diff (points)", "95% interval", "p", "Cohen's d", "win/tie/loss"], rows,
                 sources=[run.rel], caption="Paired over the questions both arms scored (each averaged over its "
                 "valid repetitions); seeded bootstrap interval and randomization test; Cohen's d over the pooled "
                 "standard deviation of the two arms' scores.")


def _panel(run: TypedRun) -> Table | None:
    """The judge panel per arm (when `--panel` ran): the role-weighted aggregate, the role scores' standard
    deviation, the agreement score and how many answers the roles disagreed on."""
    rows = [[Cell(arm, run=run.rel), Cell(f"{p.scored}/{p.answers}", num=True),
             Cell(fmt(p.aggregate, 1), num=True), Cell(fmt(p.sd, 1), num=True),
             Cell(fmt(p.agreement, 2), num=True), Cell(str(p.flagged), num=True)]
            for arm, p in _panels(run).items()]
    if not rows:
        return None
    return Table("Judge panel (technical expert, developer advocate, doc reviewer)",
                 ["arm", "scored", "aggregate", "sd", "agreement", "flagged"], rows, sources=[run.rel],
                 caption="Per answer: the role-weighted mean of the three role scores, their standard deviation, "
                 "agreement 1 - sd/50, and a flag when two roles are more than 30 points apart or split on a "
                 "numeric claim; here the mean over the answers the panel scored.")


def _panels(run: TypedRun) -> dict[str, PanelSummary]:
    """Arm -> its judge panel's summary, for the arms a panel scored."""
    where = str(run.path / "run.json")
    return {arm: PanelSummary.from_json(s.panel, where, f"results.summary.{arm}.panel")
            for arm, s in arms(run).items() if isinstance(s.panel, dict)}


def _key(run: TypedRun) -> tuple[str, str]:
    return run.subject.dataset, run.subject.model or ""


def section(suite: str, title: str, runs: Sequence[TypedRun]) -> Section:
    """The qa section: per battery and model, accuracy and cost figures, the arms table, verdicts, trust."""
    sec = Section(suite, title, notes=dnf_note(runs))
    done = [r for r in runs if r.finished]
    for key in dict.fromkeys(_key(r) for r in done):
        group = [r for r in done if _key(r) == key]
        for fig in _figures(group):
            fig.title = f"{key[0]} · {key[1] or 'no model'}: {fig.title}"
            sec.blocks.append(fig)
        sec.blocks.append(_table(group))
        sec.notes += [f"{r.rel}: {arm}: {s.status}: {s.reason}" for r in group
                      for arm, s in arms(r).items() if s.reason]
        # What the run itself noted (no judge configured, records a question set read tolerantly).
        sec.notes += [f"{r.rel}: note: {n}" for r in group for n in r.results.notes]
        for run in group:
            grid = _grid(run)
            # A grid of nothing but unanswered cells says less than the note that no model answered.
            if any(c not in ("skipped", "absent") for row in grid.rows for c in row.cells):
                sec.blocks.append(grid)
            for table in (_comparisons(run), _panel(run), *_trust(run)):
                if table is not None:
                    sec.blocks.append(table)
    return sec
