"""The report and the export over runs the suites really wrote (replay, cases, determinism, qa on the
bundled sample): catches a record shape drifting away from what the report reads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxgauge.export import check_export, export_runs
from ctxgauge.report import BarsFigure, GridFigure, PairedFigure, Table, build_report, discover_runs, render_html


@pytest.fixture(scope="module")
def real_runs(sample_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from importlib.resources import files

    from ctxgauge.suites.cases import CasesConfig, load_cases, run_cases
    from ctxgauge.suites.determinism import DeterminismConfig, run_determinism
    from ctxgauge.suites.qa import QAConfig, run_qa
    from ctxgauge.suites.replay import ReplayConfig, replay

    root = tmp_path_factory.mktemp("real") / "runs"
    replay(ReplayConfig(repo=sample_repo, engine="bm25", vs="grep", commits=12, out=root / "replay"))
    run_determinism(DeterminismConfig(source=sample_repo, engines=("grep",), query_count=3, rebuilds=2, trials=2,
                                      out=root / "determinism"))
    case_file = root.parent / "cases.yaml"
    case_file.write_text(f"corpus: {sample_repo}\ncases:\n  - name: renew\n    query: renew a loan\n"
                         "    expected: [shelfd/handlers/loans.py]\n")
    run_cases(load_cases(case_file), CasesConfig(engine="grep", out=root / "cases"))
    # A copy of the bundled battery, so the record names a temporary path, not wherever ctxgauge is installed.
    battery = root.parent / "shelfd-battery"
    shutil.copytree(Path(str(files("ctxgauge") / "data" / "batteries" / "shelfd")), battery)
    run_qa(QAConfig(source=str(battery), arms=["context:bm25@5"], repo=sample_repo, out=root / "qa"))
    return root


def test_every_suite_draws_from_real_records(real_runs):
    report = build_report(discover_runs(real_runs))
    by_suite = {s.suite: s for s in report.sections}
    assert list(by_suite) == ["replay", "cases", "determinism", "qa"]
    kinds = {suite: {type(b) for b in s.blocks} for suite, s in by_suite.items()}
    assert {BarsFigure, Table, PairedFigure, GridFigure} <= kinds["replay"]
    assert {BarsFigure, Table, GridFigure} <= kinds["cases"]
    assert {Table, BarsFigure} <= kinds["determinism"]
    assert {BarsFigure, Table} <= kinds["qa"]
    assert GridFigure not in kinds["qa"]  # no model answered: no verdict grid of empty cells
    ctl = next(b for b in by_suite["determinism"].blocks if isinstance(b, Table)).rows[0][1]
    assert ctl.text.startswith("CTL") and ctl.style.startswith("ctl")
    hits = next(b for b in by_suite["replay"].blocks if isinstance(b, BarsFigure)).panels[0]
    assert [b.label for b in hits.bars] == ["bm25", "grep"] and all(b.value is not None for b in hits.bars)
    assert "<svg" in render_html(report)


def test_real_runs_export_and_check(real_runs, tmp_path):
    out = tmp_path / "pub"
    result = export_runs(real_runs, out, environ={})
    assert result.runs == 4 and result.did_not_finish == 0
    assert check_export(real_runs, out, environ={}).ok


def test_every_suite_fills_the_typed_record(real_runs):
    # One subject block, an integer suite_version, a headline and `request` units, whatever the suite.
    from ctxgauge.records import Subject

    runs = {r.suite: r for r in discover_runs(real_runs)}
    assert {s: r.subject for s, r in runs.items()} == {
        "replay": Subject("shelfd", ["bm25", "grep"]),
        "determinism": Subject(f"shelfd@{runs['determinism'].results['corpus']['rev'][:10]}", ["grep"]),
        "cases": Subject("cases.yaml", ["grep"]),
        "qa": Subject("shelfd", ["context:bm25@5"]),
    }
    for suite, run in runs.items():
        assert type(run.record.suite_version) is int and run.record.suite_version >= 1, suite
        assert run.record.headline, suite
        assert "suite_version" not in run.spec, suite
    assert runs["replay"].record.headline.startswith("hit@5 ")
    assert runs["qa"].record.headline.startswith("context:bm25@5 ")
    assert [u.request for u in runs["cases"].units()] == ["renew a loan"]
    assert all(u.request for u in runs["replay"].units() if u.ok)
