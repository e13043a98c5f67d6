"""Build every redirected-repository layout (issue 36, F2) in a temporary folder and run `query`, `replay` and
`determinism` on each: each must print one refusal line, exit 2, and leak no path or commit subject of the
other repository the layout points at.

    python scripts/hostile_repos.py            # all layouts, a table, exit 1 if any layout is not refused
    python scripts/hostile_repos.py --keep     # keep the temporary folder (its path is printed)

`LAYOUTS` and `build` are imported by tests/git/test_locate.py, so the script and the tests build the same
layouts. Nothing here needs a network; git builds every repository.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

OTHER_SUBJECT = "zebrafish pineapple other-subject"
OTHER_FILE = "zebrafish_other.py"

_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@x",
    "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@x", "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_DATE": "1700000000 +0000", "LC_ALL": "C",
}


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env={**env, **_ENV},
                          check=True, capture_output=True, text=True).stdout


def repo(path: Path, files: dict[str, str], subjects: list[str]) -> Path:
    """A repository at `path` with one commit per subject, each changing every file."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    for i, subject in enumerate(subjects):
        for name, text in files.items():
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).write_text(f"{text}\n# revision {i}\n")
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", subject)
    return path


def other(root: Path) -> Path:
    """The repository every layout points at: its file name and subjects must never reach the output."""
    return repo(root / "other", {OTHER_FILE: "def zebrafish():\n    return 'pineapple'"},
                [f"{OTHER_SUBJECT} {i}" for i in range(3)])


def victim(root: Path) -> Path:
    return repo(root / "victim", {"mine.py": "def mine():\n    return 1"}, ["fix mine one", "fix mine two"])


def _copy_refs(src: Path, dest_git: Path) -> None:
    head = git(src, "rev-parse", "HEAD").strip()
    (dest_git / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (dest_git / "refs" / "heads" / "main").write_text(head + "\n")
    (dest_git / "HEAD").write_text("ref: refs/heads/main\n")


def dotgit_symlink(root: Path) -> Path:
    """F2a: `.git` is a symbolic link to the other repository's git directory."""
    o = other(root)
    v = root / "victim"
    v.mkdir()
    (v / ".git").symlink_to(o / ".git")
    return v


def commondir(root: Path) -> Path:
    """F2b: a `.git/` directory whose `commondir` names the other repository (HEAD set to a branch)."""
    o = other(root)
    v = root / "victim"
    g = v / ".git"
    for d in ("objects", "refs"):
        (g / d).mkdir(parents=True)
    (g / "HEAD").write_text("ref: refs/heads/main\n")
    (g / "commondir").write_text(str(o / ".git") + "\n")
    return v


def gitfile_commondir(root: Path) -> Path:
    """A `.git` file naming a git directory with a valid backlink, whose `commondir` names the other one."""
    o = other(root)
    v = root / "victim"
    meta = v / "meta"
    meta.mkdir(parents=True)
    (meta / "HEAD").write_text("ref: refs/heads/main\n")
    (meta / "commondir").write_text(str(o / ".git") + "\n")
    (meta / "gitdir").write_text(str(v / ".git") + "\n")
    (v / ".git").write_text(f"gitdir: {meta}\n")
    return v


def bare_shadow_alternates(root: Path) -> Path:
    """F2c: a work tree holding a committed `HEAD` file and `objects/` folder (a bare layout), whose real
    `.git` borrows the other repository's objects (alternates) and carries its refs."""
    o = other(root)
    v = root / "victim"
    v.mkdir()
    git(v, "init", "-q")
    (v / "HEAD").write_text("ref: refs/heads/main\n")
    (v / "objects").mkdir()
    (v / "objects" / "keep").write_text("x\n")
    (v / "refs").mkdir()
    (v / "refs" / "keep").write_text("x\n")
    git(v, "add", "-A")
    git(v, "commit", "-q", "-m", "bare-looking work tree")
    (v / ".git" / "objects" / "info" / "alternates").write_text(str(o / ".git" / "objects") + "\n")
    _copy_refs(o, v / ".git")
    return v


def bare_shadow_include(root: Path) -> Path:
    """F2c: the same bare-looking work tree, its `.git/config` including a file outside the repository."""
    v = bare_shadow_alternates(root)
    (v / ".git" / "objects" / "info" / "alternates").unlink()
    outside = root / "other" / "outside.cfg"
    outside.write_text("[core]\n\tbare = false\n")
    with open(v / ".git" / "config", "a") as fh:
        fh.write(f"[include]\n\tpath = {outside}\n")
    return v


def objects_symlink(root: Path) -> Path:
    """F2d: `.git/objects` is a symbolic link to the other repository's objects (its refs copied)."""
    o = other(root)
    v = victim(root)
    shutil.rmtree(v / ".git" / "objects")
    (v / ".git" / "objects").symlink_to(o / ".git" / "objects")
    _copy_refs(o, v / ".git")
    return v


def pack_symlink(root: Path) -> Path:
    """F2d: `.git/objects/pack` is a symbolic link to the other repository's packs (its refs copied)."""
    o = other(root)
    git(o, "repack", "-a", "-d", "-q")
    v = victim(root)
    shutil.rmtree(v / ".git" / "objects" / "pack")
    (v / ".git" / "objects" / "pack").symlink_to(o / ".git" / "objects" / "pack")
    _copy_refs(o, v / ".git")
    return v


def empty_dotgit(root: Path) -> Path:
    """F2e: an empty `.git/` directory in a folder of the other repository (git would walk up to it)."""
    o = other(root)
    v = o / "victim"
    (v / ".git").mkdir(parents=True)
    (v / "mine.py").write_text("def mine():\n    return 1\n")
    return v


LAYOUTS = {
    "dotgit-symlink": dotgit_symlink,
    "commondir": commondir,
    "gitfile-commondir": gitfile_commondir,
    "bare-shadow-alternates": bare_shadow_alternates,
    "bare-shadow-include": bare_shadow_include,
    "objects-symlink": objects_symlink,
    "pack-symlink": pack_symlink,
    "empty-dotgit": empty_dotgit,
}
"""Every F2 layout by name: a builder taking an empty folder and returning the folder to inspect."""

COMMANDS = {
    "query": lambda src, out: ["query", str(src), "zebrafish pineapple", "-e", "grep"],
    "replay": lambda src, out: ["replay", str(src), "-e", "grep", "--out", str(out / "replay")],
    "determinism": lambda src, out: ["determinism", str(src), "-e", "grep", "--out", str(out / "det"),
                                     "--rebuilds", "2", "--trials", "2"],
}
"""The commands run on each layout, as argv after `ctxgauge`."""


def build(name: str, root: Path) -> Path:
    """Build layout `name` under the empty folder `root`; the folder to inspect."""
    root.mkdir(parents=True, exist_ok=True)
    return LAYOUTS[name](root)


def check(name: str, command: str, root: Path, timeout: float = 60) -> str | None:
    """Run `command` on a freshly built layout: None when it was refused as promised, else what went wrong."""
    src = build(name, root / "layout")
    out = root / "out"
    out.mkdir()
    proc = subprocess.run([sys.executable, "-m", "ctxgauge", *COMMANDS[command](src, out)], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, cwd=root)
    said = proc.stdout + proc.stderr
    for dirpath, _, files in os.walk(out):  # and whatever the command wrote: a record must not hold them either
        said += "".join(Path(dirpath, f).read_text(errors="replace") for f in files)
    problems = []
    if proc.returncode != 2:
        problems.append(f"exit {proc.returncode}")
    if len(proc.stderr.strip().splitlines()) != 1:
        problems.append(f"{len(proc.stderr.strip().splitlines())} lines on stderr")
    for secret in (OTHER_SUBJECT, OTHER_FILE, str(root / "layout" / "other")):
        if secret in said and not (name == "empty-dotgit" and secret.endswith("other")):
            problems.append(f"leaked {secret!r}")
    return "; ".join(problems) + f" [{said.strip()[:300]}]" if problems else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--layout", action="append", choices=sorted(LAYOUTS), help="only these layouts")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="hostile-repos-"))
    failed = 0
    try:
        for name in args.layout or list(LAYOUTS):
            for command in COMMANDS:
                problem = check(name, command, tmp / name / command)
                failed += problem is not None
                print(f"{name:24} {command:12} {'refused (exit 2, one line, nothing leaked)' if problem is None else 'FAIL: ' + problem}")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{failed} failure(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
