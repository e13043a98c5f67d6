"""Every reader receives a run typed: over every committed v1 and v2 fixture run, what the report's sections,
the leaderboard, the per-case and per-question rows and the runs table receive is a `TypedRun` whose spec,
results and units are instances of the suite's typed classes (`ctxgauge.results.SUITES`).

The views are wrapped, not re-implemented: each call records the run it was given, then does what it did.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ctxgauge.export import summaries
from ctxgauge.records import discover_runs
from ctxgauge.report import build_report, load_runs, read_checked
from ctxgauge.report import _views
from ctxgauge.results import SUITES, TypedRun

FIXTURES = Path(__file__).resolve().parents[1] / "records" / "fixtures"
ROOTS = [FIXTURES / "v1", FIXTURES / "v2"]


def _assert_typed(run, where: str) -> None:
    assert isinstance(run, TypedRun), f"{where}: got {type(run).__name__}"
    cls = SUITES[run.suite]
    assert isinstance(run.spec, cls.spec), f"{where} {run.rel}: spec is {type(run.spec).__name__}"
    assert isinstance(run.results, cls.results), f"{where} {run.rel}: results is {type(run.results).__name__}"
    for unit in run.units():
        assert isinstance(unit, cls.unit), f"{where} {run.rel}: unit {unit.id} is {type(unit).__name__}"


@pytest.fixture
def received(monkeypatch):
    """(reader, run) for every run a view's callable is given."""
    seen: list[tuple[str, object]] = []

    def wrap(name, fn, many=False):
        def called(*args, **kw):
            runs = args[2] if many else [args[0]]
            seen.extend((name, r) for r in runs)
            return fn(*args, **kw)
        return called

    wrapped = {}
    for suite, v in _views.VIEWS.items():
        changes = {"section": wrap(f"{suite}.section", v.section, many=True),
                   "leaderboard": wrap(f"{suite}.leaderboard", v.leaderboard),
                   "run_rows": wrap(f"{suite}.run_rows", v.run_rows),
                   "comparable": wrap(f"{suite}.comparable", v.comparable)}
        for opt in ("misses", "verdicts"):
            if getattr(v, opt) is not None:
                changes[opt] = wrap(f"{suite}.{opt}", getattr(v, opt))
        wrapped[suite] = dataclasses.replace(v, **changes)
    monkeypatch.setattr(_views, "VIEWS", wrapped)
    return seen


@pytest.mark.parametrize("root", ROOTS, ids=lambda p: p.name)
@pytest.mark.parametrize("loader", ["discover_runs", "load_runs"])
def test_report_and_export_receive_typed_runs_of_every_fixture(root, loader, received):
    runs = discover_runs(root) if loader == "discover_runs" else load_runs([root])
    assert {r.suite for r in runs} == set(SUITES)
    build_report(runs)
    summaries(runs)
    readers = {name for name, _ in received}
    # Every suite's section and leaderboard saw its runs; replay/cases their per-case rows, qa its verdicts.
    for suite in SUITES:
        assert f"{suite}.section" in readers and f"{suite}.leaderboard" in readers, (suite, sorted(readers))
    assert {"replay.misses", "cases.misses", "qa.verdicts"} <= readers
    for name, run in received:
        _assert_typed(run, name)


@pytest.mark.parametrize("run", sorted(p.parent for r in ROOTS for p in r.rglob("run.json")),
                         ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_read_checked_hands_out_a_typed_run(run):
    # `runs show`, `replay --baseline`, `qa rescore`, `qa adjudicate` read one run this way.
    _assert_typed(read_checked(run), "read_checked")
