"""What a new user meets when a command is mistyped (issue 39, item 9): every refusal one line, exit 2, and
the line says how to mend it."""

from __future__ import annotations

import subprocess
import sys

import pytest


def ctxgauge(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def repo(repo_builder):
    b = repo_builder("small")
    b.commit("init", {"src/loans.py": "def overdue_fee(): pass\n", "src/members.py": "class Member: pass\n"})
    b.commit("Fix overdue fee", {"src/loans.py": "def overdue_fee(): return 1\n"})
    return b.path


@pytest.mark.parametrize("args, message", [
    (["query", "{plain}", "x", "--engine", "bm52"], "unknown engine 'bm52' (did you mean 'bm25'? known: grep, bm25"),
    (["query", "{plain}", "x", "--engine", "fuson"], "unknown engine 'fuson' (did you mean 'fusion'?"),
    (["query", "{plain}", "x", "--engine", "BM25"], "unknown engine 'BM25' (did you mean 'bm25'?"),
    (["determinism", "{plain}", "--engine", "BM25", "--out", "{tmp}/d"], "unknown engine 'BM25' (did you mean 'bm25'?"),
    (["replay", "{repo}", "--engine", "bm52"], "did you mean 'bm25'?"),
    (["query", "{plain}", "x", "--engine", "bm25,fusion"],
     "bad engine spec 'bm25,fusion': one engine per option; repeat --engine for more (--engine bm25 --engine fusion)"),
    (["replay", "{repo}", "--engine", "grep", "--commits", "-3"], "--commits -3: give at least 1, or 0 for all"),
    (["replay", "{repo}", "--engine", "grep", "--out", "{tmp}/nowhere", "--resume"],
     "{tmp}/nowhere: no such folder, so no run to resume there"),
    (["determinism", "{plain}", "--engine", "grep", "--out", "{tmp}/nowhere", "--resume"], "no such folder"),
    # Click answered `No such option: --model (Possible options: --help)` (walkthrough at 80 columns).
    (["demo", "--model", "x", "--out", "{tmp}/nowhere"], "the demo runs without a model and takes no --model; "
     "to have a model answer the bundled battery, run: ctxgauge qa run shelfd --arm none --arm context:bm25@5 --model MODEL"),
    (["cases", "{tmp}/cases.yaml", "--engine", "grep", "--out", "{tmp}/nowhere", "--resume"], "no such folder"),
])
def test_a_mistyped_command_says_how_to_mend_it(tmp_path, repo, args, message):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.py").write_text("x = 1\n")
    (tmp_path / "cases.yaml").write_text("corpus: plain\ncases:\n  - {name: a, query: x, expected: [a.py]}\n")
    fill = {"{plain}": str(tmp_path / "plain"), "{repo}": str(repo), "{tmp}": str(tmp_path)}
    for key, value in fill.items():
        args = [a.replace(key, value) for a in args]
        message = message.replace(key, value)
    r = ctxgauge(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "nowhere").exists()  # --resume on a missing folder started no fresh run


def test_resume_with_other_options_names_them(tmp_path, repo):
    run = tmp_path / "run"
    # One commit's files on a deleted path: a unit fails, so the run is resumable.
    first = ctxgauge("replay", str(repo), "--engine", "grep", "-k", "5", "--out", str(run))
    assert first.returncode == 0, first.stderr
    r = ctxgauge("replay", str(repo), "--engine", "bm25", "-k", "3", "--out", str(run), "--resume")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "the recorded run has different options: " in r.stderr
    assert 'engine (recorded "grep", now "bm25")' in r.stderr and "ks (recorded [5], now [3])" in r.stderr


def test_report_takes_a_run_json_as_its_run(tmp_path, factory):
    runs = tmp_path / "runs"
    factory.replay_run(runs, "replay-a", [1, 2], [2, 2])
    by_dir = ctxgauge("report", str(runs / "replay-a"), "--json")
    by_file = ctxgauge("report", str(runs / "replay-a" / "run.json"), "--json")
    assert by_file.returncode == 0, by_file.stderr
    assert by_file.stdout == by_dir.stdout
