"""The SQLite results store: built from the run directories, kept in step with them, rebuilt when deleted
or broken, and only ever an index (the directories stay the truth)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.records import STORE_FILE, ResultsStore
from ctxgauge.records._store import STORE_DIR, default_path


@pytest.fixture
def runs(tmp_path, factory) -> Path:
    f = factory
    root = tmp_path / "runs"
    f.replay_run(root, "replay-a", [1, 2], [2, 2])
    f.determinism_run(root, "det-a", {"bm25": {"level": 3}, "grep": {"level": 1}})
    f.qa_run(root, "nested/qa-a", {"none": ["pass", "fail"], "context:bm25@5": ["pass", "pass"]})
    f.unfinished_run(root, "replay-crashed")
    return root


def test_first_open_builds_the_store_under_the_cache_not_in_the_runs(runs):
    with ResultsStore.open(runs) as store:
        assert store.path == default_path(runs) and store.path.is_file()
        assert store.path.parent.name == STORE_DIR and runs not in store.path.parents
        assert not (runs / STORE_FILE).exists()
        assert (store.last_sync.added, store.last_sync.unchanged) == (4, 0)
        rows = store.list()
    assert {r["path"] for r in rows} == {"replay-a", "det-a", "nested/qa-a", "replay-crashed"}
    replay = next(r for r in rows if r["path"] == "replay-a")
    assert (replay["suite"], replay["status"], replay["finished"], replay["systems"]) == \
        ("replay", "success", True, ["bm25", "grep"])
    assert replay["headline"] == "hit@1 0.500, recall@1 0.500"
    assert next(r for r in rows if r["path"] == "det-a")["headline"] == "bm25 CTL 3, grep CTL 1"
    assert next(r for r in rows if r["path"] == "nested/qa-a")["headline"] == "none 50.0%, context:bm25@5 100.0%"
    assert next(r for r in rows if r["path"] == "replay-crashed")["finished"] is False


def test_filters_and_get_by_path_or_id(runs):
    with ResultsStore.open(runs) as store:
        assert [r["path"] for r in store.list(suite="replay", status="success")] == ["replay-a"]
        row = store.get("qa-a")  # the run id
        assert row["path"] == "nested/qa-a" and row["record"].suite == "qa"
        assert store.get("nested/qa-a")["run_id"] == "qa-a"
        assert store.get("nope") is None


def test_the_store_follows_the_directories(runs, factory):
    ResultsStore.open(runs).close()
    (runs / "det-a" / "run.json").unlink()
    (runs / "det-a").rename(runs / "gone")  # no run.json left: not a run any more
    record = json.loads((runs / "replay-a" / "run.json").read_text())
    record["error"] = "edited"
    (runs / "replay-a" / "run.json").write_text(json.dumps(record, indent=1))
    factory.replay_run(runs, "replay-b", [1], vs=None)
    with ResultsStore.open(runs) as store:
        s = store.last_sync
        assert (s.added, s.updated, s.removed, s.unchanged) == (1, 1, 1, 2)
        assert store.get("replay-a")["error"] == "edited"


def test_deleted_or_broken_store_is_rebuilt_from_the_runs(runs):
    ResultsStore.open(runs).close()
    where = default_path(runs)
    where.unlink()
    with ResultsStore.open(runs) as store:
        assert store.last_sync.added == 4
    where.write_bytes(b"this is not a database at all" * 100)
    with ResultsStore.open(runs) as store:
        assert store.path is not None and len(store.list()) == 4
    conn = sqlite3.connect(where)
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with ResultsStore.open(runs) as store:
        assert store.last_sync.added == 4  # another schema: rebuilt, not misread


def test_a_store_that_cannot_be_written_lives_in_memory(runs, tmp_path):
    (tmp_path / "a-file").write_text("not a directory")
    with ResultsStore.open(runs, tmp_path / "a-file" / "dir" / "store.sqlite") as store:
        assert store.path is None and len(store.list()) == 4


def test_one_store_per_resolved_folder_and_memory_with_the_cache_off(runs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert default_path("runs") == default_path(runs)  # a relative and an absolute path: one store
    assert default_path(tmp_path / "other") != default_path(runs)
    monkeypatch.setenv("CTXGAUGE_CACHE", "off")
    with ResultsStore.open(runs) as store:
        assert store.path is None and len(store.list()) == 4
    assert not (runs / STORE_FILE).exists()


def test_a_store_an_earlier_version_left_in_the_runs_is_ignored(runs):
    (runs / STORE_FILE).write_bytes(b"an old index")
    with ResultsStore.open(runs) as store:
        assert len(store.list()) == 4
    assert (runs / STORE_FILE).read_bytes() == b"an old index"


def test_unreadable_runs_are_reported_not_fatal(runs):
    (runs / "broken").mkdir()
    (runs / "broken" / "run.json").write_text("{not json")
    with ResultsStore.open(runs) as store:
        assert len(store.list()) == 4
        assert store.last_sync.unreadable[0].startswith("broken:")
    with pytest.raises(UserError, match="no such directory"):
        ResultsStore.open(runs / "missing")


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_status_filter_takes_the_words_the_table_shows(runs):
    with ResultsStore.open(runs) as store:
        assert {r["path"] for r in store.list(status="finished")} == {"replay-a", "det-a", "nested/qa-a"}
        assert [r["path"] for r in store.list(status="unfinished")] == ["replay-crashed"]
        assert [r["path"] for r in store.list(suite="replay", status="finished")] == ["replay-a"]


@pytest.mark.parametrize("kwargs, message", [
    ({"status": "done"}, "--status 'done': not a run status; use one of started, success, cancelled, error, "
                         "finished, unfinished"),
    ({"suite": "replya"}, "--suite 'replya': no such suite; use one of determinism, qa, replay"),
])
def test_an_unknown_filter_is_a_user_error_not_an_empty_list(runs, kwargs, message):
    with ResultsStore.open(runs) as store:
        with pytest.raises(UserError) as err:
            store.list(**kwargs)
    assert str(err.value) == message


def test_cli_filters_name_what_they_accept(runs):
    r = _cli("runs", "list", str(runs), "--suite", "replya")
    assert r.returncode == 2 and "no such suite" in r.stderr and "replay" in r.stderr
    # A registered suite with no run here is a valid filter with an empty answer.
    data = json.loads(_cli("runs", "list", str(runs), "--suite", "cases", "--json").stdout)
    assert data["runs"] == []
    data = json.loads(_cli("runs", "list", str(runs), "--status", "finished", "--json").stdout)
    assert len(data["runs"]) == 3


def test_cli_runs_list_and_show(runs):
    r = _cli("runs", "list", str(runs))
    assert r.returncode == 0, r.stderr
    assert "4 runs in" in r.stdout and "did not finish (started)" in r.stdout and "bm25 CTL 3" in r.stdout
    data = json.loads(_cli("runs", "list", str(runs), "--suite", "qa", "--json").stdout)
    assert [row["path"] for row in data["runs"]] == ["nested/qa-a"]
    r = _cli("runs", "show", "qa-a", "--runs-dir", str(runs))
    assert r.returncode == 0, r.stderr
    assert "qa-a" in r.stdout and "arms/none/rep01/record.json" in r.stdout and "ok" in r.stdout
    units = runs / "replay-a" / "units.jsonl"
    units.write_text(units.read_text() + units.read_text().splitlines(True)[0])  # still units, not the recorded bytes
    shown = json.loads(_cli("runs", "show", str(runs / "replay-a"), "--json").stdout)
    assert shown["integrity"] == {"units.jsonl": "changed"}
    r = _cli("runs", "show", "nope", "--runs-dir", str(runs))
    assert r.returncode == 2 and "no run with that path or id" in r.stderr


def test_cli_runs_show_without_a_runs_dir_names_the_run_asked_for(tmp_path):
    # It said only "ctxgauge-runs: no such directory of runs", never naming the run the user gave.
    r = _cli("runs", "show", str(tmp_path / "gone"), cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"{tmp_path / 'gone'}: no such run directory" in r.stderr and "--runs-dir" in r.stderr
