"""Gold lines: the pre-image lines of a commit's hunks from git's own `diff -U0` (a real repository built
with git), and the same rule applied to a patch text with context lines (a SWE-bench gold patch)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ctxgauge.git import Repo, commit_pre_image_lines, pre_image_lines

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import git  # noqa: E402

TEN = "".join(f"line {i}\n" for i in range(1, 11))


def _with(lines: dict[int, str | None], base: str = TEN, before: dict[int, str] | None = None) -> str:
    """TEN with line i replaced (or, for None, removed), and text inserted before line i."""
    out = []
    for i, line in enumerate(base.splitlines(keepends=True), start=1):
        out.append((before or {}).get(i, ""))
        out.append(line if i not in lines else (lines[i] or ""))
    return "".join(out)


def test_a_commits_gold_lines_follow_the_rule(repo_builder) -> None:
    b = repo_builder()
    parent = b.commit("base", {"mod.py": TEN, "ins.py": TEN, "top.py": TEN, "gone.py": TEN.upper(), "bin.dat": b"\0\1\2",
                               "old_name.py": TEN, "moved_edited.py": TEN, "empty.txt": ""})
    commit = b.commit("change", {
        "mod.py": _with({3: "three\n", 7: None, 8: "eight\n"}),   # replace 3, remove 7, replace 8: 3, 7-8
        "ins.py": _with({}, before={5: "new a\nnew b\n"}),        # inserted after line 4: 4
        "top.py": _with({}, before={1: "header\n"}),              # inserted at the top: 1
        "gone.py": None,                                          # deleted: every line
        "bin.dat": None,                                          # deleted binary: none
        "empty.txt": None,                                        # deleted empty file: none
        "added.py": "brand new\n",                                # added: no entry
        "moved_edited.py": _with({10: "ten\n"}),
    }, renames={"old_name.py": "new_name.py", "moved_edited.py": "elsewhere.py"})
    with Repo(b.path) as repo:
        gold = commit_pre_image_lines(repo, parent, commit)
    assert gold == {
        "bin.dat": [],
        "empty.txt": [],
        "gone.py": [(1, 10)],
        "ins.py": [(4, 4)],
        "mod.py": [(3, 3), (7, 8)],
        "moved_edited.py": [(10, 10)],   # a renamed and edited file, keyed by its old path
        "old_name.py": [],               # a pure rename: file level only
        "top.py": [(1, 1)],
    }


def test_the_diff_is_gits_own(repo_builder) -> None:
    """The same answer as reading the hunk headers of `git diff -U0` by hand (no re-implemented diff)."""
    b = repo_builder()
    parent = b.commit("base", {"a.py": TEN})
    commit = b.commit("edit", {"a.py": _with({2: None, 9: "nine\n"}, before={6: "x\n"})})
    raw = subprocess.run(["git", "diff", "-U0", parent, commit], cwd=b.path, capture_output=True, text=True,
                         check=True).stdout
    headers = [line.split(" ")[1] for line in raw.splitlines() if line.startswith("@@")]
    assert headers == ["-2", "-5,0", "-9"]  # removed 2; inserted after 5; replaced 9
    with Repo(b.path) as repo:
        assert commit_pre_image_lines(repo, parent, commit) == {"a.py": [(2, 2), (5, 5), (9, 9)]}


def test_a_mode_change_is_file_level_only(repo_builder) -> None:
    b = repo_builder()
    parent = b.commit("base", {"run.sh": "echo hi\n"})
    (b.path / "run.sh").chmod(0o755)
    git(b.path, "add", "run.sh")
    git(b.path, "commit", "-q", "-m", "exec")
    commit = git(b.path, "rev-parse", "HEAD").strip()
    with Repo(b.path) as repo:
        assert commit_pre_image_lines(repo, parent, commit) == {"run.sh": []}


PATCH = """\
diff --git a/pkg/core.py b/pkg/core.py
index 1111111..2222222 100644
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -10,6 +10,7 @@ def f():
     a = 1
     b = 2
-    c = 3
+    c = 4
+    d = 5
     e = 6
     g = 7
-- h = 8
+h = 8
@@ -40,3 +41,4 @@ def g():
     x = 1
+    y = 2
     z = 3
 
diff --git a/pkg/new.py b/pkg/new.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1 @@
+print("new")
diff --git "a/pkg/caf\\303\\251.py" "b/pkg/caf\\303\\251.py"
--- "a/pkg/caf\\303\\251.py"
+++ "b/pkg/caf\\303\\251.py"
@@ -1,2 +1,3 @@
+# header
 one
 two
"""


def test_a_patch_with_context_lines() -> None:
    """Context lines count but are never gold; a removed line reading `-- h = 8` is a removal, not a header."""
    assert pre_image_lines(PATCH) == {
        "pkg/café.py": [(1, 1)],             # inserted at the top
        "pkg/core.py": [(12, 12), (15, 15), (40, 40)],
    }
