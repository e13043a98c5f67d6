"""Importers: the files a patch modifies, SWE-bench instances, TREC qrels with queries, external runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ctxgauge.errors import UserError
from ctxgauge.suites.cases import (
    is_swebench,
    load_qrels_cases,
    load_swebench,
    patch_files,
    read_queries,
    read_rankings,
)

PATCH = """diff --git a/src/a.py b/src/a.py
index 1111111..2222222 100644
--- a/src/a.py
+++ b/src/a.py
@@ -1,3 +1,3 @@
 x = 1
--- not a file header: a removed line reading "-- not a file header"
+++ nor this one
 y = 2
diff --git a/src/new.py b/src/new.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/src/new.py
@@ -0,0 +1 @@
+print("new")
diff --git a/src/old.py b/src/old.py
deleted file mode 100644
index 4444444..0000000
--- a/src/old.py
+++ /dev/null
@@ -1 +0,0 @@
-print("old")
diff --git a/src/from.py b/src/to.py
similarity index 100%
rename from src/from.py
rename to src/to.py
diff --git "a/docs/caf\\303\\251.md" "b/docs/caf\\303\\251.md"
index 5555555..6666666 100644
--- "a/docs/caf\\303\\251.md"
+++ "b/docs/caf\\303\\251.md"
@@ -1 +1 @@
-a
+b
"""


def test_patch_files_are_the_existing_files_it_changes():
    assert patch_files(PATCH) == ["src/a.py", "src/old.py", "src/from.py", "docs/café.md"]


def test_plain_unified_diffs_without_git_headers():
    plain = "--- a/x.py\t2024-01-01\n+++ b/x.py\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n" \
            "--- /dev/null\n+++ b/y.py\n@@ -0,0 +1 @@\n+c\n--- a/z.py\n+++ b/z.py\n@@ -1 +1 @@\n-d\n+e\n"
    assert patch_files(plain) == ["x.py", "z.py"]


def _instances(tmp_path, records, jsonl=True):
    path = tmp_path / ("swe.jsonl" if jsonl else "swe.json")
    path.write_text("\n".join(json.dumps(r) for r in records) if jsonl else json.dumps(records))
    return path


def test_swebench_instances_become_cases_on_a_local_clone(tmp_path):
    (tmp_path / "repos" / "acme__lib").mkdir(parents=True)
    recs = [
        {"instance_id": "acme__lib-1", "repo": "acme/lib", "base_commit": "abc123", "problem_statement": " Crash ",
         "patch": PATCH},
        {"instance_id": "acme__lib-2", "repo": "acme/lib", "base_commit": "def456", "problem_statement": "Add x",
         "patch": "diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+x\n"},
    ]
    for jsonl in (True, False):
        path = _instances(tmp_path, recs, jsonl)
        assert is_swebench(path)
        cases, dropped = load_swebench(path, tmp_path / "repos")
        (case,) = cases.cases
        assert case.name == "acme__lib-1" and case.query == "Crash"
        assert case.corpus == f"{(tmp_path / 'repos' / 'acme__lib').resolve()}@abc123"
        assert case.expected == ("src/a.py", "src/old.py", "src/from.py", "docs/café.md")
        assert dropped == {"no-modified-file": 1}
        # Gold lines from the gold patch: the removed line 2 (between context lines 1 and 3), every line of
        # the deleted file, line 1 of café.md; the pure rename counts at file level only (no entry).
        assert case.gold_lines() == {"docs/café.md": [(1, 1)], "src/a.py": [(2, 2)], "src/old.py": [(1, 1)]}


def test_swebench_errors_say_what_to_do(tmp_path):
    rec = {"instance_id": "i", "repo": "acme/lib", "base_commit": "abc", "problem_statement": "p", "patch": PATCH}
    with pytest.raises(UserError, match=r"no clone of acme/lib under .*clone it to .*acme__lib"):
        load_swebench(_instances(tmp_path, [rec]), tmp_path)
    with pytest.raises(UserError, match="instance 1: needs patch"):
        load_swebench(_instances(tmp_path, [{k: v for k, v in rec.items() if k != "patch"}]), tmp_path)


@pytest.mark.parametrize("repo", ["../x", "acme/..", "acme//x", "/x", "x", "acme/lib/x", "acme/.git", "acme/l\\b",
                                  "acme/l\nb", ".git/x", "acme/"])
def test_swebench_repo_names_never_leave_the_repos_dir(tmp_path, repo):
    # A clone `x` beside (not under) --repos, and --repos itself: no repo value may select either.
    (tmp_path / "x").mkdir()
    (tmp_path / "repos" / "acme__lib").mkdir(parents=True)
    rec = {"instance_id": "i", "repo": repo, "base_commit": "abc", "problem_statement": "p", "patch": PATCH}
    with pytest.raises(UserError, match=r"instance 1: repo .* refused \(") as err:
        load_swebench(_instances(tmp_path, [rec]), tmp_path / "repos")
    assert "\n" not in str(err.value)


def test_qrels_with_queries(tmp_path):
    (tmp_path / "q.tsv").write_text("q1\tfix fees\nq2\tadd search\nq3\tnothing relevant\n")
    (tmp_path / "qrels").write_text("q1 0 src/fees.py 1\nq1 0 docs/x.md 0\nq2 0 src/search.py 2\nq3 0 a.py 0\n")
    cases, dropped = load_qrels_cases(tmp_path / "qrels", tmp_path / "q.tsv", "corpus-dir")
    assert [(c.name, c.query, c.expected, c.corpus) for c in cases.cases] == [
        ("q1", "fix fees", ("src/fees.py",), "corpus-dir"), ("q2", "add search", ("src/search.py",), "corpus-dir")]
    assert dropped == {"no-relevant-file": 1}
    (tmp_path / "q.jsonl").write_text('{"qid": "q1", "text": "fix fees"}\n')
    assert read_queries(tmp_path / "q.jsonl") == {"q1": "fix fees"}
    with pytest.raises(UserError, match="no text for query 'q2'"):
        load_qrels_cases(tmp_path / "qrels", tmp_path / "q.jsonl", "corpus-dir")


def test_external_rankings_from_trec_or_json_lines(tmp_path):
    (tmp_path / "run.trec").write_text("q1 Q0 b.py 1 2.0 x\nq1 Q0 a.py 2 3.0 x\n")
    assert read_rankings(tmp_path / "run.trec") == {"q1": ["a.py", "b.py"]}  # by score, as trec_eval reads it
    (tmp_path / "run.jsonl").write_text('{"qid": "q1", "ranking": ["b.py", {"path": "a.py", "score": 1}]}\n')
    assert read_rankings(tmp_path / "run.jsonl") == {"q1": ["b.py", "a.py"]}  # in the order given
    (tmp_path / "bad.jsonl").write_text('{"qid": "q1", "ranking": ["a.py", "a.py"]}\n')
    with pytest.raises(UserError, match="lists a path twice"):
        read_rankings(tmp_path / "bad.jsonl")


# -- hostile input (issue 36) -----------------------------------------------------------------------------------
def test_swebench_duplicate_instance_ids_are_refused(tmp_path):
    # F20: both ran and one was silently dropped from the counts; case files already refuse duplicate names
    (tmp_path / "repos" / "acme__lib").mkdir(parents=True)
    rec = {"instance_id": "acme__lib-1", "repo": "acme/lib", "base_commit": "abc", "problem_statement": "p",
           "patch": PATCH}
    with pytest.raises(UserError, match=r"instance 2: instance_id 'acme__lib-1' repeats instance 1"):
        load_swebench(_instances(tmp_path, [rec, {**rec, "base_commit": "def"}]), tmp_path / "repos")


def test_a_hunk_header_with_a_huge_integer_is_one_line(tmp_path):
    # F6: int() refuses more than 4,300 digits with a ValueError that became exit 70
    huge = "9" * 5000
    patch = f"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,{huge} +1 @@\n-a\n+b\n"
    with pytest.raises(UserError, match=r"hunk header .*5000 digits \(at most 4300"):
        patch_files(patch)
    (tmp_path / "repos" / "acme__lib").mkdir(parents=True)
    rec = {"instance_id": "i", "repo": "acme/lib", "base_commit": "abc", "problem_statement": "p", "patch": patch}
    path = _instances(tmp_path, [rec])
    proc = subprocess.run([sys.executable, "-m", "ctxgauge", "cases", str(path), "-e", "grep", "--repos",
                           str(tmp_path / "repos"), "--out", str(tmp_path / "run")], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "5000 digits" in proc.stderr
