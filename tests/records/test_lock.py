"""One writer per run directory: real processes racing for one `--out`, a SIGKILLed holder, the lock file's
place in a record (never hashed, never exported, alone it counts as empty) and readers that never create it.

Two `ctxgauge replay --out X` started together both printed "run recorded" in 5 of 8 tries, their unit
lines interleaved under one run.json. The holder here is paused at its first write by a FIFO as its
`CTXGAUGE_KILL_TRACE` file (a write to a FIFO nobody reads blocks), so the second writer certainly arrives
while the first holds the lock, whichever of the two wins it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.records import LOCK_FILE, RunDir, Subject, check_not_written, lock_dir, read_run, read_units

_RUN = [sys.executable, "-m", "ctxgauge"]
_ENV = {**os.environ, "COLUMNS": "300"}


def _replay(sample: Path, engine: str, out: Path, *extra: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(_RUN + ["replay", str(sample), "--engine", engine, "--commits", "2", "-k", "5",
                                    "--out", str(out), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**_ENV, **(env or {})})


def _first_to_end(procs: list[subprocess.Popen], deadline: float) -> subprocess.Popen:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        for p in procs:
            if p.poll() is not None:
                return p
        time.sleep(0.02)
    for p in procs:
        p.kill()
    raise AssertionError("neither writer ended: both went on writing (no lock), or the lock was never refused")


def _refusal(out: Path, pid: int) -> str:
    return f"error: {out}: another ctxgauge (pid {pid}) is writing this run"


def _race(sample: Path, tmp_path: Path, tries: int) -> None:
    for i in range(tries):
        out, gate = tmp_path / f"out{i}", tmp_path / f"gate{i}"
        os.mkfifo(gate)
        env = {"CTXGAUGE_KILL_TRACE": str(gate)}
        procs = [_replay(sample, "grep", out, env=env), _replay(sample, "bm25", out, env=env)]
        loser = _first_to_end(procs, deadline=60)
        winner = procs[1 - procs.index(loser)]
        _, err = loser.communicate()
        assert loser.returncode == 2, err
        assert err.strip().splitlines() == [err.strip()] and err.startswith(_refusal(out, winner.pid)), err
        # Open the gate (read-write: the holder's writes never block again, the pipe keeps what it writes).
        fd = os.open(gate, os.O_RDWR)
        try:
            stdout, err = winner.communicate(timeout=60)
        finally:
            os.close(fd)
        assert winner.returncode in (0, 1), err
        assert "run recorded" in stdout + err
        engine = "grep" if winner is procs[0] else "bm25"
        record = read_run(out)
        assert record.status == "success" and record.subject.systems == [engine]
        units = read_units(out)
        assert units and {u.run_id for u in units} == {record.run_id}
        assert (out / LOCK_FILE).read_text().strip() == str(winner.pid)  # stale now, no lock behind it


def test_two_writers_on_one_out_one_records_the_other_is_refused(sample_repo, tmp_path):
    _race(sample_repo, tmp_path, 3)


@pytest.mark.slow
def test_two_writers_ten_tries(sample_repo, tmp_path):
    _race(sample_repo, tmp_path, 10)


def test_a_sigkilled_holder_leaves_no_lock_behind_and_resume_continues(sample_repo, tmp_path):
    out = tmp_path / "out"
    env = {"CTXGAUGE_KILL_AT": "write-after/units.jsonl@1"}
    killed = _replay(sample_repo, "grep", out, env=env)
    killed.communicate(timeout=60)
    assert killed.returncode == -signal.SIGKILL
    assert (out / LOCK_FILE).read_text().strip() == str(killed.pid)  # the kernel let go; the file stays
    assert read_run(out).status == "started"
    resumed = _replay(sample_repo, "grep", out, "--resume")
    stdout, err = resumed.communicate(timeout=60)
    assert resumed.returncode in (0, 1), err
    assert read_run(out).status == "success" and (out / LOCK_FILE).read_text().strip() == str(resumed.pid)


def test_a_paused_holder_refuses_a_resume_then_its_death_frees_the_run(sample_repo, tmp_path):
    out, gate = tmp_path / "out", tmp_path / "gate"
    os.mkfifo(gate)
    holder = _replay(sample_repo, "grep", out, env={"CTXGAUGE_KILL_TRACE": str(gate)})
    end = time.monotonic() + 60
    while not ((out / LOCK_FILE).exists() and (out / LOCK_FILE).read_text().strip() == str(holder.pid)):
        assert time.monotonic() < end and holder.poll() is None
        time.sleep(0.02)
    second = _replay(sample_repo, "grep", out, "--resume")
    _, err = second.communicate(timeout=60)
    assert second.returncode == 2 and err.startswith(_refusal(out, holder.pid)), err
    holder.send_signal(signal.SIGKILL)
    holder.communicate()
    again = _replay(sample_repo, "grep", out, "--resume")
    _, err = again.communicate(timeout=60)
    assert again.returncode in (0, 1), err
    assert read_run(out).status == "success"


def _start(path: Path) -> RunDir:
    return RunDir.start(path, suite="replay", suite_version=1, subject=Subject(dataset="d", systems=["e"]),
                        spec={})


def test_the_lock_is_held_for_the_run_and_never_part_of_the_record(tmp_path):
    run = _start(tmp_path / "run")
    with pytest.raises(UserError, match=r"another ctxgauge \(pid \d+\) is writing this run"):
        lock_dir(tmp_path / "run")  # a second open file description: refused, even in this process
    with pytest.raises(UserError, match="is writing this run"):
        check_not_written(tmp_path / "run")
    run.add_unit("a", "ok", figures={"x": 1})
    record = run.finish()
    assert LOCK_FILE not in record["files"] and (tmp_path / "run" / LOCK_FILE).is_file()
    check_not_written(tmp_path / "run")  # finished: free
    lock_dir(tmp_path / "run").release()
    assert read_units(tmp_path / "run")[0].run_id == "run"


def test_a_folder_holding_only_the_lock_file_counts_as_empty(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_FILE).write_text("12345\n")  # a writer killed right after locking
    _start(out).finish()
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="not empty"):
        _start(tmp_path / "busy")
    assert not (tmp_path / "busy" / LOCK_FILE).exists()  # refused before a lock file landed in someone's folder


def test_readers_never_create_the_lock_file(tmp_path):
    run = tmp_path / "run"
    _start(run).finish()
    (run / LOCK_FILE).unlink()
    check_not_written(run)
    r = subprocess.run(_RUN + ["runs", "show", str(run)], capture_output=True, text=True, env=_ENV)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(_RUN + ["report", str(run)], capture_output=True, text=True, env=_ENV)
    assert r.returncode == 0, r.stderr
    assert not (run / LOCK_FILE).exists()


def test_the_lock_file_is_never_exported(tmp_path):
    from ctxgauge.export import export_runs

    _start(tmp_path / "runs" / "a").finish()
    result = export_runs(tmp_path / "runs", tmp_path / "site")
    assert (tmp_path / "runs" / "a" / LOCK_FILE).is_file()
    assert not list((tmp_path / "site").rglob(LOCK_FILE)) and result.runs == 1
