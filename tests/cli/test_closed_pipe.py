"""A reader that leaves early (`ctxgauge report RUN | head`) is not a bug: no "internal error" line and no crash
log (a sub-command's `--help` into a closed pipe was reported as a bug in ctxgauge, exit 70). The command ends
quietly with 141 (128 + SIGPIPE, as a shell reports `yes | head`), for help text and a command's output alike:
not Click's 1, which the exit-code table gives to a failed gate."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

V2 = Path(__file__).resolve().parents[1] / "records" / "fixtures" / "v2"


@pytest.mark.parametrize("args", [["--help"], ["replay", "--help"], ["report", str(V2 / "replay-vs")]])
def test_a_closed_stdout_ends_quietly(tmp_path, args):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before a byte is written: every write fails with EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "ctxgauge", *args], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120, env={**os.environ, "TMPDIR": str(tmp_path)})
    finally:
        os.close(write)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""
    assert not list(tmp_path.glob("ctxgauge-crash-*"))
