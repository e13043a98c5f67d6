"""qa's progress lines without a terminal name what they count (issue 39, item 9: `qa: 12/30` said nothing
of what 30 was)."""

from __future__ import annotations

import os
import re
import subprocess
import sys


def test_qa_progress_counts_answers(mini_battery, tmp_path):
    env = {**os.environ, "CTXGAUGE_PROGRESS_INTERVAL": "0.01"}
    r = subprocess.run([sys.executable, "-m", "ctxgauge", "qa", "run", str(mini_battery.path), "--arm",
                        "context:bm25@3", "--out", str(tmp_path / "run")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env)
    assert r.returncode in (0, 1, 7), r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("qa: ")]
    assert lines and re.fullmatch(r"qa: \d+/10 answers, \d+s in all( \(.*\))?", lines[-1]), r.stderr
    assert not any(line.startswith("qa: ") and "/" in line for line in r.stdout.splitlines())
