"""Every reader checks a run the same way (`ctxgauge.report.check_run`), whatever it happened to import.

The shape checks used to be registered when `ctxgauge.report` was imported: `ctxgauge report` refused a
damaged record with one line while `replay --baseline` on the same record exited 70 (TypeError: float +
str). Each reader here runs in its own process on a recorded run with one damaged value: exit 2, one line
naming the file and the JSON path. Unit lines of another run are refused by report and export and counted
by `runs show`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_RUN = [sys.executable, "-m", "ctxgauge"]
_ENV = {**os.environ, "COLUMNS": "300"}


def _cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(_RUN + [str(a) for a in args], capture_output=True, text=True, env=_ENV, timeout=120)


def _one_line(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr[-3000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture(scope="module")
def recorded(sample_repo, tmp_path_factory) -> dict[str, Path]:
    """A replay run (grep, 2 commits) and a qa run (grep context, no model) on the bundled sample."""
    root = tmp_path_factory.mktemp("recorded")
    r = _cli("replay", sample_repo, "--engine", "grep", "--commits", "2", "-k", "5", "--out", root / "replay")
    assert r.returncode in (0, 1), r.stderr
    r = _cli("qa", "run", "shelfd", "--arm", "context:grep@5", "--repo", sample_repo, "--out", root / "qa")
    assert r.returncode == 0, r.stderr
    return {"replay": root / "replay", "qa": root / "qa", "sample": sample_repo}


def _copy(src: Path, dest: Path) -> Path:
    subprocess.run(["cp", "-a", str(src), str(dest)], check=True)
    return dest


def _damage_unit_figure(run: Path) -> str:
    """The first unit line's hit@5 turned into a string; returns the JSON path a refusal names."""
    lines = (run / "units.jsonl").read_text().splitlines(True)
    first = next(i for i, line in enumerate(lines) if "hit@5" in json.loads(line).get("figures", {}))
    unit = json.loads(lines[first])
    unit["figures"]["hit@5"] = "1.0"
    lines[first] = json.dumps(unit) + "\n"
    (run / "units.jsonl").write_text("".join(lines))
    return f"units.jsonl:{first + 1}: unit.figures.hit@5: expected a number"


def _damage_results_figure(run: Path, arm: str) -> str:
    doc = json.loads((run / "run.json").read_text())
    doc["results"]["summary"][arm]["accuracy"] = "0.5"
    (run / "run.json").write_text(json.dumps(doc))
    return f"run.json: results.summary.{arm}.accuracy: expected a number"


@pytest.mark.parametrize("reader", ["report", "baseline", "export", "runs show"])
def test_a_damaged_unit_figure_is_one_line_for_every_reader(recorded, tmp_path, reader):
    run = _copy(recorded["replay"], tmp_path / "run")
    where = _damage_unit_figure(run)
    r = {
        "report": lambda: _cli("report", run),
        "baseline": lambda: _cli("replay", recorded["sample"], "--engine", "grep", "--commits", "2", "-k", "5",
                                 "--baseline", run, "--out", tmp_path / "new"),
        "export": lambda: _cli("export", run, "--out", tmp_path / "site"),
        "runs show": lambda: _cli("runs", "show", run),
    }[reader]()
    _one_line(r, where)
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize("reader", ["report", "export", "runs show", "qa rescore"])
def test_a_damaged_results_figure_is_one_line_for_every_reader(recorded, tmp_path, reader):
    run = _copy(recorded["qa"], tmp_path / "run")
    where = _damage_results_figure(run, "context:grep@5")
    r = {
        "report": lambda: _cli("report", run),
        "export": lambda: _cli("export", run, "--out", tmp_path / "site"),
        "runs show": lambda: _cli("runs", "show", run),
        "qa rescore": lambda: _cli("qa", "rescore", run, "--judge", "gpt-4o-mini"),
    }[reader]()
    _one_line(r, where)


def test_no_check_is_registered_by_importing_a_package(recorded, tmp_path):
    # The same read in a fresh interpreter, with and without the report imported first: the same refusal.
    run = _copy(recorded["replay"], tmp_path / "run")
    _damage_unit_figure(run)
    code = ("import sys\n{pre}from ctxgauge.report import read_checked\nfrom ctxgauge.errors import UserError\n"
            "try:\n    read_checked(sys.argv[1])\nexcept UserError as e:\n    print(e)\n")
    bare = subprocess.run([sys.executable, "-c", code.format(pre=""), str(run)], capture_output=True, text=True)
    first = subprocess.run([sys.executable, "-c", code.format(pre="import ctxgauge.export\n"), str(run)],
                           capture_output=True, text=True)
    assert bare.stdout == first.stdout and "expected a number" in bare.stdout, (bare.stderr, first.stderr)
    from ctxgauge.records import read_units

    assert read_units(run)  # the records layer alone reads what it is given: the check is the reader's


def test_foreign_unit_lines_are_counted_by_runs_show_and_refused_by_report_and_export(recorded, tmp_path):
    run = _copy(recorded["replay"], tmp_path / "run")
    lines = (run / "units.jsonl").read_text().splitlines(True)
    other = json.loads(lines[0])
    other["run_id"] = "someone-else"
    (run / "units.jsonl").write_text("".join(lines) + json.dumps(other) + "\n")
    shown = _cli("runs", "show", run, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["foreign_units"] == 1
    assert "foreign units: 1" in _cli("runs", "show", run).stdout
    assert "foreign units: 0" in _cli("runs", "show", recorded["replay"]).stdout
    for r in (_cli("report", run), _cli("export", run, "--out", tmp_path / "site")):
        _one_line(r, "1 unit line(s) of another run (someone-else)")
