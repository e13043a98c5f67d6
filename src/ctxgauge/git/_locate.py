"""The one repository locator: which repository a folder belongs to, found as git finds it, without running git.

Git's discovery, mirrored (setup.c): from the folder upward, each directory is asked first whether it holds
`.git` (a directory, or a file naming one), then whether it is itself a bare repository; the walk stops at
the root and at a filesystem boundary. What is stricter than git, because ctxgauge must read the repository it
was given and nothing else:
- a `.git` that is a symbolic link, an empty or broken `.git/` directory, a `.git` that is a FIFO or device,
  are refused; git would follow the link, or walk past the broken directory to an enclosing repository and
  read that one under this folder's name;
- a `.git/` directory with a `commondir` file (git would take objects, refs and config from wherever it
  names) is refused; only a linked worktree's git directory (`<common>/worktrees/<name>`, `commondir` naming
  `../..`) may have one, and only when its `gitdir` backlink names the `.git` file that led there;
- an object store that is a link, or holds links (`objects/pack -> /elsewhere`), or a `refs/` that is one,
  is refused: that is another repository's history read under this one's name;
- files git will open (`HEAD`, `config`, `packed-refs`, loose refs, loose objects, packs) must be regular
  files: a FIFO would block git forever.
Every git process ctxgauge then starts on the repository has `GIT_DIR` and `GIT_CEILING_DIRECTORIES` pinned
to what was found here (see `Location.env`), so git never looks for a repository itself.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import subprocess

from ctxgauge._untrusted import GIT_CONFIG_LIMIT, GIT_SMALL_FILE_LIMIT, check_regular, kind_of, read_untrusted
from ctxgauge.errors import UserError
from ctxgauge.git._policy import NO_REPOSITORY, git_command, git_env, show

_ELSEWHERE = "ctxgauge reads nothing outside the repository it is given"


@dataclass(frozen=True)
class Location:
    """A repository as the locator found it (all paths resolved).

    git_dir: the git directory of this checkout (`.git`, a worktree's `<common>/worktrees/<name>`, a
    submodule's `<super>/.git/modules/<name>`, or the bare repository itself); common_dir: where objects, refs
    and config live (the git directory itself except for a linked worktree); work_tree: the checkout's top
    folder, None for a bare repository; prefix: the folder asked for, relative to work_tree (POSIX, "" at the
    top): a folder inside a work tree is that repository's subtree."""

    git_dir: Path
    common_dir: Path
    work_tree: Path | None
    prefix: str

    @property
    def top(self) -> Path:
        """The folder that is the repository: the work tree's top, or the bare repository."""
        return self.work_tree if self.work_tree is not None else self.git_dir

    def env(self) -> dict[str, str]:
        """What every git process on this repository gets pinned: GIT_DIR (no discovery) and, should anything
        still look, a ceiling right above the git directory."""
        return {"GIT_DIR": str(self.git_dir), "GIT_CEILING_DIRECTORIES": str(self.git_dir.parent)}


def locate(path: str | Path) -> Location | None:
    """The repository `path` belongs to, found in git's order (see the module doc), or None when it belongs
    to none; a redirected or broken repository on the way is a UserError of one line, never walked past."""
    try:
        start = Path(path).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    try:
        st = os.stat(start)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):  # a FIFO, a device or a file named as the repository: said as such
        raise UserError(f"{show(Path(path))}: is {kind_of(st.st_mode)}, not a directory (give a directory or a git "
                        "repository)")
    dev = st.st_dev
    d = start
    while True:
        found = _at(d)
        if found is not None:
            git_dir, common, work_tree = found
            _check_store(common)
            prefix = start.relative_to(work_tree).as_posix() if work_tree is not None and start != work_tree else ""
            return Location(git_dir, common, work_tree, "" if prefix == "." else prefix)
        parent = d.parent
        if parent == d:
            return None
        try:
            if os.stat(parent).st_dev != dev:
                return None  # a filesystem boundary: git stops here too (GIT_DISCOVERY_ACROSS_FILESYSTEM unset)
        except OSError:
            return None
        d = parent


def _at(d: Path) -> tuple[Path, Path, Path | None] | None:
    """(git dir, common dir, work tree) when `d` is a repository's top, None when it is none."""
    dot = d / ".git"
    try:
        st = os.lstat(dot)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise UserError(f"{show(dot)}: cannot be read ({exc.strerror or exc})") from None
    if st is not None:  # git asks `.git` first; a bare layout beside it is only files of the work tree
        if stat.S_ISLNK(st.st_mode):
            raise UserError(f"{show(dot)}: is a symbolic link to another git directory; {_ELSEWHERE}: pass "
                            "the repository it names itself")
        if stat.S_ISREG(st.st_mode):
            git_dir, common = _follow_git_file(dot)
            return git_dir, common, d
        if not stat.S_ISDIR(st.st_mode):
            raise UserError(f"{show(dot)}: is {kind_of(st.st_mode)}, neither a git directory nor a .git file")
        if not _looks_like_git_dir(dot, dot):
            raise UserError(f"{show(dot)}: an empty or broken git directory (it needs HEAD, objects/ and refs/); "
                            "git would walk past it to an enclosing repository, which ctxgauge never reads in its "
                            "place: delete it, or mend the repository")
        if os.path.lexists(dot / "commondir"):
            raise UserError(f"{show(dot)}: its commondir file takes objects, refs and config from another git "
                            f"directory; {_ELSEWHERE}")
        return dot, dot, d
    if _looks_like_git_dir(d, d):
        if os.path.lexists(d / "commondir"):
            raise UserError(f"{show(d / 'commondir')}: takes objects, refs and config from another git directory; "
                            f"{_ELSEWHERE}")
        return d, d, None
    return None


def _looks_like_git_dir(git_dir: Path, common: Path) -> bool:
    """Git's test for a git directory (is_git_directory): a HEAD file, an `objects/` and a `refs/` directory.
    Links and FIFOs among them are refused by `_check_head` and `_check_store` once the directory is chosen."""
    head = git_dir / "HEAD"
    if not os.path.lexists(head):
        return False
    if os.path.islink(head):
        raise UserError(f"{show(head)}: is a symbolic link; {_ELSEWHERE}")
    _check_head(head)
    return os.path.isdir(common / "objects") and os.path.isdir(common / "refs")


def _check_head(head: Path) -> None:
    """HEAD is a regular file of one line, read without blocking."""
    read_untrusted(head, GIT_SMALL_FILE_LIMIT, "git HEAD")


def _follow_git_file(dot: Path) -> tuple[Path, Path]:
    """(git dir, common dir) a `.git` file names, when that directory belongs to this checkout.

    Legitimate: a linked worktree (`git worktree add`: the named directory's `gitdir` file points back at this
    `.git` file, and its `commondir` is `../..`) and a submodule (its `core.worktree` is this checkout).
    Anything else, such as `gitdir: /some/other/repo/.git`, would make ctxgauge read another repository under
    this one's name.
    """
    raw = read_untrusted(dot, GIT_SMALL_FILE_LIMIT, ".git file")
    try:
        text = (raw or b"").decode("utf-8").strip()
    except UnicodeDecodeError:
        raise UserError(f"{show(dot)}: a .git file that is not UTF-8 text") from None
    if not text.startswith("gitdir:"):
        raise UserError(f"{show(dot)}: a .git file that does not start with 'gitdir:'")
    target = (dot.parent / text[len("gitdir:"):].strip()).resolve()
    refuse = UserError(
        f"{show(dot)}: names a git directory that is neither a worktree nor a submodule of this checkout; "
        f"{_ELSEWHERE} (pass that repository itself)")
    if not os.path.isdir(target):  # os.path: a name too long or a loop is "not a directory", never a traceback
        raise refuse
    common = target
    commondir = read_untrusted(target / "commondir", GIT_SMALL_FILE_LIMIT, "git commondir")
    if commondir is not None:
        named = (target / commondir.decode("utf-8", "replace").strip()).resolve()
        # git worktree add writes `../..` into <common>/worktrees/<name>/commondir: nothing else is its layout
        if target.parent.name != "worktrees" or named != target.parent.parent:
            raise UserError(f"{show(dot)}: its git directory's commondir takes objects, refs and config from "
                            f"a repository that does not hold this worktree; {_ELSEWHERE}")
        common = named
    if not _looks_like_git_dir(target, common):
        raise refuse
    back = read_untrusted(target / "gitdir", GIT_SMALL_FILE_LIMIT, "git worktree backlink")
    if back is not None:
        if (target / back.decode("utf-8", "replace").strip()).resolve() == dot.resolve():
            return target, common
        raise refuse
    if commondir is None:
        worktree = config_values(target / "config").get("core.worktree")
        if worktree and (target / worktree[-1]).resolve() == dot.parent.resolve():
            return target, common
    raise refuse


def _check_store(common: Path) -> None:
    """The object store and refs are this repository's own (no link into another store) and every file git
    will open in them is a regular file (a FIFO would block git forever). Iterative: no recursion on a deep
    `refs/` tree."""
    for name in ("objects", "refs"):
        p = common / name
        if os.path.islink(p):
            raise UserError(f"{show(p)}: is a symbolic link; another repository's {name} would be read under "
                            f"this one's name; {_ELSEWHERE}")
    for name in ("packed-refs", "config", "config.worktree", "shallow", "info/grafts", "info/attributes"):
        check_regular(common / name, "git file")
    stack = [common / "objects", common / "refs"]
    while stack:
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError as exc:
            raise UserError(f"{show(top)}: cannot be listed ({exc.strerror or exc})") from None
        for e in entries:
            if e.is_symlink():
                raise UserError(f"{show(e.path)}: is a symbolic link; {_ELSEWHERE}")
            if e.is_dir(follow_symlinks=False):
                stack.append(Path(e.path))
            elif not e.is_file(follow_symlinks=False):
                mode = e.stat(follow_symlinks=False).st_mode
                raise UserError(f"{show(e.path)}: is {kind_of(mode)} inside the repository's "
                                f"{'objects' if 'objects' in Path(e.path).relative_to(common).parts[:1] else 'refs'}; "
                                "git would wait on it forever")


def config_values(path: Path) -> dict[str, list[str]]:
    """The keys of one git config file (lower-cased names -> values in order), read by git without following
    its includes and without opening any repository (GIT_DIR names nothing, so git reads no other config);
    the file is checked to be a regular file within GIT_CONFIG_LIMIT first, so git never blocks on a FIFO."""
    if read_untrusted(path, GIT_CONFIG_LIMIT, "git config") is None:
        return {}
    proc = subprocess.run(git_command("config", "-z", "--no-includes", "--file", str(path), "--list"),
                          cwd="/", capture_output=True, env=git_env(NO_REPOSITORY), stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise UserError(f"{show(path)}: git cannot read this config file "
                        f"({proc.stderr.decode('utf-8', 'replace').strip()[:200]})")
    out: dict[str, list[str]] = {}
    for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if item:
            key, _, value = item.partition("\n")
            out.setdefault(key.lower(), []).append(value)
    return out
