from __future__ import annotations

import json

import pytest

from ctxgauge.errors import UserError
from ctxgauge.records import SCHEMA_VERSION, RunDir, file_sha256, read_run, read_units


def test_a_run_records_units_results_and_file_hashes(tmp_path):
    d = tmp_path / "run"
    with RunDir.start(d, suite="replay", spec={"engine": "bm25", "seed": 7}) as run:
        assert read_run(d)["status"] == "started"
        run.add_unit("c1", "ok", figures={"hit@5": 1.0})
        run.add_unit("c2", "failed", reason="engine timed out")
        run.add_unit("c3", "skipped", reason="merge")
        (d / "extra.json").write_text("{}")
        run.finish(results={"hit@5": 1.0})
    rec = read_run(d)
    assert rec["status"] == "success" and rec["schema_version"] == SCHEMA_VERSION
    assert rec["counts"] == {"ok": 1, "failed": 1, "skipped": 1}
    assert rec["files"] == {"extra.json": file_sha256(d / "extra.json"), "units.jsonl": file_sha256(d / "units.jsonl")}
    assert rec["spec"] == {"engine": "bm25", "seed": 7}
    assert "started_at" in rec["timing"] and "finished_at" in rec["timing"]


def test_an_existing_run_is_never_overwritten(tmp_path):
    d = tmp_path / "run"
    RunDir.start(d, suite="replay", spec={}).finish()
    with pytest.raises(UserError, match="already recorded"):
        RunDir.start(d, suite="replay", spec={})
    with pytest.raises(UserError, match="already finished"):
        RunDir.start(d, suite="replay", spec={}, resume=True)


def test_resume_skips_done_units_retries_failed_and_survives_a_torn_line(tmp_path):
    d = tmp_path / "run"
    run = RunDir.start(d, suite="replay", spec={"n": 3})
    run.add_unit("a", "ok", figures={"x": 1})
    run.add_unit("b", "failed", reason="crash")
    with open(d / "units.jsonl", "a") as fh:
        fh.write('{"id": "c", "sta')  # the process died mid-line
    with pytest.raises(UserError, match="different options"):
        RunDir.start(d, suite="replay", spec={"n": 4}, resume=True)
    again = RunDir.start(d, suite="replay", spec={"n": 3}, resume=True)
    assert again.is_done("a") and not again.is_done("b") and not again.is_done("c")
    again.add_unit("b", "ok")
    again.add_unit("c", "ok")
    rec = again.finish()
    assert rec["counts"] == {"ok": 3, "failed": 0, "skipped": 0}
    assert [u["id"] for u in read_units(d)] == ["a", "b", "c"]


def test_an_exception_marks_the_run_error_and_ctrl_c_cancelled(tmp_path):
    with pytest.raises(RuntimeError):
        with RunDir.start(tmp_path / "e", suite="s", spec={}):
            raise RuntimeError("boom")
    assert read_run(tmp_path / "e")["status"] == "error"
    with pytest.raises(KeyboardInterrupt):
        with RunDir.start(tmp_path / "c", suite="s", spec={}):
            raise KeyboardInterrupt
    assert read_run(tmp_path / "c")["status"] == "cancelled"


def test_readers_refuse_a_newer_schema(tmp_path):
    d = tmp_path / "run"
    RunDir.start(d, suite="s", spec={}).finish()
    rec = json.loads((d / "run.json").read_text())
    rec["schema_version"] = SCHEMA_VERSION + 1
    (d / "run.json").write_text(json.dumps(rec))
    with pytest.raises(UserError, match="newer than this ctxgauge reads"):
        read_run(d)


def test_records_hold_no_absolute_home_path(tmp_path, monkeypatch):
    d = tmp_path / "run"
    RunDir.start(d, suite="s", spec={}).finish()
    import os
    text = (d / "run.json").read_text()
    assert os.path.expanduser("~") + "/" not in text
