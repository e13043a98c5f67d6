"""One SOURCE rule (issue 39 item 2): a folder inside a work tree is that repository's subtree at --rev, for
query, determinism, check and replay; uncommitted changes are counted (without git status) and not measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ctxgauge.corpus import open_corpus, source_line
from ctxgauge.suites.replay import ReplayConfig, replay


def ctxgauge(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def proj(repo_builder):
    b = repo_builder("proj")
    b.commit("init", {"src/loans.py": "def overdue_fee(): pass\n", "src/members.py": "class Member: pass\n",
                      "docs/guide.md": "overdue fees are charged daily\n", "README.md": "proj\n"})
    b.commit("Fix overdue fee", {"src/loans.py": "def overdue_fee(): return 1\n"})
    b.commit("Explain overdue fees in the guide", {"docs/guide.md": "overdue fees are charged each day\n"})
    b.commit("Add member email", {"src/members.py": "class Member:\n    email = ''\n"})
    return b.path


def test_a_folder_inside_a_work_tree_is_the_committed_subtree(proj):
    (proj / "src" / "loans.py").write_text("def overdue_fee(): return 2  # edited, not committed\n")
    (proj / "src" / "members.py").unlink()
    (proj / "docs" / "guide.md").write_text("changed outside the subtree\n")
    (proj / "src" / "untracked.py").write_text("x = 1\n")
    corpus = open_corpus(proj / "src")
    assert corpus.kind == "git" and corpus.paths == ["src/loans.py", "src/members.py"]
    assert corpus.read("src/loans.py") == b"def overdue_fee(): return 1\n"  # the committed bytes
    assert corpus.name == "proj" and corpus.subtree == "src" and corpus.uncommitted == 2
    assert corpus.summary()["subtree"] == "src" and corpus.summary()["uncommitted"] == 2
    assert corpus.source_line() == (f"SOURCE proj@{corpus.rev[:10]}, subtree src/ (committed tree; 2 uncommitted "
                                    "changes not measured)")
    whole = open_corpus(proj)
    assert "subtree" not in whole.summary() and whole.uncommitted == 3
    assert source_line({"name": "x", "kind": "directory"}) == "SOURCE x (a plain folder, read as it is)"


def test_query_reads_the_subtree_and_says_so(proj):
    r = ctxgauge("query", str(proj / "src"), "overdue fees", "--engine", "bm25", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {h["path"] for h in out["hits"]} <= {"src/loans.py", "src/members.py"}
    assert out["corpus"]["subtree"] == "src" and out["source"].startswith("SOURCE proj@")
    text = ctxgauge("query", str(proj / "src"), "overdue fees", "--engine", "bm25")
    assert text.stdout.splitlines()[0].endswith("subtree src/ (committed tree)")


def test_replay_of_a_subtree_skips_commits_outside_it(proj, tmp_path):
    result = replay(ReplayConfig(repo=proj / "src", engine="grep", out=tmp_path / "run", commits=None))
    assert [c.request for c in result.commits] == ["Add member email", "Fix overdue fee"]
    from ctxgauge.records import read_run

    assert result.results.skipped["outside-subtree"] == 1 and result.results.skipped["root"] == 1
    rec = read_run(tmp_path / "run")
    assert rec.spec["subtree"] == "src" and rec.spec["repo"] == "proj"
    whole = replay(ReplayConfig(repo=proj, engine="grep", out=tmp_path / "whole", commits=None))
    assert len(whole.commits) == 3 and "subtree" not in read_run(tmp_path / "whole").spec


def test_determinism_and_check_read_the_subtree(proj, tmp_path):
    r = ctxgauge("determinism", str(proj / "src"), "--engine", "bm25", "--families", "rebuild",
                 "--out", str(tmp_path / "det"))
    assert r.returncode == 0, r.stderr
    from ctxgauge.records import read_run

    corpus = read_run(tmp_path / "det").context["corpus"]
    assert corpus["subtree"] == "src" and corpus["files"] == 2 and corpus["name"] == "proj"
    assert "SOURCE proj@" in r.stderr and "subtree src/" in r.stderr
    c = ctxgauge("check", "bm25", "--source", str(proj / "src"), "--json")
    assert "subtree src/ (committed tree)" in c.stderr, c.stderr
