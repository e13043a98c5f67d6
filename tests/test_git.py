"""git.py: plumbing answers, and the git invocation policy against hostile repositories built with git itself.

Every hostile repository plants a script that would write a marker file if git ran it; each test asserts the
marker was never written, and that reading the repository still works or fails with one clear user error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.corpus import Corpus, open_corpus
from ctxgauge.errors import UserError
from ctxgauge.git import FileChange, Repo, blob_id, commit_pre_image_lines, pre_image_lines

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import GIT_ENV, RepoBuilder, git  # noqa: E402


def test_blob_id_matches_git_hash_object(tmp_path):
    data = b"hello\nworld\n\x00binary"
    (tmp_path / "f").write_bytes(data)
    expected = subprocess.run(["git", "hash-object", str(tmp_path / "f")], capture_output=True, text=True).stdout.strip()
    assert blob_id(data) == expected


def test_log_reports_renames_modifications_and_order(repo_builder):
    b = repo_builder()
    b.commit("first", {"a.py": "x = 1\n" * 20, "b.py": "y = 2\n"})
    b.commit("second (#2)", {"b.py": "y = 3\n"}, renames={"a.py": "pkg/a.py"})
    head = b.commit("third", {"b.py": None, "c.py": "z\n"})
    with Repo(b.path) as repo:
        log = repo.log(head)
        assert [c.subject for c in log] == ["third", "second (#2)", "first"]
        assert [c.sha for c in log] == repo.rev_list(head)
        assert set(log[0].changes) == {FileChange("D", "b.py"), FileChange("A", "c.py")}
        assert set(log[1].changes) == {FileChange("M", "b.py"), FileChange("R", "pkg/a.py", "a.py")}
        assert log[2].parents == ()
        assert log[0].author_email == "ada@example.org"


def test_user_config_does_not_change_answers(repo_builder, monkeypatch, tmp_path):
    b = repo_builder()
    b.commit("one", {"ünïcode name.py": "a = 1\n" * 10})
    head = b.commit("two", {}, renames={"ünïcode name.py": "moved.py"})
    cfg = tmp_path / "gitconfig"
    cfg.write_text("[diff]\n\trenames = false\n[core]\n\tquotepath = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    with Repo(b.path) as repo:
        assert repo.log(head)[0].changes == (FileChange("R", "moved.py", "ünïcode name.py"),)


def test_cat_file_streams_more_than_a_pipe_buffer(repo_builder):
    # 400 blobs of 4 KiB: far more than the 64 KiB pipe buffer in both directions.
    b = repo_builder()
    files = {f"f{i:03}.txt": (f"{i}\n" * 2000)[:4096] for i in range(400)}
    head = b.commit("many", files)
    with Repo(b.path) as repo:
        entries = repo.tree(head)
        got = dict(repo.read_blobs(e.oid for e in entries))
        assert len(got) == 400
        assert all(blob_id(data) == oid for oid, data in got.items())
        # A caller that stops early leaves the reader consistent for the next request.
        for _ in repo.read_blobs([e.oid for e in entries]):
            break
        assert repo.read_blob(entries[-1].oid) == files[entries[-1].path].encode()


def test_a_small_request_of_large_blobs_is_written_without_a_thread(repo_builder, monkeypatch):
    # SMALL_REQUEST ids are written by the caller itself; their replies (256 KiB each) still stream through
    # the reply pipe, and the one request of more ids takes the writer thread.
    import threading

    from ctxgauge.git import _blobs

    b = repo_builder()
    files = {f"f{i:02}.txt": f"{i:02}\n" * (1 << 16) for i in range(_blobs.SMALL_REQUEST + 1)}
    head = b.commit("large", files)
    started = []
    real = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name) or real(self))
    with Repo(b.path) as repo:
        entries = repo.tree(head)
        small = [e.oid for e in entries[:_blobs.SMALL_REQUEST]]
        assert [blob_id(d) for _, d in repo.read_blobs(small)] == small and not started
        for _ in repo.read_blobs(small):
            break
        assert repo.read_blob(entries[0].oid) == files[entries[0].path].encode() and not started
        assert len(dict(repo.read_blobs(e.oid for e in entries))) == len(entries) and len(started) == 1


def test_missing_object_is_none(repo_builder):
    b = repo_builder()
    b.commit("one", {"a": "a"})
    with Repo(b.path) as repo:
        assert repo.read_blob("0" * 40) is None


def test_bad_revision_and_non_repo_are_user_errors(repo_builder, tmp_path):
    b = repo_builder()
    b.commit("one", {"a": "a"})
    with Repo(b.path) as repo, pytest.raises(UserError, match="no commit named"):
        repo.resolve("nope")
    (tmp_path / "plain").mkdir()
    with pytest.raises(UserError, match="not a git repository"):
        Repo(tmp_path / "plain")


# -- the invocation policy against hostile repositories --------------------------------------------------
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """An executable that writes `MARKER` (beside it) when anything runs it, and the marker's path."""
    marker = tmp_path / "MARKER"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\nexit 1\n")
    script.chmod(0o755)
    return script, marker


def read_everything(path: Path, rev: str = "HEAD") -> None:
    """Every read the suites do: resolve, tree, log with diffs, diff-tree, blobs, a corpus at rev and rev~1."""
    with Repo(path) as repo:
        head = repo.resolve(rev)
        repo.tree(head)
        commits = repo.log(head)
        if len(commits) > 1:
            repo.changes(commits[1].sha, commits[0].sha)
        corpus = Corpus.from_git(repo, head)
        list(corpus.iter_bytes())
        Corpus.from_git(repo, f"{head}~1")


def history(tmp_path: Path, name: str = "repo") -> RepoBuilder:
    b = RepoBuilder(tmp_path / name)
    b.commit("first", {"a.py": "def one():\n    return 1\n" * 5, "b.txt": "notes\n"})
    b.commit("second", {"a.py": "def two():\n    return 2\n" * 5}, renames={"b.txt": "docs/b.txt"})
    b.commit("third", {"c.py": "x = 3\n", "a.py": "def three():\n    return 3\n" * 5})
    return b


def partial_clone(tmp_path: Path) -> Path:
    """A blobless clone (`--filter=blob:none`): blobs of older commits are absent, promised by `origin`."""
    src = history(tmp_path, "origin")
    git(src.path, "config", "uploadpack.allowFilter", "true")
    dest = tmp_path / "partial"
    subprocess.run(["git", "clone", "-q", "--no-local", "--filter=blob:none", f"file://{src.path}", str(dest)],
                   check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    return dest


@pytest.mark.parametrize("key,url", [("core.sshCommand", "ssh://example.invalid/repo"),
                                     ("remote.origin.uploadpack", None)])
def test_partial_clone_never_fetches(tmp_path, key, url):
    script, marker = planted(tmp_path)
    repo = partial_clone(tmp_path)
    git(repo, "config", key, str(script))
    if url:
        git(repo, "config", "remote.origin.url", url)
    with pytest.raises(UserError, match=r"object [0-9a-f]{40} is missing from the repository .*never fetches"):
        read_everything(repo, "HEAD~1")
    assert not marker.exists(), "git ran the repository's configured program to fetch a missing blob"


def test_partial_clone_query_from_the_shell_names_the_missing_object(tmp_path):
    script, marker = planted(tmp_path)
    repo = partial_clone(tmp_path)
    git(repo, "config", "remote.origin.uploadpack", str(script))
    proc = subprocess.run([sys.executable, "-m", "ctxgauge", "query", str(repo), "three", "-e", "grep",
                           "--rev", "HEAD~2"], capture_output=True, text=True, env={**os.environ})
    assert proc.returncode == 2, proc.stderr
    assert "is missing from the repository" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not marker.exists()


def _attributes(b: RepoBuilder) -> None:
    b.commit("attributes", {".gitattributes": "* filter=evil diff=evil merge=evil\n"})
    b.commit("fourth", {"a.py": "def four():\n    return 4\n" * 5})


# Each key of a repository's own configuration that names a program git could run.
PROGRAM_KEYS = [
    ("core.sshCommand", "{script}"),
    ("remote.origin.uploadpack", "{script}"),
    ("core.fsmonitor", "{script}"),
    ("core.hooksPath", "{hooks}"),
    ("filter.evil.clean", "{script}"),
    ("filter.evil.smudge", "{script}"),
    ("filter.evil.process", "{script}"),
    ("diff.evil.textconv", "{script}"),
    ("diff.evil.command", "{script}"),
    ("diff.external", "{script}"),
    ("gpg.program", "{script}"),
    ("core.pager", "{script}"),
    ("pager.log", "{script}"),
    ("alias.log", "!{script}"),
    ("alias.cat-file", "!{script}"),
    ("core.askPass", "{script}"),
    ("credential.helper", "!{script}"),
]


@pytest.mark.parametrize("key,value", PROGRAM_KEYS, ids=[k for k, _ in PROGRAM_KEYS])
def test_no_configured_program_runs(tmp_path, key, value):
    script, marker = planted(tmp_path)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc", "post-rewrite",
                 "fsmonitor-watchman"):
        (hooks / hook).symlink_to(script)
    b = history(tmp_path)
    _attributes(b)
    git(b.path, "config", key, value.format(script=script, hooks=hooks))
    git(b.path, "config", "log.showSignature", "true")
    git(b.path, "config", "core.untrackedCache", "true")
    read_everything(b.path)
    # and from the shell, as a user runs it
    proc = subprocess.run([sys.executable, "-m", "ctxgauge", "query", str(b.path), "three", "-e", "grep"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"git ran the program named by {key}"


def test_shell_environment_cannot_redirect_git(tmp_path, monkeypatch):
    script, marker = planted(tmp_path)
    b = history(tmp_path)
    other = history(tmp_path, "other")
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(script))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "diff.external")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(script))
    read_everything(b.path)
    assert not marker.exists()


def test_subject_and_path_holding_the_record_separator(tmp_path):
    b = RepoBuilder(tmp_path / "repo")
    b.commit("start", {"a.py": "a\n"})
    head = b.commit("fix \x1e0123456789012345678901234567890123456789 thing", {"odd\x1ename.py": "b\n", "a.py": "c\n"})
    with Repo(b.path) as repo:
        log = repo.log(head)
    assert [c.subject for c in log] == ["fix \x1e0123456789012345678901234567890123456789 thing", "start"]
    assert set(log[0].changes) == {FileChange("A", "odd\x1ename.py"), FileChange("M", "a.py")}


@pytest.mark.parametrize("author", [b"A <a@b> notanumber +0000", b"A <a@b>", b"A <a@b> -5 +0000"])
def test_a_commit_with_a_malformed_author_date_reads_as_the_epoch(tmp_path, author):
    # Found by `make fuzz` (corpus-git): git prints an empty %at for such a commit, and int('') ended the run.
    b = RepoBuilder(tmp_path / "repo")
    head = b.commit("start", {"a.py": "a\n"})
    tree = git(b.path, "rev-parse", f"{head}^{{tree}}").strip()
    body = b"tree %s\nparent %s\nauthor %s\ncommitter %s\n\nfix: odd date\n" % (
        tree.encode(), head.encode(), author, author)
    odd = subprocess.run(["git", "hash-object", "-t", "commit", "--literally", "-w", "--stdin"], cwd=b.path,
                         input=body, capture_output=True, check=True).stdout.decode().strip()
    with Repo(b.path) as repo:
        log = repo.log(odd)
    assert [(c.subject, c.timestamp) for c in log][0] == ("fix: odd date", 0)
    assert log[1].sha == head and log[1].timestamp > 0


# -- reads outside the repository -----------------------------------------------------------------------------
def test_git_file_pointing_at_another_repository_is_refused(tmp_path):
    other = history(tmp_path, "other")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / ".git").write_text(f"gitdir: {other.path / '.git'}\n")
    with pytest.raises(UserError, match="neither a worktree nor a submodule"):
        Repo(victim)
    with pytest.raises(UserError, match="neither a worktree nor a submodule"):
        open_corpus(victim)


def test_linked_worktree_is_read(tmp_path):
    b = history(tmp_path)
    wt = tmp_path / "wt"
    git(b.path, "worktree", "add", "-q", str(wt), "HEAD~1")
    assert (wt / ".git").is_file()
    corpus = open_corpus(wt)
    assert "docs/b.txt" in corpus and "c.py" not in corpus


def test_submodule_checkout_is_read(tmp_path):
    sub = history(tmp_path, "sub")
    sup = RepoBuilder(tmp_path / "super")
    sup.commit("start", {"x.py": "x\n"})
    git(sup.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "vendor/sub")
    assert (sup.path / "vendor/sub/.git").is_file()
    assert "c.py" in open_corpus(sup.path / "vendor/sub")


@pytest.mark.parametrize("section", ["include", 'includeIf "gitdir:/"'])
def test_config_include_is_refused(tmp_path, section):
    b = history(tmp_path)
    elsewhere = tmp_path / "elsewhere.cfg"
    elsewhere.write_text("[core]\n\tbare = false\n")
    with open(b.path / ".git" / "config", "a") as fh:
        fh.write(f"[{section}]\n\tpath = {elsewhere}\n")
    with pytest.raises(UserError, match=r"includes another file .*reads nothing outside"):
        Repo(b.path)


def test_alternates_are_refused(tmp_path):
    b = history(tmp_path)
    shared = tmp_path / "shared"
    subprocess.run(["git", "clone", "-q", "--shared", str(b.path), str(shared)], check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV})
    with pytest.raises(UserError, match=r"borrows objects from another store .*alternates"):
        open_corpus(shared)
    proc = subprocess.run([sys.executable, "-m", "ctxgauge", "query", str(shared), "three", "-e", "grep"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "borrows objects" in proc.stderr and "Traceback" not in proc.stderr


def test_commit_times_resolve_revisions_in_one_call(repo_builder):
    r = repo_builder("times")
    c1 = r.commit("one", {"a.py": "x = 1\n"})
    c2 = r.commit("two", {"a.py": "x = 2\n"})
    with Repo(r.path) as repo:
        tree = repo.run(["rev-parse", f"{c2}^{{tree}}"]).strip()
        got = repo.commit_times([c1, c2[:10], "HEAD~1", "nosuch", tree, "--all", "a b"])
    assert got[c1] == (c1, r.date - 3600) and got[c2[:10]] == (c2, r.date) and got["HEAD~1"] == (c1, r.date - 3600)
    assert got["nosuch"] is None and got[tree] is None and got["--all"] is None and got["a b"] is None


def test_prefetched_tree_changes_equal_one_by_one_and_take_two_git_calls_a_batch(repo_builder, monkeypatch):
    import ctxgauge.git._repo as repo_module

    r = repo_builder("walk")
    revs = [r.commit("one", {"a.py": "x = 1\n", "d/b.py": "y = 1\n", "c.md": "# c\n"})]
    revs.append(r.commit("two", {"a.py": "x = 2\n", "d/new.py": "z = 1\n"}))
    revs.append(r.commit("empty", {}))
    revs.append(r.commit("three", {"d/b.py": None, "c.md": "# c again\n", "e f\u00e9.txt": "spaced\n"}))
    revs.append(r.commit("four", {"a.py": None, "a.py/inner.py": "now a folder\n"}))
    pairs = list(zip(revs, revs[1:])) + [(revs[4], revs[0]), (revs[2], revs[2])]
    with Repo(r.path) as repo:
        alone = [repo.tree_changes(a, b) for a, b in pairs]
    calls = []
    real = repo_module.run_git
    monkeypatch.setattr(repo_module, "run_git", lambda cwd, args, **kw: calls.append(args[0]) or real(cwd, args, **kw))
    monkeypatch.setattr(repo_module, "CHANGES_BATCH", 4)
    with Repo(r.path) as repo:
        calls.clear()
        repo.prefetch_changes(pairs)
        assert [repo.tree_changes(a, b) for a, b in pairs] == alone
        assert calls == ["diff-tree", "cat-file", "diff-tree", "cat-file"]  # 6 pairs, batches of 4
        calls.clear()
        assert repo.tree_changes(*pairs[0]) == alone[0] and calls == ["diff-tree", "cat-file"]  # asked again


def test_a_prefetch_batch_that_fails_is_read_pair_by_pair(repo_builder):
    r = repo_builder("walk")
    c1 = r.commit("one", {"a.py": "x = 1\n"})
    c2 = r.commit("two", {"a.py": "x = 2\n"})
    with Repo(r.path) as repo:
        repo.prefetch_changes([(c1, c2), (c2, "0" * 40)])
        gone, entries = repo.tree_changes(c1, c2)
        assert gone == [] and [e.path for e in entries] == ["a.py"]
        with pytest.raises(UserError):
            repo.tree_changes(c2, "0" * 40)


# -- gold lines: the pre-image lines of a commit's hunks from git's own diff -U0, and of a patch text ----------

GOLD_TEN = "".join(f"line {i}\n" for i in range(1, 11))


def _gold_with(lines: dict[int, str | None], base: str = GOLD_TEN, before: dict[int, str] | None = None) -> str:
    """GOLD_TEN with line i replaced (or, for None, removed), and text inserted before line i."""
    out = []
    for i, line in enumerate(base.splitlines(keepends=True), start=1):
        out.append((before or {}).get(i, ""))
        out.append(line if i not in lines else (lines[i] or ""))
    return "".join(out)


def test_a_commits_gold_lines_follow_the_rule(repo_builder) -> None:
    b = repo_builder()
    parent = b.commit("base", {"mod.py": GOLD_TEN, "ins.py": GOLD_TEN, "top.py": GOLD_TEN, "gone.py": GOLD_TEN.upper(), "bin.dat": b"\0\1\2",
                               "old_name.py": GOLD_TEN, "moved_edited.py": GOLD_TEN, "empty.txt": ""})
    commit = b.commit("change", {
        "mod.py": _gold_with({3: "three\n", 7: None, 8: "eight\n"}),   # replace 3, remove 7, replace 8: 3, 7-8
        "ins.py": _gold_with({}, before={5: "new a\nnew b\n"}),        # inserted after line 4: 4
        "top.py": _gold_with({}, before={1: "header\n"}),              # inserted at the top: 1
        "gone.py": None,                                          # deleted: every line
        "bin.dat": None,                                          # deleted binary: none
        "empty.txt": None,                                        # deleted empty file: none
        "added.py": "brand new\n",                                # added: no entry
        "moved_edited.py": _gold_with({10: "ten\n"}),
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
    parent = b.commit("base", {"a.py": GOLD_TEN})
    commit = b.commit("edit", {"a.py": _gold_with({2: None, 9: "nine\n"}, before={6: "x\n"})})
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


GOLD_PATCH = """\
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
    assert pre_image_lines(GOLD_PATCH) == {
        "pkg/café.py": [(1, 1)],             # inserted at the top
        "pkg/core.py": [(12, 12), (15, 15), (40, 40)],
    }
