"""The misses view: which requests an engine missed at k, where each expected file landed, the top k instead;
in the terminal on request (`--misses`), folded in the HTML page, and as `--json` rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.report import build_report, load_runs, misses, render_html, render_markdown
from ctxgauge.suites.cases import CasesConfig, load_cases, run_cases

FILES = {
    "a.py": "alpha = 1\n",
    "b.py": "beta = gamma = 2\n",
    "c.py": "gamma = 3\n",
    "d.py": "delta = 4\n",
}
CASES = """
corpus: lib
cases:
  - name: found
    query: alpha
    expected: [a.py]
  - name: second
    query: beta gamma
    expected: [c.py]
  - name: absent
    query: delta
    expected: [a.py]
"""


@pytest.fixture
def run_dir(tmp_path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / "lib" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "lib" / rel).write_text(text)
    (tmp_path / "cases.yaml").write_text(CASES)
    run_cases(load_cases(tmp_path / "cases.yaml"), CasesConfig(engine="grep", ks=(1,), out=tmp_path / "run"))
    return tmp_path / "run"


def test_each_miss_names_its_expected_files_and_where_they_landed(run_dir):
    (run,) = load_runs([run_dir])
    got = {m.unit: m for m in misses(run, 1, ["grep"])}
    assert set(got) == {"second", "absent"}  # "found" ranked a.py first: a hit, not listed
    second = got["second"]
    assert (second.request, second.engine, second.top) == ("beta gamma", "grep", ("b.py",))
    assert [(f.path, f.rank, f.where(second.depth)) for f in second.expected] == [("c.py", 2, "rank 2")]
    absent = got["absent"]
    assert absent.top == ("d.py",) and absent.depth == 1
    assert [f.where(absent.depth) for f in absent.expected] == ["not in the top 1"]


def test_terminal_and_markdown_show_misses_only_when_asked_html_always_folded(run_dir):
    report = build_report(load_runs([run_dir]))
    assert "Misses at 1" not in render_markdown(report)
    md = render_markdown(report, details=True)
    assert "Misses at 1" in md and "c.py (rank 2)" in md and "a.py (not in the top 1)" in md
    html = render_html(report)
    assert "<details><summary>Misses at 1" in html and "c.py (rank 2)" in html
    # The hit map's hover names the expected files too.
    assert "second beta gamma | expected: c.py" in html


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True)


def test_runs_show_and_report_misses_from_the_terminal(run_dir):
    shown = _cli("runs", "show", str(run_dir), "--misses")
    assert shown.returncode == 0, shown.stderr
    assert "Misses at 1" in shown.stdout and "rank 2" in shown.stdout and "not in the top 1" in shown.stdout
    plain = _cli("report", str(run_dir))
    assert plain.returncode == 0 and "Misses at 1" not in plain.stdout
    asked = _cli("report", str(run_dir), "--misses")
    assert "Misses at 1" in asked.stdout
    rows = json.loads(_cli("runs", "show", str(run_dir), "--json", "--misses").stdout)["misses"]
    assert [(r["unit"], [(e["path"], e["rank"]) for e in r["expected"]], r["top"]) for r in rows] == \
        [("second", [("c.py", 2)], ["b.py"]), ("absent", [("a.py", None)], ["d.py"])]


def test_cases_misses_flag(run_dir, tmp_path):
    r = _cli("cases", str(tmp_path / "cases.yaml"), "--engine", "grep", "-k", "1", "--out", str(tmp_path / "again"),
             "--misses")
    assert r.returncode == 0, r.stderr
    assert "Misses at 1" in r.stdout and "c.py (rank 2)" in r.stdout


def test_replay_misses_flag(repo_builder, tmp_path):
    repo = repo_builder("repo")
    repo.commit("Start", {"fees.py": "def fee(): pass\n", "late.py": "late = 1\n"})
    repo.commit("Fix late fee rounding", {"late.py": "late = 2\n"})  # grep ranks fees.py and late.py on "fee"/"late"
    repo.commit("Rename the catalogue", {"fees.py": "def fee(): return 1\n"})  # nothing names fees.py: a miss
    r = _cli("replay", str(repo.path), "--engine", "grep", "-k", "1", "--commits", "0", "--out",
             str(tmp_path / "run"), "--misses", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["misses"]
    assert "Rename the catalogue" in [row["request"] for row in rows]
    row = next(row for row in rows if row["request"] == "Rename the catalogue")
    assert [e["path"] for e in row["expected"]] == ["fees.py"]
