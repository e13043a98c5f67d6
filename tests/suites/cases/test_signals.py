"""A cases run leaves no temporary directory behind however it ends short of SIGKILL: a normal end, a crash
of its engine, Ctrl-C (SIGINT) and `kill` (SIGTERM). A signal records the run `cancelled` with every unit
done so far, and `--resume` finishes it. SIGKILL cannot be caught: its directory stays until the next command
sweeps it (the units it finished stay in the record too, and the resumed run equals an uninterrupted one)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

def _setup(tmp_path: Path, n: int, engine: str) -> tuple[list[str], dict[str, str], Path]:
    (tmp_path / "lib").mkdir()
    for i in range(3):
        (tmp_path / "lib" / f"m{i}.py").write_text(f"def f{i}(): pass\n")
    (tmp_path / "cases.yaml").write_text("corpus: lib\ncases:\n" + "".join(
        f"  - {{name: c{i}, query: f{i}, expected: [m{i % 3}.py]}}\n" for i in range(n)))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    args = [sys.executable, "-m", "ctxgauge", "cases", str(tmp_path / "cases.yaml"), "--engine", engine,
            "--out", str(tmp_path / "run")]
    return args, {**os.environ, "TMPDIR": str(scratch)}, scratch


N = 6  # cases per run


def _leftovers(scratch: Path) -> list[str]:
    # Anywhere under TMPDIR: a command keeps its temporary directories inside its own ctxgauge-run-<pid>-*.
    return sorted(p.name for p in scratch.rglob("ctxgauge-*"))


def test_a_normal_end_and_an_engine_crash_leave_no_temporary_directory(tmp_path, script_engine):
    args, env, scratch = _setup(tmp_path, 2, script_engine("--exit-on=query"))
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 7, done.stderr  # every case failed: nothing measured
    assert _leftovers(scratch) == []
    args[-1] = str(tmp_path / "run2")
    script_engine.mend()
    (tmp_path / "cases.yaml").write_text("corpus: lib\ncases:\n  - {name: c0, query: f0, expected: [m0.py]}\n")
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert _leftovers(scratch) == []


# The engine answers the first case and never the second, so a signal always lands mid-run with one unit
# recorded, however loaded the machine (it hangs until the signalled run closes it).
HANG = ("--hang-on=query:2",)


def _signalled(popen, args: list[str], env: dict[str, str], scratch: Path, run: Path, sig: int,
               hanging: Path) -> tuple[int, str]:
    proc = popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    units = run / "units.jsonl"
    while not (hanging.exists() and units.exists() and units.read_text().strip()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the engine never reached its second query"
        time.sleep(0.02)
    assert len(_leftovers(scratch)) == 2  # the command's own directory and the run's inside, while it runs
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_cancels_the_run_removes_its_directory_and_resume_finishes(tmp_path, script_engine, ctrl_c_popen,
                                                                            sig, code, word):
    args, env, scratch = _setup(tmp_path, N, script_engine(*HANG, timeout=600))
    rc, err = _signalled(ctrl_c_popen, args, env, scratch, tmp_path / "run", sig, script_engine.hanging)
    assert rc == code, err
    assert err.strip().startswith(f"error: {word}; the run is recorded as cancelled") and "Traceback" not in err
    assert _leftovers(scratch) == []
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["status"] == "cancelled"
    kept = (tmp_path / "run" / "units.jsonl").read_text().splitlines()
    assert len(kept) == 1
    # The line prints the command to copy (issue 39): the same arguments and --resume, quoted for a shell.
    printed = shlex.split(err.strip().splitlines()[-1].split("; to continue it: ", 1)[1])
    assert printed == ["ctxgauge", *args[3:], "--resume"]
    script_engine.mend()
    done = subprocess.run([*args[:3], *printed[1:]], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "success"
    units = [json.loads(line) for line in (tmp_path / "run" / "units.jsonl").read_text().splitlines()]
    assert sorted(u["id"] for u in units) == sorted(f"c{i}" for i in range(N))  # each once: none lost or redone
    assert units[:len(kept)] == [json.loads(line) for line in kept]
    assert _leftovers(scratch) == []


def test_sigkill_leaves_the_directory_until_the_next_command_and_loses_no_unit(tmp_path, script_engine, ctrl_c_popen):
    # What no process can clean up after: the next command sweeps it (its pid no longer runs).
    args, env, scratch = _setup(tmp_path, N, script_engine(*HANG, timeout=600))
    rc, _ = _signalled(ctrl_c_popen, args, env, scratch, tmp_path / "run", signal.SIGKILL, script_engine.hanging)
    assert rc == -signal.SIGKILL
    assert len(_leftovers(scratch)) == 2
    kept = (tmp_path / "run" / "units.jsonl").read_text().splitlines()
    assert len(kept) == 1
    script_engine.mend()
    done = subprocess.run([*args, "--resume"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    units = [json.loads(line) for line in (tmp_path / "run" / "units.jsonl").read_text().splitlines()]
    assert sorted(u["id"] for u in units) == sorted(f"c{i}" for i in range(N))
    assert units[:len(kept)] == [json.loads(line) for line in kept]
    assert _leftovers(scratch) == []  # the killed run's directory, swept by the resumed run
