"""The one registry of suite views: how reports, summaries and exports read each suite's runs.

A suite is known to every reader by one entry here: its report section, its leaderboard rows and its
per-item rows (`misses`: per-case.csv; `verdicts`: per-question.csv). What every run has whatever its
suite (systems, dataset, model, headline) is read from the typed record (`RunRecord.subject`,
`RunRecord.headline`), so an entry only overrides it when a suite knows better. The store reads the typed
record alone and needs no view. Outside `ctxgauge/suites/<name>/` and this module no code names a suite
(`tests/report/test_suite_names.py` greps for it).

Adding a suite: its own package (`suites/<name>/`, writing its record through `ctxgauge.records.RunDir`)
plus one entry in VIEWS (or `register(name, view)` from a plugin). A run of a suite without a view is
listed in the runs table and drawn as a plain list of its runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, Sequence

from ctxgauge.records import Shape
from ctxgauge.results import TypedRun, classes
import ctxgauge.report._determinism as _determinism
import ctxgauge.report._qa as _qa
import ctxgauge.report._qa_rows as _qa_rows
import ctxgauge.report._retrieval as _retrieval
from ctxgauge.report._common import dnf_note
from ctxgauge.report._leaderboard import Attempt, Value
from ctxgauge.report._model import Section


def _subject_systems(run: TypedRun) -> list[str]:
    return list(run.subject.systems)


def _subject_dataset(run: TypedRun) -> str:
    return run.subject.dataset


def _subject_model(run: TypedRun) -> str:
    return run.subject.model or ""


def _headline(run: TypedRun) -> str:
    return run.record.headline


def _no_attempts(run: TypedRun) -> list[Attempt]:
    return []


def _one_attempt(run: TypedRun) -> int:
    return 1


COMPARABLE = ("dataset_hash", "protocol", "judge", "scorer", "rubric")
"""What must match, beyond suite, dataset, system and model, for two runs' figures to be averaged."""


def _no_key(run: TypedRun) -> dict[str, str]:
    return {c: "" for c in COMPARABLE}


def _no_rows(run: TypedRun) -> list[dict]:
    return []


def _no_scorers(run: TypedRun) -> set[str]:
    return set()


def _plain_section(suite: str, title: str, runs: Sequence[TypedRun]) -> Section:
    return Section(suite, title, notes=[f"{r.rel}: {r.status}" for r in runs] + dnf_note([]))


@dataclass(frozen=True)
class SuiteView:
    """How the readers show one suite's runs."""

    title: str
    """The report section's title."""
    section: Callable[[str, str, Sequence[TypedRun]], Section] = _plain_section
    """(suite, title, runs) -> the report section of that suite's runs (finished or not)."""
    leaderboard: Callable[[TypedRun], list[Attempt]] = _no_attempts
    """A finished run -> its attempts and figures, in the order leaderboard.csv lists them."""
    misses: Callable[[TypedRun], list[_retrieval.CaseRow]] | None = None
    """A finished run -> per request and system, whether it was scored and passed (per-case.csv rows);
    None: the suite has no such rows."""
    verdicts: Callable[[TypedRun], list[_qa_rows.VerdictRow]] | None = None
    """A finished run -> per question and arm, every repetition's verdict (per-question.csv rows); None:
    the suite has no such rows."""
    attempts: Callable[[TypedRun], int] = _one_attempt
    """How many attempts per system a run stands for (repetitions), counted as did-not-finish when it did
    not finish."""
    systems: Callable[[TypedRun], list[str]] = _subject_systems
    """What a run measured (default: its subject's systems)."""
    dataset: Callable[[TypedRun], str] = _subject_dataset
    """What it measured on (default: its subject's dataset)."""
    model: Callable[[TypedRun], str] = _subject_model
    """The answering model ('' for none; default: its subject's model)."""
    headline: Callable[[TypedRun], str] = _headline
    """One line of its main figures (default: the headline the suite recorded)."""
    comparable: Callable[[TypedRun], dict[str, str]] = _no_key
    """A run -> its COMPARABLE values ('' where the suite has none): runs differing in one are kept apart."""
    run_rows: Callable[[TypedRun], list[dict]] = _no_rows
    """A run -> one flat row per attempt with its score, tokens and cost (runs.json's `attempts`)."""
    adoption: Callable[[TypedRun], list[dict]] = _no_rows
    """A finished run -> per arm, how many question runs called the arm's index (adoption.json)."""
    rate_tables: Callable[[TypedRun], list[dict]] = _no_rows
    """A run -> the rate tables its costs were estimated from (rate-tables.json)."""
    scorers: Callable[[TypedRun], set[str]] = _no_scorers
    """A run -> the scorer versions its verdicts were made under (an export refuses a mix)."""
    spec_shape: Shape | None = None
    """A suite without typed classes (a plugin's) only: the shape of `spec` its view reads
    (`ctxgauge.records._shape`); a record that does not fit is refused with one line when read
    (`check_run`). A suite with typed classes (`ctxgauge.results.SUITES`) declares none here: its classes
    are the one source (`shapes`), and reading into them is its check. None: not checked."""
    results_shape: Shape | None = None
    """The shape of `results` (as `spec_shape`)."""
    unit_shape: Shape | None = None
    """The shape of a units.jsonl line (as `spec_shape`, checked line by line)."""


VIEWS: dict[str, SuiteView] = {
    "replay": SuiteView("Replay: the repository's own commits as requests",
                        partial(_retrieval.section, unit="commit", by_kind=True), _retrieval.leaderboard,
                        misses=_retrieval.item_rows),
    "cases": SuiteView("Cases: hand-labelled requests", partial(_retrieval.section, unit="case"),
                       _retrieval.leaderboard, misses=_retrieval.item_rows),
    "determinism": SuiteView("Determinism: is the context the same every time?", _determinism.section,
                             _determinism.leaderboard),
    "qa": SuiteView("QA: does the context help a model answer?", _qa.section, _qa_rows.leaderboard,
                    verdicts=_qa_rows.item_rows, attempts=_qa_rows.repetitions, comparable=_qa_rows.comparable,
                    run_rows=_qa_rows.run_rows, adoption=_qa_rows.adoption, rate_tables=_qa_rows.rate_tables,
                    scorers=_qa_rows.scorers),
}
"""Suite name -> its view, in the order the report draws the sections."""

UNKNOWN = SuiteView("a suite this version of ctxgauge cannot draw")
"""The view of a suite without an entry: listed, never drawn, never in the leaderboard."""


def shapes(suite: str) -> tuple[Shape | None, Shape | None, Shape | None]:
    """(spec, results, unit) shapes a record of `suite` must fit: derived from its typed classes
    (`Record.shape()`, the one source) when it has them, else what its view declares."""
    found = classes(suite)
    if found is not None:
        return found.spec.shape(), found.results.shape(), found.unit.shape()
    v = view(suite)
    return v.spec_shape, v.results_shape, v.unit_shape


def register(name: str, view: SuiteView) -> None:
    """Add (or replace) a suite's view: a plugin suite's one registry entry (its shapes are then what
    `check_run` checks every record of the suite against when a reader reads it)."""
    VIEWS[name] = view


def view(suite: str) -> SuiteView:
    """The view of `suite` (UNKNOWN when none is registered)."""
    return VIEWS.get(suite, UNKNOWN)


def suite_order(suites: set[str]) -> list[str]:
    """Suites in report order: registered ones as VIEWS lists them, then any other by name."""
    return [s for s in VIEWS if s in suites] + sorted(suites - set(VIEWS))


def systems(run: TypedRun) -> list[str]:
    """What a run measured: engines or arms (its suite's view)."""
    return view(run.suite).systems(run)


def dataset(run: TypedRun) -> str:
    """What a run measured on: a repository, a corpus or a battery (its suite's view)."""
    return view(run.suite).dataset(run)


def model(run: TypedRun) -> str:
    """The answer model of a run ('' for the suites that use none)."""
    return view(run.suite).model(run)


def headline(run: TypedRun) -> str:
    """One line of a run's main figures."""
    return view(run.suite).headline(run)


def comparable(run: TypedRun) -> dict[str, str]:
    """What else must match for runs to be averaged (COMPARABLE, its suite's view)."""
    return view(run.suite).comparable(run)
