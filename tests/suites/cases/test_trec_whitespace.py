"""ctxgauge reads back its own TREC files whatever whitespace a name holds (F5).

A real git repository whose paths hold U+2028, U+0085 and U+00A0, and a case file whose case names hold a
no-break space and an ideographic space: `cases --trec` writes run.trec and qrels.txt, every line has its
columns, and `cases --qrels --run` scores them back to the same case names and figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from conftest import RepoBuilder  # noqa: E402

PATHS = ["src/line\u2028sep.py", "src/next\x85line.py", "src/no\u00a0break.py", "src/plain.py"]
NAMES = ["late\u00a0fee", "member\u3000join", "plain"]


def ctxgauge(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, timeout=120)


def test_cases_trec_files_round_trip_unicode_whitespace(tmp_path):
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init", {PATHS[0]: "def late_fee(): overdue\n", PATHS[1]: "class Member: join\n",
                      PATHS[2]: "def renew(): loan\n", PATHS[3]: "x = 1\n"})
    cases = {"corpus": str(b.path), "cases": [
        {"name": NAMES[0], "query": "late fee overdue", "expected": [PATHS[0], PATHS[2]]},
        {"name": NAMES[1], "query": "member join", "expected": [PATHS[1]]},
        {"name": NAMES[2], "query": "renew loan", "expected": [PATHS[2]]}]}
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    first = ctxgauge("cases", str(tmp_path / "cases.json"), "-e", "grep", "--trec", str(tmp_path / "trec"),
                     "--out", str(tmp_path / "r1"), "--json")
    assert first.returncode in (0, 1), first.stderr
    for name, width in (("run.trec", 6), ("qrels.txt", 4)):
        lines = (tmp_path / "trec" / name).read_text(encoding="utf-8").splitlines()
        assert lines and all(len(line.split()) == width for line in lines), lines

    again = ctxgauge("cases", "--qrels", str(tmp_path / "trec" / "qrels.txt"), "--run",
                     str(tmp_path / "trec" / "run.trec"), "--out", str(tmp_path / "r2"), "--json")
    assert again.returncode in (0, 1), again.stderr
    a, b2 = json.loads(first.stdout), json.loads(again.stdout)
    assert sorted(c["name"] for c in b2["cases"]) == sorted(NAMES)
    # A ranking scored from TREC files has no corpus to pack: its summary is the ranking figures of the
    # engine's run, which also scored contexts (issue 37).
    assert b2["summary"] == {k: a["summary"][k] for k in b2["summary"]}
    assert "line_coverage@5" in a["summary"] and "line_coverage@5" not in b2["summary"]
    ranked = [{c["name"]: [h["path"] for h in c["ranking"]] for c in r["cases"]} for r in (a, b2)]
    assert ranked[0] == ranked[1] and ranked[0][NAMES[0]][0] == PATHS[0], ranked
