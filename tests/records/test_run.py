"""Writing and reading run directories: RunDir, read_run, read_units, the typed record."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.records import (
    SCHEMA_VERSION, RunDir, RunRecord, Subject, Unit, file_sha256, machine, provenance, read_run, read_units, unknown,
)

SUBJECT = Subject("demo", ["bm25", "grep"])


def start(path, suite="s", spec=None, **kw):
    return RunDir.start(path, suite=suite, suite_version=1, subject=SUBJECT, spec={} if spec is None else spec, **kw)


def test_a_run_records_units_results_and_file_hashes(tmp_path):
    d = tmp_path / "run"
    with start(d, "replay", {"engine": "bm25", "seed": 7}) as run:
        assert read_run(d).status == "started"
        run.add_unit("c1", "ok", figures={"hit@5": 1.0}, request="fix the parser")
        run.add_unit("c2", "failed", reason="engine timed out")
        run.add_unit("c3", "skipped", reason="merge")
        (d / "extra.json").write_text("{}")
        run.finish(results={"hit@5": 1.0}, headline="hit@5 1.000")
    rec = read_run(d)
    assert isinstance(rec, RunRecord)
    assert rec.status == "success" and rec.schema_version == SCHEMA_VERSION and rec.finished
    assert rec.suite == "replay" and rec.suite_version == 1 and rec.subject == SUBJECT
    assert rec.counts == {"ok": 1, "failed": 1, "skipped": 1}
    assert rec.files == {"extra.json": file_sha256(d / "extra.json"), "units.jsonl": file_sha256(d / "units.jsonl")}
    assert rec.spec == {"engine": "bm25", "seed": 7}
    assert rec.headline == "hit@5 1.000" and rec.results == {"hit@5": 1.0}
    assert "started_at" in rec.timing and "finished_at" in rec.timing
    units = read_units(d)
    assert [u.id for u in units] == ["c1", "c2", "c3"] and all(isinstance(u, Unit) for u in units)
    assert units[0].request == "fix the parser" and units[0].figures == {"hit@5": 1.0}
    assert units[1].reason == "engine timed out" and units[1].request is None


def test_the_json_form_round_trips_and_every_field_is_documented():
    import ast
    import inspect

    import ctxgauge.records._model as model

    rec = RunRecord("x", 3, "r1", Subject("d", ["a"], "m"), {"k": 1}, "success", {"c": 1}, {"p": 1}, {"r": 2},
                    "h", {"ok": 1}, None, {"f": "0" * 64}, {"started_at": "t"})
    assert RunRecord.from_json(json.loads(json.dumps(rec.to_json()))) == rec
    unit = Unit("u", "ok", None, {"m": 1.0}, "req", {"s": 0.1}, {"expected": ["a.py"]})
    assert unit.to_json()["expected"] == ["a.py"]  # the suite's own fields sit flat beside the typed ones
    assert Unit.from_json(json.loads(json.dumps(unit.to_json()))) == unit
    # A docstring under every field (STYLE: docstrings on every record field).
    tree = ast.parse(inspect.getsource(model))
    for cls in (RunRecord, Subject, Unit):
        node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
        documented = {stmt.target.id for stmt, nxt in zip(node.body, node.body[1:])
                      if isinstance(stmt, ast.AnnAssign) and isinstance(nxt, ast.Expr)
                      and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)}
        assert {f.name for f in dataclasses.fields(cls)} <= documented, cls.__name__


def test_suite_version_is_a_required_integer(tmp_path):
    with pytest.raises(TypeError):
        RunDir.start(tmp_path / "a", suite="s", spec={}, subject=SUBJECT)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="suite_version must be an int"):
        RunDir.start(tmp_path / "b", suite="s", suite_version="1", subject=SUBJECT, spec={})  # type: ignore[arg-type]
    start(tmp_path / "c").finish()
    data = json.loads((tmp_path / "c" / "run.json").read_text())
    assert data["suite_version"] == 1 and "suite_version" not in data["spec"]
    data["suite_version"] = "1"
    (tmp_path / "c" / "run.json").write_text(json.dumps(data))
    with pytest.raises(UserError, match="suite_version must be an integer"):
        read_run(tmp_path / "c")


def test_an_existing_run_is_never_overwritten(tmp_path):
    d = tmp_path / "run"
    start(d, "replay").finish()
    with pytest.raises(UserError, match="already recorded"):
        start(d, "replay")
    with pytest.raises(UserError, match="already finished"):
        start(d, "replay", resume=True)


def test_a_finished_run_with_failed_units_resumes_and_retries_them(tmp_path):
    # DESIGN's exit 6 and 7 say `--resume` fills the failed units: a finished run that has some used to be
    # refused as "already finished".
    d = tmp_path / "run"
    run = start(d, "replay", {"n": 1})
    run.add_unit("a", "ok")
    run.add_unit("b", "failed", reason="engine exited")
    run.finish()
    again = start(d, "replay", {"n": 1}, resume=True)
    assert again.is_done("a") and not again.is_done("b")
    again.add_unit("b", "ok")
    assert again.finish()["counts"] == {"ok": 2, "failed": 0, "skipped": 0}
    with pytest.raises(UserError, match="already finished with no failed unit"):
        start(d, "replay", {"n": 1}, resume=True)


def test_an_unknown_spec_value_takes_the_value_learned_on_resume(tmp_path):
    # An engine whose identity request failed: every unit failed, so the mended engine's identity is taken.
    d = tmp_path / "run"
    run = start(d, "replay", {"engine": "x", "engine_identity": unknown("identity: exited with status 3")})
    run.add_unit("a", "failed", reason="identity: exited with status 3")
    run.finish()
    mended = {"engine": "x", "engine_identity": {"id": "x-1", "source": "declared"}}
    with pytest.raises(UserError, match="different options"):
        start(d, "replay", {**mended, "engine": "y"}, resume=True)  # every other value must still match
    again = start(d, "replay", mended, resume=True)
    assert read_run(d).spec == mended
    again.add_unit("a", "ok")
    again.finish()
    assert read_run(d).spec == mended


def test_a_known_spec_value_is_kept_and_an_unknown_one_never_replaces_a_measured_run(tmp_path):
    ident = {"id": "x-1", "source": "declared"}
    d = tmp_path / "run"
    run = start(d, "replay", {"engine_identity": ident})
    run.add_unit("a", "ok")
    run.add_unit("b", "failed", reason="crash")
    run.finish()
    # The engine broke since: its identity is unknown now; the recorded one stays, the failed unit is retried.
    again = start(d, "replay", {"engine_identity": unknown("identity: timed out")}, resume=True)
    assert read_run(d).spec == {"engine_identity": ident} and not again.is_done("b")
    again.finish()
    # A recorded unknown with a measured unit: a value it depended on cannot be filled in afterwards.
    e = tmp_path / "odd"
    run = start(e, "replay", {"engine_identity": unknown("?")})
    run.add_unit("a", "ok")
    run.add_unit("b", "failed", reason="crash")
    run.finish()
    with pytest.raises(UserError, match="different options"):
        start(e, "replay", {"engine_identity": ident}, resume=True)
    start(e, "replay", {"engine_identity": {"unknown": "another reason"}}, resume=True)  # still unknown: same


def test_resume_skips_done_units_retries_failed_and_survives_a_torn_line(tmp_path):
    d = tmp_path / "run"
    run = start(d, "replay", {"n": 3})
    run.add_unit("a", "ok", figures={"x": 1})
    run.add_unit("b", "failed", reason="crash")
    with open(d / "units.jsonl", "a") as fh:
        fh.write('{"id": "c", "sta')  # the process died mid-line
    run.close()  # ... and its writer lock with it
    with pytest.raises(UserError, match="different options"):
        start(d, "replay", {"n": 4}, resume=True)
    again = start(d, "replay", {"n": 3}, resume=True)
    assert again.is_done("a") and not again.is_done("b") and not again.is_done("c")
    assert again.done["a"]["figures"] == {"x": 1}  # the suite gets back the line it wrote
    again.add_unit("b", "ok")
    again.add_unit("c", "ok")
    rec = again.finish()
    assert rec["counts"] == {"ok": 3, "failed": 0, "skipped": 0}
    assert [u.id for u in read_units(d)] == ["a", "b", "c"]


def test_an_exception_marks_the_run_error_and_ctrl_c_cancelled(tmp_path):
    with pytest.raises(RuntimeError):
        with start(tmp_path / "e"):
            raise RuntimeError("boom")
    assert read_run(tmp_path / "e").status == "error"
    with pytest.raises(KeyboardInterrupt):
        with start(tmp_path / "c"):
            raise KeyboardInterrupt
    assert read_run(tmp_path / "c").status == "cancelled"


def test_readers_refuse_a_newer_schema(tmp_path):
    d = tmp_path / "run"
    start(d).finish()
    rec = json.loads((d / "run.json").read_text())
    rec["schema_version"] = SCHEMA_VERSION + 1
    (d / "run.json").write_text(json.dumps(rec))
    with pytest.raises(UserError, match="newer than this ctxgauge reads"):
        read_run(d)
    with pytest.raises(UserError, match="newer than this ctxgauge reads"):
        read_units(d)


def test_records_hold_no_absolute_home_path(tmp_path):
    d = tmp_path / "run"
    start(d).finish()
    text = (d / "run.json").read_text()
    assert os.path.expanduser("~") + "/" not in text


def test_provenance_holds_the_machine_spec(tmp_path):
    # ContextBenchmark's disclosure: CPU model, core count, memory, OS and architecture.
    spec = provenance()["platform"]
    assert spec["system"] == platform.system().lower() and spec["machine"] == platform.machine()
    assert spec["release"] == platform.release()
    assert spec["cpu_count"] == os.cpu_count()
    if hasattr(os, "sysconf") and "SC_PHYS_PAGES" in os.sysconf_names:
        assert spec["memory_bytes"] == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if os.path.exists("/proc/cpuinfo"):
        names = [line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo", encoding="utf-8")
                 if line.split(":")[0].strip() in ("model name", "Model", "Hardware", "cpu model")]
        if names:
            assert spec["cpu_model"] == names[0]
    assert machine() == spec
    start(tmp_path / "run").finish()
    assert read_run(tmp_path / "run").provenance["platform"] == spec


def test_a_damaged_unit_line_is_a_user_error(tmp_path):
    d = tmp_path / "run"
    run = start(d)
    run.add_unit("a", "ok")
    with open(d / "units.jsonl", "a") as fh:
        fh.write('["not", "a", "unit"]\n')
    with pytest.raises(UserError, match=r"units.jsonl:2: not a unit"):
        read_units(d)


# -- hostile places and interrupted first writes --------------------------------------------------------------
def test_out_at_a_file_below_a_file_or_in_proc_is_a_user_error(tmp_path):
    f = tmp_path / "a-file"
    f.write_text("x")
    for place, message in [(f, "is a file, not a directory"), (f / "below", "cannot make the run directory"),
                           (Path("/proc/ctxgauge-x"), "cannot make the run directory")]:
        with pytest.raises(UserError, match=message):
            start(place)
    assert f.read_text() == "x"


def test_a_kill_during_the_first_run_json_write_does_not_block_the_directory(tmp_path):
    # write_json_atomic's temporary file is all a SIGKILL during the very first write leaves behind.
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / ".run.json.4242.deadbeef.tmp").write_text('{"schema_ver')
    start(run_dir).finish("success")
    assert read_run(run_dir).status == "success"
    assert [p.name for p in run_dir.iterdir() if p.name.endswith(".tmp")] == []
    again = tmp_path / "again"
    again.mkdir()
    (again / ".run.json.4242.deadbeef.tmp").write_text("")
    start(again, resume=True).finish("success")  # --resume of a run that never recorded: starts it


def test_other_content_is_still_refused(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / ".run.json.4242.deadbeef.tmp").write_text("")
    (run_dir / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="exists and is not empty"):
        start(run_dir)
    assert (run_dir / "notes.txt").read_text() == "mine"


def test_damaged_unit_lines_are_named_and_a_torn_last_line_dropped(tmp_path):
    run = start(tmp_path / "run")
    run.add_unit("a", "ok")
    units = tmp_path / "run" / "units.jsonl"
    with open(units, "ab") as fh:
        fh.write(b'{"id": "b", "status": "ok", "fig')
    assert [u.id for u in read_units(tmp_path / "run")] == ["a"]
    for bad in (b"42\n", b'{"status": "ok"}\n', b"not json\n", b'"\xff"\n'):
        units.write_bytes(b'{"id": "a", "status": "ok", "figures": {}}\n' + bad)
        with pytest.raises(UserError, match=r"units.jsonl:2"):
            read_units(tmp_path / "run")


def test_a_file_name_that_is_not_utf8_is_recorded_and_read_back(tmp_path):
    run = start(tmp_path / "run")
    name = b"bad\xffname.py".decode("utf-8", "surrogateescape")
    run.add_unit("a", "ok", figures={"gap": [name]})
    run.finish("success", results={"paths": [name]})
    (tmp_path / "run" / "units.jsonl").read_bytes().decode("utf-8")  # valid UTF-8 on disk
    assert read_units(tmp_path / "run")[0].figures == {"gap": [name]}
