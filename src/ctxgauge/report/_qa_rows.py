"""The qa suite's rows for summaries and exports: the leaderboard's attempts (one per arm and repetition),
per-question verdicts, per-repetition score, token and cost rows, index adoption of the tool arms, the rate
tables costs were estimated from, and what must match for two qa runs to be averaged.

Reads what `_qa`'s shapes declare, plus each repetition's own `record.json` (its economics); a missing or
unreadable one shows its figures as not measured, never as zero. The report section is `_qa`'s.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ctxgauge.report._leaderboard import Attempt, Value
from ctxgauge.results import ArmSummary, TypedRun
from ctxgauge.results._qa import RepRun, RunScoring
from ctxgauge.results._qa_files import Economics, QAContext, RateTable

DEFAULT_SCORER = "ctxgauge-qa-1"
"""The scorer version of a run recorded before runs named theirs."""
MEASURED, SKIPPED = "measured", "skipped"
"""An arm's status when measured, and when skipped."""


def arms(run: TypedRun) -> dict[str, ArmSummary]:
    """Arm spec -> its summary in a finished run, in the order the run was given its arms (run.json
    stores its keys sorted)."""
    summary = run.results.summary
    order = [a for a in run.subject.systems if a in summary]
    return {a: summary[a] for a in order + sorted(set(summary) - set(order))}


def _reps(run: TypedRun, arm: str) -> list[RepRun]:
    return [r for r in run.results.runs if r.arm == arm]


def _valid(r: RepRun) -> bool:
    return bool(r.validity is not None and r.validity.ok)


def rep_values(run: TypedRun, arm: str) -> list[tuple[bool, str, dict[str, float | None]]]:
    """Per repetition of an arm: (valid, validity reason, metric -> value) for accuracy, tokens, cost and
    their per-correct ratios, read from the repetition's own `record.json` (economics) and the run's
    `results.runs`."""
    out = []
    for r in _reps(run, arm):
        ok = _valid(r)
        sc = r.scoring or RunScoring()
        total, den = sc.total, sc.denominator
        econ = _economics(run, r)
        used = econ.tokens() if econ is not None else None
        cost = econ.cost_usd if econ is not None else None
        acc = total / den if ok and total is not None and den else None
        good = total if ok and total else None  # correct answers, when there are any
        reason = str((r.validity.reason if r.validity is not None else None) or "")
        out.append((ok, reason, {"accuracy": acc, "tokens": used if ok else None, "cost_usd": cost if ok else None,
                         "tokens_per_correct": used / good if good and used is not None else None,
                         "cost_per_correct": cost / good if good and cost is not None else None}))
    return out


def arm_values(run: TypedRun, arm: str) -> dict[str, float | None]:
    """Arm-level figures only the summary holds (measured over the first repetition)."""
    summary = arms(run).get(arm)
    return {"retrieval_hit_rate": summary.retrieval_hit_rate if summary is not None else None}


def repetitions(run: TypedRun) -> int:
    """Attempts per arm: the run's repetitions."""
    return int(run.spec.repeat or 1)


LOWER_IS_BETTER = {"tokens", "cost_usd", "tokens_per_correct", "cost_per_correct"}
"""The qa figures where less is better."""

_DECIDED = {"pass": 1.0, "fail": 0.0, "adjudicate": 0.0}


def _question_values(run: TypedRun, arm: str) -> list[list[tuple[str, float]]]:
    """Per repetition of an arm (in `rep_values`' order): (qid, 1 passed / 0 not) for every question decided
    in it, in question order; [] for a repetition whose decided questions do not add up to its accuracy's
    denominator (its accuracy then has no per-question values: no interval is better than a wrong one)."""
    out = []
    questions = run.results.questions
    for r in _reps(run, arm):
        i = int(r.repetition or 1) - 1
        got = []
        for q in questions:
            verdicts = q.arms.get(arm) or []
            if 0 <= i < len(verdicts) and verdicts[i] in _DECIDED:
                got.append((str(q.qid), _DECIDED[verdicts[i]]))
        sc = r.scoring or RunScoring()
        passed = sum(v for _, v in got)
        if len(got) != sc.denominator or passed != sc.total:
            got = []
        out.append(got)
    return out


def leaderboard(run: TypedRun) -> list[Attempt]:
    """Per arm of a finished run: a skipped arm once; otherwise one attempt per repetition (valid; skipped
    when no answer was given, as with no model; else did-not-finish) with its figures, then the arm-level
    figures of the summary."""
    out = []
    for arm, summary in arms(run).items():
        if (summary.status or MEASURED) == SKIPPED:
            out.append(Attempt(arm, "skipped"))
            continue
        seed = 0  # qa runs record no seed of their own
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


@dataclass(frozen=True)
class VerdictRow:
    """One question and arm of a finished qa run: every repetition's verdict (a per-question.csv input)."""

    qid: str
    """The question."""
    arm: str
    """The arm."""
    difficulty: int | None
    """Its difficulty, 1-4."""
    categories: str
    """Its categories, `;`-joined."""
    verdicts: tuple[str | None, ...]
    """The verdict of every repetition."""


def item_rows(run: TypedRun) -> list[VerdictRow]:
    """Per question and arm: the verdict of every repetition."""
    rows = []
    for q in run.results.questions:
        for arm, got in sorted(q.arms.items()):
            rows.append(VerdictRow(q.qid, arm, q.difficulty, ";".join(q.categories), tuple(got or ())))
    return rows


def _economics(run: TypedRun, r: RepRun) -> Economics | None:
    """The economics of a repetition's record.json (None when missing or unreadable: its figures show as not
    measured, never as zero). `rep_values` and `run_rows` both read it here, so they agree on what is
    unreadable."""
    return Economics.read(run.path / r.path) if r.path else None


def qa_context(run: TypedRun) -> QAContext:
    """run.json's `context` of a qa run, typed (empty when the record has none)."""
    return QAContext.from_json(run.record.context or {}, str(run.path / "run.json"), "context")


def comparable(run: TypedRun) -> dict[str, str]:
    """Battery hash, protocol, judge, scorer version and rubric: two qa runs differing in any of them
    measured different things and are never averaged (a run before scorer versions was ctxgauge-qa-1)."""
    context = qa_context(run)
    ident = context.source_identity
    return {"dataset_hash": str((ident.hash if ident is not None else None) or ""),
            "protocol": str(run.spec.protocol or ""), "judge": str(run.spec.judge or ""),
            "scorer": str(run.spec.scorer or DEFAULT_SCORER), "rubric": str(context.rubric or "")}


def scorers(run: TypedRun) -> set[str]:
    """The scorer versions of a run's verdicts (the run's own when it has no verdict yet)."""
    found = {str(u.verdict.scorer) for u in run.units() if u.verdict is not None and u.verdict.scorer}
    return found or {str(run.spec.scorer or DEFAULT_SCORER)}


def run_rows(run: TypedRun) -> list[dict]:
    """Per arm x repetition: score over denominator, the four token columns with their source, cost
    with its basis, validity."""
    out = []
    for r in run.results.runs:
        econ, sc = _economics(run, r), r.scoring or RunScoring()
        out.append({"arm": r.arm, "repetition": r.repetition, "valid": _valid(r),
                    "validity": r.validity.reason if r.validity is not None else None,
                    "score": sc.total, "denominator": sc.denominator,
                    **(econ or Economics()).row()})
    return out


INDEX_TOOLS = ("search",)
"""Tool calls that query the arm's index (the tool arm's `search`; a harness reporting calls by that
name). `read` and a harness's setup (building its index) are not index calls."""


@dataclass
class Adoption:
    """One tool or command arm's index adoption over a finished run (an adoption.json row)."""

    arm: str
    """The arm."""
    kind: str
    """`tool` or `command`."""
    question_runs: int = 0
    """Question runs it answered."""
    adopted: int = 0
    """Of those, runs that called the arm's index at least once."""
    index_calls: int = 0
    """Index calls summed."""


def adoption(run: TypedRun) -> list[dict]:
    """Per tool or command arm of a finished run: question runs that called the arm's index at least
    once, over all its answered question runs, and the index calls summed."""
    kinds = {a.arm: a.kind for a in run.results.arms}
    agg: dict[str, Adoption] = {}
    for u in run.units():
        arm = u.arm
        if kinds.get(arm) not in ("tool", "command") or u.answer_status != "ok":
            continue
        tool_calls = u.figures.tool_calls if u.figures is not None else {}
        calls = sum(int(n) for t, n in tool_calls.items() if t in INDEX_TOOLS)
        a = agg.setdefault(arm, Adoption(arm, str(kinds[arm])))
        a.question_runs += 1
        a.adopted += int(calls > 0)
        a.index_calls += calls
    return [asdict(agg[k]) for k in sorted(agg)]


def rate_tables(run: TypedRun) -> list[dict]:
    """The rate tables the run's cost estimates used (recorded per arm)."""
    seen = {}
    for a in run.results.arms:
        if isinstance(a.rates, dict):
            seen[RateTable.from_json(a.rates, str(run.path / "run.json"), "results.arms.rates").version] = a.rates
    return [seen[k] for k in sorted(seen, key=str)]
