"""`runs show` speaks the words of every other view (walkthrough at 80 columns, issue 39): the status is
`finished` as in `runs list`, report and HTML (not the record's `success`), the unit counts come in the Runs
table's order `ok/failed/skipped` (not alphabetical), and `foreign units` says what it counts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctxgauge.cli import app

V2 = Path(__file__).parents[1] / "records" / "fixtures" / "v2"


def show(run: Path, *more: str) -> str:
    result = CliRunner().invoke(app, ["runs", "show", str(run), *more], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.stdout
    return result.stdout


@pytest.mark.parametrize("name", ["replay-vs", "cases", "determinism"])
def test_status_units_and_foreign_units_read_as_in_every_other_view(name):
    run = V2 / name
    record = json.loads(show(run, "--json"))["record"]
    assert record["status"] == "success"
    out = show(run)
    header = out.splitlines()[0]
    assert "finished" in header.split() and "success" not in out
    counts = record["counts"]
    assert f"units ok/failed/skipped: {counts.get('ok', 0)}/{counts.get('failed', 0)}/{counts.get('skipped', 0)}\n" in out
    assert "foreign units: 0 (unit lines written by another run)\n" in out


def test_a_run_that_did_not_finish_says_so_as_runs_list_does(tmp_path):
    run = tmp_path / "replay-vs"
    shutil.copytree(V2 / "replay-vs", run)
    data = json.loads((run / "run.json").read_text())
    data["status"] = "cancelled"
    (run / "run.json").write_text(json.dumps(data))
    header = show(run).splitlines()[0]
    assert "did not finish (cancelled)" in header
