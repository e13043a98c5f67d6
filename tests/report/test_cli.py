"""`ctxgauge report`: terminal by default, --html / --md files, --json the model."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from ctxgauge.cli import app


def test_terminal_by_default(all_runs):
    result = CliRunner().invoke(app, ["report", str(all_runs)], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "Determinism" in result.output and "CTL 3" in result.output


def test_html_and_markdown_files(all_runs, tmp_path):
    html, md = tmp_path / "site" / "r.html", tmp_path / "r.md"
    result = CliRunner().invoke(app, ["report", str(all_runs), "--html", str(html), "--md", str(md)])
    assert result.exit_code == 0, result.output
    assert html.read_text().startswith("<!DOCTYPE html>") and md.read_text().startswith("<!-- generator: ctxgauge -->\n# ctxgauge report")  # the marker first
    assert "Determinism" not in result.output  # files asked for: no terminal report


def test_json_is_the_model(all_runs):
    result = CliRunner().invoke(app, ["report", str(all_runs / "qa-a"), "--json"])
    assert result.exit_code == 0, result.output
    model = json.loads(result.output)
    assert model["runs"] == {"qa-a": "qa"} and model["sections"][0]["suite"] == "qa"


def test_no_runs_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "empty").mkdir()
    r = subprocess.run([sys.executable, "-m", "ctxgauge", "report", str(tmp_path / "empty")], capture_output=True,
                       text=True)
    assert r.returncode == 2
    assert "no run directories" in r.stderr and len(r.stderr.strip().splitlines()) == 1


DAMAGE = {"not-json": "{not json", "array": "[1, 2]", "no-schema": '{"suite": "replay"}',
          "bad-fields": '{"schema_version": 2, "suite": 3, "status": []}'}


def _damaged(root, name, text):
    (root / name).mkdir(parents=True)
    (root / name / "run.json").write_text(text)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "ctxgauge", "report", *args], capture_output=True, text=True)


def test_a_damaged_run_in_a_directory_is_named_and_the_rest_reported(tmp_path, factory):
    # As `runs list` does: every readable run reported, each unreadable one named in one stderr line.
    root = tmp_path / "runs"
    factory.replay_run(root, "good", [1, 2, None], [2, None, 1])
    for name, text in DAMAGE.items():
        _damaged(root, name, text)
    r = _cli(str(root), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["runs"] == {"good": "replay"}
    lines = r.stderr.strip().splitlines()
    assert sorted(line.split(":")[0] for line in lines) == sorted(f"skipped {n}" for n in DAMAGE)
    assert all("run.json" in line and "repair or remove" in line for line in lines)


def test_a_directory_of_only_damaged_runs_is_one_line_and_exit_2(tmp_path):
    for name, text in DAMAGE.items():
        _damaged(tmp_path / "runs", name, text)
    r = _cli(str(tmp_path / "runs"))
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "no readable run under" in r.stderr
    assert "(and 3 more)" in r.stderr and "Traceback" not in r.stderr


def test_a_damaged_run_named_itself_still_refuses(tmp_path, factory):
    factory.replay_run(tmp_path / "runs", "good", [1], vs=None)
    _damaged(tmp_path / "runs", "bad", "[1, 2]")
    r = _cli(str(tmp_path / "runs" / "good"), str(tmp_path / "runs" / "bad"))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [f"error: {tmp_path / 'runs' / 'bad' / 'run.json'}: "
                                             "not a ctxgauge run record (not a JSON object)"]
