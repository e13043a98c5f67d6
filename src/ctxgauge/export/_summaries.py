"""The derived summaries an export publishes: leaderboard.csv, per-question.csv, per-case.csv, runs.json,
adoption.json and rate-tables.json.

Pure functions of the run records, written with fixed number formats and a fixed order, so the same runs
always give the same bytes (`export --check` relies on it). Each suite's part comes from its view in the
one registry (`ctxgauge.report.view`): its leaderboard attempts, its per-case rows (`misses`) and its
per-question rows (`verdicts`); nothing here knows a suite by name.

Leaderboard: one row per suite x dataset x system (engine or arm) x model x what else makes runs
comparable (COMPARABLE: the dataset's hash, protocol, judge, scorer version, rubric; empty for suites
without them) x metric, in long form. Two batteries sharing a name but not a hash, or zero-shot and
whole-battery runs of one arm, are separate rows.
  runs      attempts: a replay/cases run, a determinism run's engine, a qa arm's repetition
  valid     attempts that finished (qa: the repetition was valid)
  scored    valid attempts with a value for this metric
  dnf       attempts that did not finish: published, never in `mean`
  skipped   engines or arms skipped as unavailable (never a pass, never a zero)
  mean/min/max   over the scored attempts' values
  ci_low/ci_high/ci_basis   seeded 95% bootstrap interval, by the rule ci_basis names (`units`: the newest
            run's units, runs on the same units being one measurement; `pooled-units`: runs on different
            units pooled over units as `replay --repos` pools repositories; `questions-repetitions`: qa's
            questions, then repetitions within each); empty when there is nothing to resample
            (`ctxgauge.report._leaderboard.cross_interval`).
  group/group_n   which systems are statistically tied on this metric, where more than two systems of one
            comparison (the row's key but its system) carry per-unit values: 1 = tied with the best (Holm-
            adjusted paired sign-flip p >= 0.05), 2 = tied with the best of the rest, ...; group_n is the
            number of units every system shares, the pairs each test was over
            (`ctxgauge.report._leaderboard.cross_groups`); empty otherwise.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Sequence

from ctxgauge.metrics.ranking import mean_over
from ctxgauge.records import RUN_FILE, RunRef, file_sha256
from ctxgauge.report import dataset, model, systems, view
from ctxgauge.report._leaderboard import Scored, Value, cross_groups, cross_interval
from ctxgauge.report._common import started_at
from ctxgauge.report._views import COMPARABLE, comparable
from ctxgauge.results import TypedRun, typed
from ctxgauge.results._qa_files import RateTable


def _typed(runs: Sequence[RunRef | TypedRun]) -> list[TypedRun]:
    # The one place these summaries read runs through their suites' typed classes (runs from
    # `report.load_runs` already are).
    return [typed(r) for r in runs]

SUMMARY_FILES = ("leaderboard.csv", "per-case.csv", "per-question.csv", "runs.json", "adoption.json",
                 "rate-tables.json")
"""The summaries every export writes, in the order written."""

KEY_COLUMNS = ["suite", "dataset", "system", "model", *COMPARABLE]
"""What a leaderboard row is of: runs agreeing on every one are averaged together, never others."""
LEADERBOARD_COLUMNS = [*KEY_COLUMNS, "metric", "runs", "valid", "scored", "dnf", "skipped",
                       "mean", "min", "max", "ci_low", "ci_high", "ci_basis", "group", "group_n"]


def _num(x: float | int | None) -> str:
    if x is None:
        return ""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    return f"{x:.6f}"


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A text cell starting with one of these is read as a formula by spreadsheets (`=HYPERLINK(...)`,
`@SUM(...)`, `+cmd|...`; a tab or carriage return hides one behind whitespace)."""


def text_cell(text: str) -> str:
    """A text cell made inert for a spreadsheet: a `'` in front when it starts with a formula character
    (OWASP's rule for CSV injection). Only text cells: numbers go through `_num` and are never prefixed,
    so a negative mean stays a number."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _csv(columns: list[str], rows: list[list]) -> bytes:
    """The export's one CSV writer: numbers formatted by `_num`, every other cell (a commit subject, a case
    name, an engine spec: data) through `text_cell`."""
    out = [_csv_row([text_cell(c) for c in columns])]
    for row in rows:
        out.append(_csv_row([_num(v) if v is None or isinstance(v, (int, float)) else text_cell(str(v)) for v in row]))
    return "".join(out).encode("utf-8")


def _csv_row(cells: list[str]) -> str:
    # The csv module quotes a field holding a character of its line terminator, and only those: with "\n" a
    # carriage return in a subject went out unquoted and split the row for every reader. So each row is
    # written with "\r\n" (a field holding either is quoted) and ends with "\n", as the files always have.
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow(cells)
    return buf.getvalue()[:-2] + "\n"


@dataclass
class _Group:
    runs: int = 0
    valid: int = 0
    dnf: int = 0
    skipped: int = 0
    values: dict[str, list[Scored]] = field(default_factory=dict)

    def add(self, value: Value, order: tuple) -> None:
        self.values.setdefault(value.metric, []).append(Scored(value, order))


def _order(run: TypedRun) -> tuple:
    # Oldest first: by the time the run started, then its path (the newest run's units give the interval).
    return (started_at(run), run.rel)


def _key(run: TypedRun, system: str) -> tuple[str, ...]:
    extra = comparable(run)
    return (run.suite, dataset(run), system, model(run), *(extra[c] for c in COMPARABLE))


def _collect(runs: Sequence[TypedRun]) -> dict[tuple[str, ...], _Group]:
    groups: dict[tuple[str, ...], _Group] = defaultdict(_Group)
    for run in runs:
        v = view(run.suite)

        def g(system: str) -> _Group:
            return groups[_key(run, system)]

        if not run.finished:
            for system in systems(run):
                reps = v.attempts(run)
                g(system).runs += reps
                g(system).dnf += reps
            continue
        for attempt in v.leaderboard(run):
            grp = g(attempt.system)
            if attempt.outcome is not None:
                grp.runs += 1
                grp.valid += int(attempt.outcome == "valid")
                grp.skipped += int(attempt.outcome == "skipped")
                grp.dnf += int(attempt.outcome == "dnf")
            for value in attempt.values:
                grp.add(value, _order(run))
    return groups


def _tied(groups: dict[tuple[str, ...], _Group]) -> dict[tuple, tuple[int, int]]:
    # (row key, metric) -> (group, group_n), per comparison: the key without its system, and the metric.
    by_comparison: dict[tuple, dict[str, list[Scored]]] = defaultdict(dict)
    for key, grp in groups.items():
        for metric, entries in grp.values.items():
            scored = [e for e in entries if e.value.value is not None]
            by_comparison[(*key[:2], *key[3:], metric)][key[2]] = scored
    out = {}
    for comparison, systems_ in by_comparison.items():
        tied, n = cross_groups(systems_)
        for system, group in tied.items():
            out[(*comparison[:2], system, *comparison[2:])] = (group, n)
    return out


def leaderboard(runs: Sequence[RunRef | TypedRun]) -> bytes:
    """leaderboard.csv (see the module docstring for its columns)."""
    rows = []
    groups = _collect(_typed(runs))
    tied = _tied(groups)
    for key in sorted(groups):
        grp = groups[key]
        if not grp.values:
            rows.append([*key, "", grp.runs, grp.valid, 0, grp.dnf, grp.skipped, None, None, None, None, None, "",
                         None, None])
            continue
        for metric, entries in grp.values.items():
            scored = [e for e in entries if e.value.value is not None]
            # Floats throughout, so an integer figure (tokens) prints like every other mean.
            vals = [float(e.value.value) for e in scored]
            low, high, basis = cross_interval(scored)
            group, n = tied.get((*key, metric), (None, None))
            rows.append([*key, metric, grp.runs, grp.valid, len(vals), grp.dnf, grp.skipped, mean_over(vals),
                         min(vals) if vals else None, max(vals) if vals else None, low, high, basis, group, n])
    return _csv(LEADERBOARD_COLUMNS, rows)


def per_case(runs: Sequence[RunRef | TypedRun]) -> bytes:
    """per-case.csv: per retrieval request (a replayed commit or a labelled case) and engine, over the
    finished runs: how often it was scored and passed (hit at the run's smallest k)."""
    agg: dict[tuple, dict] = {}
    for run in _typed(runs):
        misses = view(run.suite).misses
        if not run.finished or misses is None:
            continue
        for r in misses(run):
            key = (run.suite, dataset(run), r.case, r.system)
            a = agg.setdefault(key, _CaseCount(r.request, r.lane, r.pass_metric))
            a.runs += 1
            a.scored += int(r.scored)
            a.passed += int(r.passed)
    rows = [[*key, a.request, a.lane, a.runs, a.scored, a.passed, a.metric] for key, a in sorted(agg.items())]
    return _csv(["suite", "dataset", "case", "system", "request", "lane", "runs", "scored", "passed", "pass_metric"],
                rows)


VERDICTS = ("pass", "fail", "adjudicate", "infra", "not-judged", "skipped")
DECIDED = ("pass", "fail", "adjudicate")
PASS = "pass"


@dataclass
class _CaseCount:
    request: str
    lane: str
    metric: str
    runs: int = 0
    scored: int = 0
    passed: int = 0


@dataclass
class _VerdictCount:
    difficulty: int | None
    categories: str
    counts: dict[str, int]
    """Verdict (VERDICTS) -> answers."""
    answers: int = 0
    other: int = 0


@dataclass
class _RateUse:
    table: dict
    """The rate table as recorded."""
    runs: list[str] = field(default_factory=list)
    """The runs that used it."""


def per_question(runs: Sequence[RunRef | TypedRun]) -> bytes:
    """per-question.csv: per question and arm (and what makes runs comparable), over the finished qa
    runs, the count of each verdict, then `n` (decided answers) and `rate` (passed over n; empty when
    nothing was decided)."""
    agg: dict[tuple, _VerdictCount] = {}
    for run in _typed(runs):
        verdicts = view(run.suite).verdicts
        if not run.finished or verdicts is None:
            continue
        for r in verdicts(run):
            extra = comparable(run)
            key = (dataset(run), model(run), *(extra[c] for c in COMPARABLE), r.qid, r.arm)
            a = agg.setdefault(key, _VerdictCount(r.difficulty, r.categories, dict.fromkeys(VERDICTS, 0)))
            for v in r.verdicts:
                a.answers += 1
                if v in VERDICTS:
                    a.counts[v] += 1
                else:
                    a.other += 1
    rows = []
    for key, a in sorted(agg.items()):
        n = sum(a.counts[v] for v in DECIDED)
        rows.append([*key, a.difficulty, a.categories, a.answers, *(a.counts[v] for v in VERDICTS), a.other,
                     n, a.counts[PASS] / n if n else None])
    return _csv(["dataset", "model", *COMPARABLE, "qid", "arm", "difficulty", "categories", "answers", *VERDICTS,
                 "other", "n", "rate"], rows)


def runs_table(runs: Sequence[RunRef | TypedRun]) -> bytes:
    """runs.json: one flat row per run (finished or not), sorted by path."""
    rows = []
    for run in sorted(_typed(runs), key=lambda r: r.rel.encode()):
        rec = run.record
        counts, prov, timing = rec.counts, rec.provenance, rec.timing
        source = prov.get("source") or {}
        rows.append({
            "path": run.rel, "run_id": run.run_id, "suite": run.suite, "status": run.status,
            "finished": run.finished, "dataset": dataset(run), "systems": systems(run), "model": model(run),
            "started_at": timing.get("started_at"), "finished_at": timing.get("finished_at"),
            "ctxgauge": prov.get("ctxgauge"), "source_commit": source.get("commit"),
            "source_dirty": source.get("dirty"),
            "units_ok": counts.get("ok"), "units_failed": counts.get("failed"), "units_skipped": counts.get("skipped"),
            "error": rec.error, "run_json_sha256": file_sha256(run.path / RUN_FILE),
            **comparable(run), "attempts": view(run.suite).run_rows(run),
        })
    return _json(rows)


def _json(obj) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def adoption(runs: Sequence[RunRef | TypedRun]) -> bytes:
    """adoption.json: per finished run and tool or command arm, the question runs that called the arm's
    index (at least once), of all it answered, and the index calls summed (setup calls excluded)."""
    rows = []
    for run in sorted(_typed(runs), key=lambda r: r.rel.encode()):
        if run.finished:
            rows += [{"path": run.rel, "dataset": dataset(run), "model": model(run), **comparable(run), **a}
                     for a in view(run.suite).adoption(run)]
    return _json(rows)


def rate_tables(runs: Sequence[RunRef | TypedRun]) -> bytes:
    """rate-tables.json: every rate table a published cost was estimated from, by version, and the runs
    that used it."""
    tables: dict[str, _RateUse] = {}
    for run in sorted(_typed(runs), key=lambda r: r.rel.encode()):
        for t in view(run.suite).rate_tables(run):
            entry = tables.setdefault(str(RateTable.from_json(t).version), _RateUse(t))
            if run.rel not in entry.runs:
                entry.runs.append(run.rel)
    return _json({version: asdict(use) for version, use in tables.items()})


def summaries(runs: Sequence[RunRef | TypedRun]) -> dict[str, bytes]:
    """Every summary file's bytes, by name (SUMMARY_FILES)."""
    runs = _typed(runs)
    return {"leaderboard.csv": leaderboard(runs), "per-case.csv": per_case(runs),
            "per-question.csv": per_question(runs), "runs.json": runs_table(runs), "adoption.json": adoption(runs),
            "rate-tables.json": rate_tables(runs)}
