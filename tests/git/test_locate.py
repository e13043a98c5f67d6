"""The one repository locator (issue 36, F2a-e, F3): redirected or broken repositories refused with one line,
FIFOs never waited on, linked worktrees and submodules still read, every git call pinned to what was found."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import ctxgauge as ctxgauge_pkg
from ctxgauge.corpus import open_corpus
from ctxgauge.errors import UserError
from ctxgauge.git import Repo, locate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from conftest import RepoBuilder, git  # noqa: E402
from hostile_repos import LAYOUTS, OTHER_FILE, OTHER_SUBJECT, build  # noqa: E402


def ctxgauge(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the CLI; on a timeout its whole process group (git children stuck on a FIFO too) is killed."""
    proc = subprocess.Popen([sys.executable, "-m", "ctxgauge", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def history(path: Path) -> RepoBuilder:
    b = RepoBuilder(path)
    b.commit("first", {"a.py": "def one():\n    return 1\n", "b.txt": "notes\n"})
    b.commit("fix two in a", {"a.py": "def two():\n    return 2\n"})
    b.commit("add c", {"c.py": "x = 3\n", "a.py": "def three():\n    return 3\n"})
    return b


# -- F2: every redirected layout is refused, by the API and from the shell ----------------------------------
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_a_redirected_repository_is_refused_and_nothing_of_the_other_is_read(tmp_path, name):
    src = build(name, tmp_path)
    with pytest.raises(UserError, match="reads nothing outside|broken git directory"):
        Repo(src)
    with pytest.raises(UserError, match="reads nothing outside|broken git directory"):
        open_corpus(src)


@pytest.mark.parametrize("command", ["query", "replay"])
@pytest.mark.parametrize("name", ["dotgit-symlink", "commondir", "bare-shadow-alternates", "objects-symlink",
                                  "empty-dotgit"])
def test_query_and_replay_print_one_refusal_line_and_leak_nothing(tmp_path, name, command):
    src = build(name, tmp_path / "layout")
    out = tmp_path / "out"
    args = ["query", str(src), "zebrafish", "-e", "grep"] if command == "query" else \
        ["replay", str(src), "-e", "grep", "--out", str(out)]
    proc = ctxgauge(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    said = proc.stdout + proc.stderr
    assert OTHER_FILE not in said and OTHER_SUBJECT not in said
    assert not out.exists() or not any(OTHER_SUBJECT in p.read_text(errors="replace")
                                       for p in out.rglob("*") if p.is_file())


def test_a_bare_layout_in_a_work_tree_does_not_shadow_its_git_directory(tmp_path):
    # F2c, benign side: git asks `.git` first, so the work tree's committed HEAD and objects/ are just files
    b = RepoBuilder(tmp_path / "repo")
    b.commit("start", {"HEAD": "ref: refs/heads/main\n", "objects/keep": "x\n", "refs/keep": "x\n", "a.py": "a\n"})
    loc = locate(b.path)
    assert loc is not None and loc.git_dir == (b.path / ".git").resolve() and loc.work_tree == b.path.resolve()
    assert "a.py" in open_corpus(b.path)


def test_a_folder_inside_a_work_tree_is_located_as_that_repositorys_subtree(tmp_path):
    b = history(tmp_path / "repo")
    (b.path / "pkg" / "deep").mkdir(parents=True)
    (b.path / "pkg" / "deep" / "x.py").write_text("def x(): pass\n")
    loc = locate(b.path / "pkg" / "deep")
    assert loc.work_tree == b.path.resolve() and loc.prefix == "pkg/deep"
    # issue 39 item 2: the folder is the repository's committed subtree (x.py is not committed: not measured);
    # the repository's history is still walked whole (replay then skips commits outside the subtree)
    sub = open_corpus(b.path / "pkg")
    assert sub.kind == "git" and sub.subtree == "pkg" and sub.files == ()
    with Repo(b.path / "pkg") as repo:
        assert [c.subject for c in repo.log("HEAD")] == ["add c", "fix two in a", "first"]


def test_an_empty_git_directory_is_refused_not_walked_past(tmp_path):
    outer = history(tmp_path / "outer")
    inner = outer.path / "inner"
    (inner / ".git").mkdir(parents=True)
    (inner / "mine.py").write_text("def mine(): pass\n")
    (inner / "nested").mkdir()
    for path in (inner, inner / "nested"):
        with pytest.raises(UserError, match="empty or broken git directory"):
            locate(path)
        with pytest.raises(UserError, match="empty or broken git directory"):
            Repo(path)
    proc = ctxgauge("query", str(inner), "three", "-e", "grep", cwd=tmp_path)
    assert proc.returncode == 2 and "a.py" not in proc.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_the_walk_stops_at_a_filesystem_boundary(tmp_path):
    b = history(tmp_path / "repo")
    mnt = b.path / "mnt"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "none", str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (mnt / "sub").mkdir()
        assert locate(mnt / "sub") is None  # git too stops here (GIT_DISCOVERY_ACROSS_FILESYSTEM unset)
        assert locate(b.path / "pkg" if (b.path / "pkg").mkdir() is None else b.path).work_tree == b.path.resolve()
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_every_git_call_runs_with_git_dir_and_ceiling_pinned(tmp_path, monkeypatch):
    import ctxgauge.git._policy as policy

    b = history(tmp_path / "repo")
    seen = []
    real = subprocess.run

    def spy(argv, *a, **kw):
        if argv and argv[0] == "git":
            seen.append(kw.get("env") or {})
        return real(argv, *a, **kw)

    monkeypatch.setattr(policy.subprocess, "run", spy)
    with Repo(b.path) as repo:
        repo.log(repo.resolve("HEAD"))
    assert seen and all(e.get("GIT_DIR") == str((b.path / ".git").resolve()) for e in seen[-2:])
    assert all(e.get("GIT_CEILING_DIRECTORIES") == str(b.path.resolve()) for e in seen[-2:])


# -- linked worktrees and submodules keep working, query and replay on each ----------------------------------
def _worktree(tmp_path: Path) -> Path:
    b = history(tmp_path / "repo")
    wt = tmp_path / "wt"
    git(b.path, "worktree", "add", "-q", str(wt), "HEAD")
    return wt


def _submodule(tmp_path: Path) -> Path:
    sub = history(tmp_path / "sub")
    sup = RepoBuilder(tmp_path / "super")
    sup.commit("start", {"x.py": "x\n"})
    git(sup.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "vendor/sub")
    return sup.path / "vendor" / "sub"


@pytest.mark.parametrize("make", [_worktree, _submodule], ids=["worktree", "submodule"])
def test_query_and_replay_read_a_linked_worktree_and_a_submodule(tmp_path, make):
    src = make(tmp_path)
    assert (src / ".git").is_file()
    q = ctxgauge("query", str(src), "three", "-e", "grep", "--json", cwd=tmp_path)
    assert q.returncode == 0, q.stderr
    assert '"a.py"' in q.stdout
    r = ctxgauge("replay", str(src), "-e", "grep", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert (tmp_path / "run" / "run.json").is_file()


def test_a_worktree_whose_backlink_names_another_checkout_is_refused(tmp_path):
    wt = _worktree(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ".git").write_text((wt / ".git").read_text())
    with pytest.raises(UserError, match="neither a worktree nor a submodule"):
        locate(elsewhere)


# -- F3: FIFOs where git or ctxgauge would read a file never hang a command -----------------------------------
def _fifo_layouts(tmp_path: Path, where: str) -> Path:
    b = history(tmp_path / "repo")
    g = b.path / ".git"
    if where == "packed-refs":
        git(b.path, "pack-refs", "--all")
    if where == "commondir":
        wt = tmp_path / "wt"
        git(b.path, "worktree", "add", "-q", str(wt), "HEAD")
        target = g / "worktrees" / "wt" / "commondir"
        target.unlink()
        os.mkfifo(target)
        return wt
    if where == "gitfile":
        v = tmp_path / "v"
        v.mkdir()
        os.mkfifo(v / ".git")
        return v
    if where == "loose-ref":
        (g / "refs" / "heads" / "fifo").unlink(missing_ok=True)
        os.mkfifo(g / "refs" / "heads" / "fifo")
        return b.path
    target = g / where
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    return b.path


@pytest.mark.parametrize("where", ["config", "HEAD", "packed-refs", "commondir", "gitfile", "loose-ref"])
def test_a_fifo_in_the_git_directory_is_refused_within_the_deadline(tmp_path, where):
    src = _fifo_layouts(tmp_path, where)
    try:
        proc = ctxgauge("query", str(src), "three", "-e", "grep", cwd=tmp_path, timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail(f"query hung on a FIFO as {where}")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "FIFO" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("key", ["mailmap.file", "core.attributesFile", "diff.orderFile"])
def test_a_path_valued_config_key_naming_a_fifo_neither_hangs_nor_is_opened(tmp_path, key):
    b = history(tmp_path / "repo")
    lines = "".join(f"line {i}\n" for i in range(20))
    b.commit("longer notes", {"b.txt": lines})
    b.commit("move the notes", {"docs/b.txt": lines + "one more\n"}, renames={"b.txt": "docs/b.txt"})  # a rename
    fifo = tmp_path / "outside.fifo"
    os.mkfifo(fifo)
    git(b.path, "config", key, str(fifo))
    for args in (["replay", str(b.path), "-e", "grep", "--out", str(tmp_path / "run")],
                 ["query", str(b.path), "three", "-e", "grep"], ["query", str(b.path), "three", "-e", "history"],
                 ["query", str(b.path), "three", "-e", "fusion"]):
        try:
            proc = ctxgauge(*args, cwd=tmp_path, timeout=5)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{args[0]} hung on {key} naming a FIFO")
        assert proc.returncode in (0, 1), proc.stderr


def test_a_gitfile_naming_a_path_too_long_is_one_line(tmp_path):
    # Found by `make fuzz` (repo-layout): pathlib's is_dir raised ENAMETOOLONG out of the locator.
    from ctxgauge.git import locate

    b = history(tmp_path / "repo")
    shutil.rmtree(b.path / ".git")
    (b.path / ".git").write_text("gitdir: " + "x" * 5000 + "\n")
    with pytest.raises(UserError, match="names a git directory that is neither"):
        locate(b.path)


@pytest.mark.parametrize("command", ["query", "replay", "determinism"])
def test_a_fifo_named_as_the_repository_is_one_line_within_the_deadline(tmp_path, command):
    fifo = tmp_path / "repo.fifo"
    os.mkfifo(fifo)
    args = {"query": ["query", str(fifo), "three", "-e", "grep"],
            "replay": ["replay", str(fifo), "-e", "grep", "--out", str(tmp_path / "run")],
            "determinism": ["determinism", str(fifo), "-e", "grep", "--out", str(tmp_path / "run")]}[command]
    try:
        proc = ctxgauge(*args, cwd=tmp_path, timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} hung on a FIFO named as the repository")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "not a directory" in proc.stderr and "cannot be read" not in proc.stderr, proc.stderr


# -- F1: provenance runs git on ctxgauge's own checkout only, and only through the policy ----------------------
def test_provenance_runs_no_fsmonitor_of_a_work_tree_the_package_is_installed_in(tmp_path):
    marker = tmp_path / "MARKER"
    fsmon = tmp_path / "fsmonitor.sh"
    fsmon.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    fsmon.chmod(0o755)
    b = RepoBuilder(tmp_path / "project")  # somebody's project with a src/ctxgauge/ folder of its own
    foreign = b.commit("foreign head", {"src/ctxgauge/__init__.py": "", "src/other.py": "x = 1\n"})
    git(b.path, "config", "core.fsmonitor", str(fsmon))
    site = b.path / "venv" / "lib" / "site-packages"
    shutil.copytree(Path(ctxgauge_pkg.__file__).resolve().parent, site / "ctxgauge",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (b.path / "src" / "other.py").write_text("x = 2\n")  # dirty, so status would consult the fsmonitor
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", "from ctxgauge.records._provenance import source_revision as s; "
                          "import ctxgauge; assert 'site-packages' in ctxgauge.__file__; print(s())"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert foreign not in out.stdout and "'commit': None" in out.stdout
    assert not marker.exists(), "provenance ran the work tree's core.fsmonitor"


def test_provenance_reports_its_own_checkout_through_the_policy(tmp_path):
    from ctxgauge.records._provenance import _revision_of

    marker = tmp_path / "MARKER"
    fsmon = tmp_path / "fsmonitor.sh"
    fsmon.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    fsmon.chmod(0o755)
    b = RepoBuilder(tmp_path / "ctxgauge-checkout")
    head = b.commit("mine", {"src/ctxgauge/__init__.py": "", "src/ctxgauge/x.py": "x = 1\n"})
    git(b.path, "config", "core.fsmonitor", str(fsmon))
    pkg = b.path / "src" / "ctxgauge"
    assert _revision_of(pkg) == {"commit": head, "dirty": False}
    (pkg / "x.py").write_text("x = 2\n")
    assert _revision_of(pkg) == {"commit": head, "dirty": True}
    assert _revision_of(b.path / "src") == {"commit": None, "dirty": None}  # not exactly <top>/src/ctxgauge
    assert not marker.exists()
