"""No orphans (issue 36 item 7, F19): after a SIGKILL of ctxgauge's main process, every process it started is
gone within 10 s: the pool workers of `replay --executor local:2`, the multiprocessing resource tracker, and a
command engine's program.

Real processes throughout: the real CLI on the bundled sample, its descendants collected with psutil while it
runs (they are reparented once it dies, so they must be known before)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil")

GONE_WITHIN = 10.0


def cmdline(p) -> str:
    """A process's command line, "" once it is gone (git and other short-lived children come and go)."""
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def survivors(procs, within: float) -> list:
    """The processes of `procs` still running (zombies count as gone) after waiting up to `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        alive = []
        for p in procs:
            try:
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(p)
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def kill_when(proc: subprocess.Popen, enough, timeout: float = 60.0) -> list:
    """SIGKILL `proc` once `enough(descendants)` holds; returns the descendants it had (psutil objects)."""
    main = psutil.Process(proc.pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = main.children(recursive=True)
        if enough(kids):
            break
        if proc.poll() is not None:
            pytest.fail("ctxgauge ended before its children could be seen")
        time.sleep(0.05)
    else:
        pytest.fail("the expected child processes never appeared")
    kids = main.children(recursive=True)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return kids


def test_sigkill_of_replay_local2_leaves_no_worker_nor_resource_tracker(sample_repo: Path, tmp_path: Path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxgauge", "replay", str(sample_repo), "--engine", "bm25", "--executor", "local:2",
         "--commits", "0", "--out", str(tmp_path / "run")],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        workers = lambda kids: sum("multiprocessing" in cmdline(k) for k in kids) >= 3  # noqa: E731
        kids = kill_when(proc, workers)
        assert any("resource_tracker" in cmdline(k) for k in kids)
        left = survivors(kids, GONE_WITHIN)
        for p in left:
            p.kill()
        assert not left, f"still running {GONE_WITHIN} s after ctxgauge was killed: {[cmdline(p) for p in left]}"
    finally:
        if proc.poll() is None:
            proc.kill()
def test_sigkill_of_query_kills_the_engine_program(sample_repo: Path, tmp_path: Path):
    # A program that never answers and never reads its stdin: only the kernel can end it with its parent.
    marker = "ctxgauge-orphan-test-" + tmp_path.name
    cmd = shlex.join([sys.executable, "-c", f"import time; time.sleep(120)  # {marker}"])
    spec = f"command(cmd={json.dumps(cmd)},timeout=120)"
    proc = subprocess.Popen([sys.executable, "-m", "ctxgauge", "query", str(sample_repo), "a book", "--engine", spec],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        engine = lambda kids: any(marker in cmdline(k) for k in kids)  # noqa: E731
        kids = [k for k in kill_when(proc, engine) if marker in cmdline(k)]
        left = survivors(kids, GONE_WITHIN)
        for p in left:
            p.kill()
        assert not left, "the engine program outlived the ctxgauge process that started it"
    finally:
        if proc.poll() is None:
            proc.kill()



@pytest.mark.parametrize("engine", [pytest.param("bm25", marks=pytest.mark.slow), "command"])
def test_sigkill_of_replay_dask_local2_leaves_no_worker_nor_engine(sample_repo: Path, tmp_path: Path, engine: str):
    """The workers of `--executor dask-local:2` (spawned by the nannies, which live in the main process) and the
    engine programs they start: all gone within 10 s of a SIGKILL of ctxgauge."""
    pytest.importorskip("distributed")
    marker = "ctxgauge-orphan-test-" + tmp_path.name
    if engine == "command":  # answers identity (asked by the main process), never answers build (in a worker)
        node = shutil.which("node")
        if node is None:
            pytest.skip("node is not on PATH")
        js = Path(__file__).resolve().parent / "engines" / "node_engine" / "engine.js"
        cmd = shlex.join([node, str(js), "--hang-on=build", f"--declared-identity={marker}"])
        engine = f"command(cmd={json.dumps(cmd)},timeout=120)"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxgauge", "replay", str(sample_repo), "--engine", engine, "--executor",
         "dask-local:2", "--commits", "0", "--out", str(tmp_path / "run")],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        def started(kids) -> bool:
            workers = {k.pid for k in kids if "spawn_main" in cmdline(k)}
            return len(workers) >= 2 and (engine == "bm25" or any(
                marker in cmdline(k) and k.ppid() in workers for k in kids if k.is_running()))

        kids = kill_when(proc, started)
        left = survivors(kids, GONE_WITHIN)
        for p in left:
            p.kill()
        assert not left, f"still running {GONE_WITHIN} s after ctxgauge was killed: {[cmdline(p) for p in left]}"
    finally:
        if proc.poll() is None:
            proc.kill()
