"""Finding runs: nested directories, a single run, an export tree; hidden folders and exports skipped."""

from __future__ import annotations

import pytest

from ctxgauge.errors import UserError
from ctxgauge.export import export_runs
from ctxgauge.report import discover_runs, load_runs


def test_nested_runs_are_found_by_relative_path(all_runs):
    runs = discover_runs(all_runs)
    assert [r.rel for r in runs] == ["cases-a", "det-a", "nested/qa-error", "qa-a", "replay-a", "replay-crashed"]
    assert [r.finished for r in runs] == [True, True, False, True, True, False]


def test_a_run_directory_on_its_own(all_runs):
    (run,) = discover_runs(all_runs / "replay-a")
    assert (run.rel, run.suite, run.status) == ("replay-a", "replay", "success")


def test_hidden_folders_and_exports_inside_a_store_are_skipped(all_runs):
    export_runs(all_runs, all_runs / "published")
    (all_runs / ".trash").mkdir()
    (all_runs / ".trash" / "run.json").write_text("{}")
    assert len(discover_runs(all_runs)) == 6
    # Named directly, an export reads as its runs.
    assert [r.rel for r in discover_runs(all_runs / "published")] == [r.rel for r in discover_runs(all_runs)]


def test_load_runs_reads_each_run_once(all_runs):
    assert len(load_runs([all_runs, all_runs / "qa-a"])) == 6


def test_missing_directory_and_newer_schema_are_user_errors(tmp_path, factory):
    with pytest.raises(UserError, match="no such directory"):
        discover_runs(tmp_path / "nope")
    path = factory.replay_run(tmp_path, "r", [1], vs=None)
    text = (path / "run.json").read_text().replace('"schema_version": 2', '"schema_version": 99')
    (path / "run.json").write_text(text)
    with pytest.raises(UserError, match="newer"):
        discover_runs(tmp_path)
