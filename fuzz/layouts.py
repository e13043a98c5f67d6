"""Two `make fuzz` targets for the surroundings of what ctxgauge reads and writes (issue 36):

- `repo-layout`: a real repository (made with git once per process, copied per input) rearranged by a list of
  operations from the F2/F3 family: `.git` a symbolic link, a gitfile, a `commondir`, `objects` a link to
  another repository's store, that repository's refs copied in, `objects/info/alternates`, an `[include]`, a
  path-valued config key (`mailmap.file`, `core.attributesFile`, ...) naming a FIFO or the other repository's
  files, FIFOs in place of git's own files, an empty `.git/` in a sub-folder, a bare layout committed in the
  work tree, a hostile `HEAD`. The path handed to ctxgauge is the repository, a sub-folder, its `.git`, or a
  nested folder. Read as `query` reads it (`open_corpus`, every file read) and as `replay` does (the log).
  Property: one line of user error or a corpus, nothing of the other repository (its file names, contents or
  subjects all carry OTHER_MARK) in either, and no hang (the harness' alarm).
- `output-target`: `report --md/--html` and `export --out` through the real CLI (typer's runner, in process)
  at a target made of: nothing, a file ctxgauge did not write, one it did (GENERATOR_MARK), a directory (empty,
  or holding a foreign file), a symbolic link (to an outside file, an outside folder, a missing file in an
  outside folder, the run's own run.json), a FIFO, under a parent that may itself be missing or a file.
  Property: exit 0, 1 or 2 (never 70), a refusal on one line; no file outside the work folder and no input
  (the runs) changed, no file ctxgauge did not write replaced, nothing written through a link.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
OTHER_MARK = "OTHERSECRET"
"""In every file name, file body and commit subject of the other repository: seeing it is a leak."""

_GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "A",
            "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@b",
            "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
_BASE: list[Path] = []


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=_GIT_ENV)


def _make(repo: Path, files: dict[str, str], subjects: list[str]) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, capture_output=True, env=_GIT_ENV)
    for i, subject in enumerate(subjects):
        for rel, text in files.items():
            p = repo / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"{text} {i}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", subject)


def _base() -> Path:
    """The two repositories, made once per process: `repo` (the one inspected) and `other` (marked)."""
    if not _BASE:
        base = Path(tempfile.mkdtemp(prefix="ctxgauge-fuzz-layout-base-"))
        _make(base / "repo", {"a.txt": "three alpha", "sub/b.txt": "three beta"}, ["first three", "second three"])
        _make(base / "other", {f"{OTHER_MARK}.txt": f"three {OTHER_MARK}", f"sub/{OTHER_MARK}.py": "three"},
              [f"{OTHER_MARK} one", f"{OTHER_MARK} two"])
        _BASE.append(base)
    return _BASE[0]


# -- repo-layout ---------------------------------------------------------------------------------------------

LAYOUT_OPS = ["dotgit-link", "gitfile", "commondir", "objects-link", "refs-from-other", "alternates", "include",
              "path-key", "fifo", "empty-dotgit", "bare-shadow", "head", "remove"]
PATH_KEY_NAMES = ["mailmap.file", "core.attributesFile", "core.excludesFile", "diff.orderFile",
                  "blame.ignoreRevsFile", "core.hooksPath", "mailmap.blob", "include.path"]
FIFO_SPOTS = [".git/config", ".git/HEAD", ".git/packed-refs", ".git/commondir", ".git/objects/info/alternates",
              ".git", ".git/refs/heads/main", ".git/index", "sub/b.txt", ".git/info/attributes"]
STARTS = ["repo", "repo/sub", "repo/.git", "repo/nested"]
layout_cases = st.tuples(st.lists(st.tuples(st.sampled_from(LAYOUT_OPS), st.integers(min_value=0, max_value=9)),
                                  max_size=4),
                         st.sampled_from(STARTS))


def _replace(path: Path) -> None:
    """Remove whatever is at `path` (a file, a link, a FIFO, a directory) so something else can go there."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _append_config(g: Path, text: str) -> None:
    """Append to `.git/config` when it is still a regular file (an earlier operation may have made it a FIFO,
    which the harness itself would block on)."""
    cfg = g / "config"
    if cfg.is_file() and not cfg.is_symlink() and not g.is_symlink():
        with open(cfg, "a") as fh:
            fh.write(text)


def _inside(path: Path, tmp: Path) -> bool:
    """Whether a write to `path` lands inside `tmp` without passing a link or a FIFO: the harness itself must
    never write through what an earlier operation made (a `.git` linked elsewhere, a FIFO it would block on)."""
    here = tmp
    for part in path.relative_to(tmp).parts[:-1]:
        here = here / part
        if here.is_symlink() or (os.path.lexists(here) and not here.is_dir()):
            return False
    last = path
    return not last.is_symlink() and (not os.path.lexists(last) or last.is_file() or last.is_dir())


def _apply(op: str, n: int, repo: Path, other: Path, tmp: Path) -> None:
    g = repo / ".git"
    og = other / ".git"
    writes = {"commondir": g / "commondir", "objects-link": g / "objects", "refs-from-other": g / "refs" / "heads",
              "alternates": g / "objects" / "info" / "alternates", "include": g / "config", "path-key": g / "config",
              "head": g / "HEAD", "remove": g / "HEAD", "fifo": repo / FIFO_SPOTS[n],
              "empty-dotgit": repo / "sub" / ".git" / "x", "bare-shadow": repo / "objects" / "x"}
    if op in writes and not _inside(writes[op], tmp):
        return
    if op == "dotgit-link":
        _replace(g)
        os.symlink([og, other, tmp / "decoy", tmp / "missing", g, "../other/.git", og / "objects", tmp / "decoy-file",
                    tmp / "decoy" / "deeper", repo / "sub"][n], g)
    elif op == "gitfile":
        _replace(g)
        g.write_bytes([f"gitdir: {og}\n".encode(), b"gitdir: ../other/.git\n", b"gitdir: \n", b"\xff\xfe",
                       b"gitdir: ../decoy\n", f"gitdir: {og}/worktrees/x\n".encode(), b"", b"gitdir: .git\n",
                       b"gitdir: " + b"x" * 5000 + b"\n", f"gitdir: {tmp / 'nowhere'}".encode()][n])
    elif op == "commondir":
        (g / "commondir").write_text([str(og), "../../other/.git", "", "..", "/", str(g), "\n", "x" * 300,
                                      str(other), "../other/.git"][n] + "\n")
    elif op == "objects-link":
        _replace(g / "objects")
        os.symlink([og / "objects", tmp / "decoy", tmp / "missing", g / "objects"][n % 4], g / "objects")
    elif op == "refs-from-other":
        head = (og / "refs" / "heads" / "main").read_text()
        (g / "refs" / "heads" / ["main", "other"][n % 2]).write_text(head)
    elif op == "alternates":
        (g / "objects" / "info").mkdir(parents=True, exist_ok=True)
        (g / "objects" / "info" / "alternates").write_text([str(og / "objects"), "../../other/.git/objects", "",
                                                             "# only a comment", str(tmp / "decoy")][n % 5] + "\n")
    elif op == "include":
        _append_config(g, [f"[include]\n\tpath = {og / 'config'}\n", f"[includeIf \"gitdir:/\"]\n\tpath = {tmp / 'decoy-file'}\n",
                           f"[include]\n\tpath = {tmp / 'fifo'}\n"][n % 3])
        if n % 3 == 2 and not os.path.lexists(tmp / "fifo"):
            os.mkfifo(tmp / "fifo")
    elif op == "path-key":
        key = PATH_KEY_NAMES[n % len(PATH_KEY_NAMES)]
        section, name = key.rsplit(".", 1)
        if not os.path.lexists(tmp / "fifo"):
            os.mkfifo(tmp / "fifo")
        value = [tmp / "fifo", og / "config", other / f"{OTHER_MARK}.txt"][n % 3]
        _append_config(g, f"[{section}]\n\t{name} = {value}\n")
    elif op == "fifo":
        spot = repo / FIFO_SPOTS[n]
        if spot.parent.is_dir() and not spot.parent.is_symlink():
            _replace(spot)
            os.mkfifo(spot)
    elif op == "empty-dotgit":
        (repo / "nested" / ".git").mkdir(parents=True, exist_ok=True)
        if n % 2:
            (repo / "sub" / ".git").mkdir(parents=True, exist_ok=True)
    elif op == "bare-shadow":
        (repo / "HEAD").write_text(["ref: refs/heads/main\n", "garbage\n"][n % 2])
        (repo / "objects").mkdir(exist_ok=True)
        (repo / "refs").mkdir(exist_ok=True)
        if n % 3 == 0:
            (repo / "config").write_text(f"[include]\n\tpath = {og / 'config'}\n")
    elif op == "head":
        head = (og / "refs" / "heads" / "main").read_text().strip()
        (g / "HEAD").write_text(["ref: refs/heads/nothing\n", f"{head}\n", "ref: ../../../other/.git/HEAD\n",
                                 "", "ref: refs/heads/main\x00\n", "x" * 70000][n % 6])
    elif op == "remove":
        _replace(g / ["HEAD", "objects", "refs", "config", "packed-refs"][n % 5])


def check_repo_layout(case: list, tmp: Path) -> None:
    from ctxgauge.corpus import open_corpus
    from ctxgauge.corpus._corpus import is_git_source
    from ctxgauge.git import Repo

    import targets as T

    ops, start_name = case
    base = _base()
    repo, other = tmp / "repo", tmp / "other"
    shutil.copytree(base / "repo", repo, symlinks=True)
    shutil.copytree(base / "other", other, symlinks=True)
    (repo / "nested").mkdir()
    (tmp / "decoy").mkdir()  # what a link made by an operation may name instead of a folder outside tmp
    (tmp / "decoy-file").write_text("decoy\n")
    for op, n in ops:
        try:
            _apply(op, n, repo, other, tmp)
        except OSError:
            continue  # a layout this file system refuses: not an input
    start = tmp / start_name

    # A link the user names is theirs to name (a path on the command line is resolved once): `repo/.git` given
    # when it is a link to the other repository's git directory names that repository.
    named_link = any((tmp / Path(*Path(start_name).parts[:i])).is_symlink()
                     for i in range(1, len(Path(start_name).parts) + 1))

    def leak(what: str, text: str) -> None:
        if OTHER_MARK in text and not named_link:
            raise T.Breach(f"the other repository leaked into {what}: {text[:200]!r}")

    def read() -> None:
        try:
            corpus = open_corpus(start, max_bytes=T.MAX_BYTES)
            for f, data in corpus.iter_bytes():
                leak("a corpus path", f.path)
                leak("a corpus file", data.decode("utf-8", "replace"))
            if is_git_source(start):
                with Repo(start) as r:
                    for c in r.log("HEAD"):
                        leak("a commit subject", c.subject)
        except T.Breach:
            raise
        except Exception as exc:
            leak("an error message", str(exc))
            raise

    T.user_error_or_ok(read)


# -- output-target -------------------------------------------------------------------------------------------

TARGET_KINDS = ["none", "foreign-file", "our-file", "empty-dir", "dir-with-file", "link-outside-file",
                "link-outside-dir", "link-outside-missing", "link-input", "fifo", "parent-missing", "parent-file"]
OPTIONS = ["--md", "--html", "--out"]
output_cases = st.lists(st.tuples(st.sampled_from(OPTIONS), st.sampled_from(TARGET_KINDS),
                                  st.sampled_from(["report.md", "r.html", "x", "export", ".hidden"])),
                        min_size=1, max_size=2)
RUN_FIXTURE = ROOT / "tests" / "records" / "fixtures" / "v1" / "cases"


def _snapshot(root: Path) -> dict[str, Any]:
    """Every entry under `root` (links not followed): its kind and, for a regular file, its bytes' hash."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_file():
                out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
            elif p.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("other",)
    return out


def _make_target(kind: str, path: Path, outside: Path, run: Path) -> None:
    from ctxgauge._output import MARK_LINE

    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "foreign-file":
        path.write_text("somebody else's notes\n")
    elif kind == "our-file":
        path.write_text(f"{MARK_LINE}\n# an old report\n")
    elif kind == "empty-dir":
        path.mkdir()
    elif kind == "dir-with-file":
        path.mkdir()
        (path / "keep.txt").write_text("somebody else's file\n")
    elif kind == "link-outside-file":
        os.symlink(outside / "victim.txt", path)
    elif kind == "link-outside-dir":
        os.symlink(outside, path)
    elif kind == "link-outside-missing":
        os.symlink(outside / "created-through-a-link", path)
    elif kind == "link-input":
        os.symlink(run / "run.json", path)
    elif kind == "fifo":
        os.mkfifo(path)


def check_output_target(case: list, tmp: Path) -> None:
    from typer.testing import CliRunner

    from ctxgauge.cli import app
    from ctxgauge.errors import UserError

    import targets as T

    runs, work, outside = tmp / "runs", tmp / "work", tmp / "outside"
    run = runs / "cases"
    shutil.copytree(RUN_FIXTURE, run)
    outside.mkdir()
    (outside / "victim.txt").write_text("outside, never written\n")
    work.mkdir()
    targets: list[tuple[str, Path]] = []
    for i, (option, kind, name) in enumerate(case):
        parent = work / f"t{i}"
        if kind == "parent-missing":
            parent = parent / "not" / "yet"
        elif kind == "parent-file":
            parent.parent.mkdir(parents=True, exist_ok=True)
            parent.write_text("a file where a folder would be\n")
        path = parent / name
        if kind not in ("parent-missing", "parent-file"):
            _make_target(kind, path, outside, run)
        targets.append((option, path))
    before_out, before_runs, before_work = _snapshot(outside), _snapshot(runs), _snapshot(work)
    report = [(o, p) for o, p in targets if o != "--out"]
    exports = [p for o, p in targets if o == "--out"]
    results = []
    if report:
        args = ["report", str(runs)] + [x for o, p in report for x in (o, str(p))]
        results.append(CliRunner().invoke(app, args))
    for p in exports:
        results.append(CliRunner().invoke(app, ["export", str(runs), "--out", str(p)]))
    for res in results:
        exc = res.exception
        if isinstance(exc, UserError):  # what `ctxgauge` turns into one line and exit 2 (cli._run, outside the app)
            if "\n" in str(exc) or "\r" in str(exc):
                raise T.Breach(f"a refusal over more than one line: {str(exc)[:400]!r}")
        elif exc is not None and not isinstance(exc, SystemExit):
            raise T.Breach(f"{type(exc).__name__} out of the command: {exc!r}") from exc
        elif res.exit_code not in (0, 2, 6):  # 70 is the crash handler's: a bug
            raise T.Breach(f"exit {res.exit_code}: {res.output[-400:]!r}")
    if _snapshot(outside) != before_out:
        raise T.Breach(f"written outside the work folder (through a link): {sorted(_snapshot(outside))}")
    if _snapshot(runs) != before_runs:
        raise T.Breach("an input of the command (the runs) changed")
    after = _snapshot(work)
    ours = {p.relative_to(work).as_posix() for (o, p), (_, kind, _) in zip(targets, case) if kind == "our-file"}
    for rel, entry in sorted(before_work.items()):
        if rel not in ours and after.get(rel) != entry:
            raise T.Breach(f"{rel}: was {entry[0]}, is now {after.get(rel, ('gone',))[0]} (only a file ctxgauge "
                           "wrote may be replaced)")
