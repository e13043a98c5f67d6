"""Ctrl-C during a run: the one line printed names the run directory and how to resume it (the default
directory's name holds a time stamp the user never saw), and the resumed run finishes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until `path` exists; the run must still be going (a run that ended first is the flake this avoids)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_ctrl_c_names_the_run_directory_and_the_resume_command(repo_builder, tmp_path, script_engine, ctrl_c_popen):
    repo = repo_builder("repo")
    repo.commit("Start", {"a.py": "x = 0\n", "b.py": "y = 0\n"})
    for i in range(4):
        repo.commit(f"Change number {i} in a", {"a.py": f"x = {i + 1}\n", "b.py": f"y = {i + 1}\n"})
    # The engine answers the first query and never the second: the SIGINT always lands mid-run, however
    # loaded the machine (a slow engine alone let the replay finish first, exit 0).
    engine = script_engine("--hang-on=query:2", timeout=600)
    work = tmp_path / "work"
    work.mkdir()
    args = [sys.executable, "-m", "ctxgauge", "replay", str(repo.path), "--engine", engine, "--commits", "0"]
    proc = ctrl_c_popen(args, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(script_engine.hanging, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    (run_dir,) = [p for p in (work / "ctxgauge-runs").iterdir()]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert f"--out {Path('ctxgauge-runs') / run_dir.name} --resume" in lines[0]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "cancelled"
    kept = (run_dir / "units.jsonl").read_text().splitlines()
    # The root commit (skipped: nothing to compare against) and the one commit answered before the hang.
    assert [json.loads(line)["status"] for line in kept] == ["skipped", "ok"]
    script_engine.mend()
    done = subprocess.run([*args, "--out", str(Path("ctxgauge-runs") / run_dir.name), "--resume"], cwd=work,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads((run_dir / "run.json").read_text())["status"] == "success"
    units = (run_dir / "units.jsonl").read_text().splitlines()
    assert len(units) == 5 and units[:2] == kept  # the kept units are not redone
