"""Ctrl-C during a run: the one line printed names the run directory and how to resume it (the default
directory's name holds a time stamp the user never saw), and the resumed run finishes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

# An engine that answers slowly, so a SIGINT lands while commits are still being replayed.
SLOW_ENGINE = """
import json, sys, time
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "identity":
        out = {"ok": True, "identity": {"id": "slow-1", "source": "declared"}}
    elif req["op"] == "build":
        out = {"ok": True}
    else:
        time.sleep(0.5)
        out = {"ok": True, "hits": [{"path": "a.py", "score": 1.0}]}
    print(json.dumps(out), flush=True)
"""


def test_ctrl_c_names_the_run_directory_and_the_resume_command(repo_builder, tmp_path):
    repo = repo_builder("repo")
    repo.commit("Start", {"a.py": "x = 0\n", "b.py": "y = 0\n"})
    for i in range(20):  # 10 s of queries at least: the SIGINT lands mid-run on a loaded machine too
        repo.commit(f"Change number {i} in a", {"a.py": f"x = {i + 1}\n", "b.py": f"y = {i + 1}\n"})
    engine_py = tmp_path / "slow_engine.py"
    engine_py.write_text(SLOW_ENGINE)
    engine = f'command(cmd="{sys.executable} {engine_py}")'
    work = tmp_path / "work"
    work.mkdir()
    args = [sys.executable, "-m", "ctxgauge", "replay", str(repo.path), "--engine", engine, "--commits", "0"]
    proc = subprocess.Popen(args, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(work.glob("ctxgauge-runs/*/units.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    (run_dir,) = [p for p in (work / "ctxgauge-runs").iterdir()]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert f"--out {Path('ctxgauge-runs') / run_dir.name} --resume" in lines[0]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "cancelled"
    done = subprocess.run([*args, "--out", str(Path("ctxgauge-runs") / run_dir.name), "--resume"], cwd=work,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads((run_dir / "run.json").read_text())["status"] == "success"
