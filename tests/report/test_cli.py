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
    assert html.read_text().startswith("<!DOCTYPE html>") and md.read_text().startswith("# ctxgauge report")
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
