"""Each command's own temporary directory (`ctxgauge.cli._scratch`): removed when it ends, and swept by a
later command when a SIGKILL left it."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ctxgauge.cli._scratch import outer_tempdir, process_scratch, sweep_stale


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # reaped: the pid no longer runs (a zombie would still answer kill 0)
    return proc.pid


def test_only_directories_of_pids_that_no_longer_run_are_swept(tmp_path):
    dead = tmp_path / f"ctxgauge-run-{_dead_pid()}-abc123"
    (dead / "ctxgauge-cases-x").mkdir(parents=True)
    (dead / "ctxgauge-cases-x" / "index.bin").write_bytes(b"x" * 100)
    live = tmp_path / f"ctxgauge-run-{os.getppid()}-def456"  # pytest's parent: it runs
    live.mkdir()
    mine = tmp_path / f"ctxgauge-run-{os.getpid()}-ghi789"
    mine.mkdir()
    odd = tmp_path / "ctxgauge-run-notapid-x"
    odd.mkdir()
    other = tmp_path / "ctxgauge-cases-old"  # not a command's own directory: never touched
    other.mkdir()
    a_file = tmp_path / f"ctxgauge-run-{_dead_pid()}-file"
    a_file.write_text("not a directory\n")
    assert sweep_stale(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (live, mine, odd, other, a_file))


def test_the_scratch_holds_the_command_s_temporary_files_and_goes_at_the_end(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / f"ctxgauge-run-{_dead_pid()}-zzz"
    stale.mkdir()
    with process_scratch() as mine:
        assert mine is not None and mine.parent == tmp_path and mine.name.startswith(f"ctxgauge-run-{os.getpid()}-")
        assert not stale.exists()  # swept before the command's own is made
        inner = Path(tempfile.mkdtemp(prefix="ctxgauge-cases-"))
        assert inner.parent == mine and os.environ["TMPDIR"] == str(mine)
        assert outer_tempdir() == str(tmp_path)  # where a crash log goes: it outlives the command
    assert list(tmp_path.iterdir()) == [] and tempfile.gettempdir() == str(tmp_path)
    assert os.environ.get("TMPDIR") != str(mine)


def test_a_command_sweeps_what_a_killed_one_left_and_leaves_nothing(tmp_path):
    stale = tmp_path / f"ctxgauge-run-{_dead_pid()}-abc"
    (stale / "ctxgauge-replay-x").mkdir(parents=True)
    done = subprocess.run([sys.executable, "-m", "ctxgauge", "engines"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []
