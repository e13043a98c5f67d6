"""Run records of schema 1, written by dc65eaf's own code, read by today's readers.

`fixtures/v1/` holds the untouched output of dc65eaf's suites on the bundled sample (see
`fixtures/v1/README.md` for the commands); `fixtures/v1-derived/` holds what dc65eaf's own readers derived
from them (leaderboard, per-case, per-question, runs table). Today's readers must migrate the records
(subject, suite_version, headline, `request`), publish them with their hash chain intact, and derive every
row dc65eaf derived, with the same values.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.export import check_export, export_runs, summaries
from ctxgauge.records import (
    SCHEMA_VERSION, ResultsStore, RunDir, Subject, discover_runs, read_run, read_units, verify_files,
)
from ctxgauge.report import build_report, render_markdown

V1 = Path(__file__).with_name("fixtures") / "v1"
DERIVED = Path(__file__).with_name("fixtures") / "v1-derived"
RUNS = ("cases", "determinism", "qa", "replay", "replay-cancelled")

# What dc65eaf's report and store said about each run (its dataset(), systems(), model(), headline()).
DC65EAF = {
    "cases": ("cases.yaml", ["grep", "bm25"], "", "hit@5 0.500, recall@5 0.500"),
    "determinism": ("shelfd@8b70c4f787", ["grep", "bm25"], "", "grep CTL 3, bm25 CTL 3"),
    "qa": ("shelfd", ["none", "context:grep@3"], "", "none -, context:grep@3 -"),
    "replay": ("shelfd", ["grep", "bm25"], "", "hit@5 0.500, recall@5 0.500"),
    "replay-cancelled": ("shelfd", ["bm25"], "", ""),
}


def raw(name: str) -> dict:
    return json.loads((V1 / name / "run.json").read_text(encoding="utf-8"))


def test_the_fixtures_are_schema_1_and_untouched():
    assert sorted(p.name for p in V1.iterdir() if p.is_dir()) == list(RUNS)
    for name in RUNS:
        assert raw(name)["schema_version"] == 1
        assert raw(name)["provenance"]["source"]["commit"].startswith("dc65eaf")
        if raw(name)["status"] == "success":
            # The hash chain dc65eaf wrote still holds: nothing was edited after the run.
            assert set(verify_files(V1 / name, read_run(V1 / name)).values()) == {"ok"}


@pytest.mark.parametrize("name", RUNS)
def test_records_migrate_to_the_current_schema(name):
    rec = read_run(V1 / name)
    assert rec.schema_version == SCHEMA_VERSION and rec.suite == raw(name)["suite"]
    assert rec.suite_version == 1 and isinstance(rec.suite_version, int)
    assert "suite_version" not in rec.spec
    dataset, systems, model, headline = DC65EAF[name]
    assert rec.subject == Subject(dataset, systems, model or None)
    assert rec.headline == headline
    assert rec.status == raw(name)["status"] and rec.results == raw(name)["results"]


@pytest.mark.parametrize("section, value", [("context", [{}]), ("spec", [1]), ("results", {"engines": {"a": 1}}),
                                            ("spec", {"engines": 3}), ("files", "x"), ("counts", "x"),
                                            ("provenance", "x")])
def test_a_v1_record_with_a_section_of_the_wrong_type_is_a_user_error(tmp_path, section, value):
    # Found by `make fuzz` (loaders, run.json): `"context": [{}]` raised AttributeError in the migration.
    shutil.copytree(V1 / "replay", tmp_path / "run")
    doc = raw("replay")
    doc[section] = value
    (tmp_path / "run" / "run.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UserError, match="schema 1 record whose sections have the wrong types|must be an object") as err:
        read_run(tmp_path / "run")
    assert "\n" not in str(err.value)


def test_units_say_request_in_every_suite():
    cases = {u.id: u for u in read_units(V1 / "cases")}
    assert cases["late-fees"].request == "late fee for overdue loans"
    assert all("query" not in u.data for u in cases.values())
    replay = read_units(V1 / "replay")
    assert all(u.request for u in replay if u.ok)
    lines = [json.loads(line) for line in (V1 / "replay" / "units.jsonl").read_text().splitlines()]
    assert [u.request for u in replay] == [line.get("request") for line in lines]


def test_an_old_run_is_not_resumed_into_a_mixed_layout(tmp_path):
    run = tmp_path / "replay-cancelled"
    shutil.copytree(V1 / "replay-cancelled", run)
    rec = read_run(run)
    with pytest.raises(UserError, match="older ctxgauge"):
        RunDir.start(run, suite=rec.suite, suite_version=1, subject=rec.subject, spec=rec.spec, resume=True)


def rows(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))


KEYS = {"leaderboard.csv": ("suite", "dataset", "system", "model", "metric"),
        "per-case.csv": ("suite", "dataset", "case", "system"), "per-question.csv": ("dataset", "model", "qid", "arm")}


def test_summaries_hold_every_row_dc65eaf_derived():
    # Every row dc65eaf's readers derived from these runs, with the same values (later versions may add
    # rows and columns, never change or drop one).
    derived = summaries(discover_runs(V1))
    for name, key in KEYS.items():
        old = rows((DERIVED / name).read_bytes())
        new = {tuple(r[k] for k in key): r for r in rows(derived[name])}
        assert old, name
        for row in old:
            got = new.get(tuple(row[k] for k in key))
            assert got is not None and {k: got[k] for k in row} == row, (name, row)
    old_runs = json.loads((DERIVED / "runs.json").read_text())
    new_runs = {r["path"]: r for r in json.loads(derived["runs.json"])}
    assert [{k: new_runs[r["path"]][k] for k in r} for r in old_runs] == old_runs


def test_report_draws_every_suite_and_marks_the_cancelled_run():
    report = build_report(discover_runs(V1))
    assert [s.suite for s in report.sections] == ["replay", "cases", "determinism", "qa"]
    assert all(s.blocks for s in report.sections)
    text = render_markdown(report, None)
    assert "replay-cancelled: did not finish (cancelled: interrupted)" in text


def test_export_and_check_publish_v1_runs_byte_for_byte(tmp_path):
    done = export_runs(V1, tmp_path / "export")
    assert done.runs == 5 and done.did_not_finish == 1
    for name in RUNS:
        for f in (V1 / name).rglob("*"):
            if f.is_file():
                assert (tmp_path / "export" / "runs" / name / f.relative_to(V1 / name)).read_bytes() == f.read_bytes()
    assert check_export(V1, tmp_path / "export").ok


def test_the_store_lists_v1_runs(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(V1, runs)
    with ResultsStore.open(runs) as store:
        listed = {r["path"]: r for r in store.list()}
        assert sorted(listed) == list(RUNS)
        for name, (dataset, systems, model, headline) in DC65EAF.items():
            r = listed[name]
            assert (r["dataset"], r["systems"], r["model"], r["headline"]) == (dataset, systems, model, headline)
        assert store.get("qa")["record"].subject.systems == ["none", "context:grep@3"]


def test_cli_reads_v1_runs(tmp_path):
    from typer.testing import CliRunner

    from ctxgauge.cli import app

    runner = CliRunner()
    shutil.copytree(V1, tmp_path / "runs")
    out = runner.invoke(app, ["report", str(V1), "--json"])
    assert out.exit_code == 0, out.output
    assert [s["suite"] for s in json.loads(out.stdout)["sections"]] == ["replay", "cases", "determinism", "qa"]
    out = runner.invoke(app, ["runs", "list", str(tmp_path / "runs"), "--json"])
    assert out.exit_code == 0, out.output
    assert len(json.loads(out.stdout)["runs"]) == 5
    out = runner.invoke(app, ["runs", "show", str(V1 / "cases"), "--json"])
    assert out.exit_code == 0, out.output
    shown = json.loads(out.stdout)
    assert shown["record"]["subject"]["dataset"] == "cases.yaml" and set(shown["integrity"].values()) == {"ok"}
    out = runner.invoke(app, ["export", str(V1), "--out", str(tmp_path / "export"), "--json"])
    assert out.exit_code == 0, out.output
