"""Confinement: refuse a repository whose reading would read something outside it.

Runs before the first git command on a repository. The git directory is located without running git (so
nothing a `.git` file names is read before it has been looked at), and the repository's own configuration
is read without following its includes.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ctxgauge.errors import UserError
from ctxgauge.git._policy import git_command, git_env, show


def confine(path: Path) -> None:
    """Refuse a repository whose reading would read something outside it.

    A `.git` file naming a foreign git directory, `[include]`/`[includeIf]` in the repository's config (git
    would read the named file), and `objects/info/alternates` (objects borrowed from another store) are
    refused with one line saying so; a linked worktree or submodule `.git` file is followed (it is the same
    repository). Called before the first git command on the repository.
    """
    git_dir = _locate_git_dir(path)
    if git_dir is None:
        return  # not a repository: git's own error follows
    common = git_dir
    if (git_dir / "commondir").is_file():
        common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8", errors="replace").strip()).resolve()
    for cfg in dict.fromkeys((common / "config", git_dir / "config.worktree", common / "config.worktree")):
        for key, values in _config_values(cfg).items():
            if re.fullmatch(r"include(if\..*)?\.path", key):
                raise UserError(
                    f"{show(cfg)}: includes {values[0]!r} ({key}); ctxgauge reads nothing outside the repository "
                    "it is given: remove the include, or inspect a clone without it"
                )
    alternates = common / "objects" / "info" / "alternates"
    if alternates.is_file():
        lines = [ln for ln in alternates.read_text(encoding="utf-8", errors="replace").splitlines()
                 if ln.strip() and not ln.startswith("#")]
        if lines:
            raise UserError(
                f"{show(path)}: borrows objects from {lines[0]!r} (objects/info/alternates); ctxgauge reads nothing "
                "outside the repository it is given: run `git repack -a -d` and delete that file, or clone without "
                "--shared/--reference"
            )


def _locate_git_dir(path: Path) -> Path | None:
    """The git directory git would find for `path` (bare repository, `.git` directory or `.git` file),
    located without running git, so nothing it names is read before `confine` has looked at it."""
    start = path.resolve()
    if (start / "HEAD").is_file() and (start / "objects").is_dir():
        return start
    for d in (start, *start.parents):
        dot = d / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            return _follow_git_file(dot)
    return None


def _follow_git_file(dot: Path) -> Path:
    """The git directory a `.git` file names, when that directory belongs to this checkout.

    Legitimate: a linked worktree (`git worktree add`: the named directory's `gitdir` file points back at this
    `.git` file) and a submodule (its `core.worktree` is this checkout). Anything else, such as
    `gitdir: /some/other/repo/.git`, would make ctxgauge read another repository under this one's name.
    """
    try:
        text = dot.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        raise UserError(f"{show(dot)}: unreadable .git file") from None
    if not text.startswith("gitdir:"):
        raise UserError(f"{show(dot)}: a .git file that does not start with 'gitdir:'")
    target = (dot.parent / text[len("gitdir:"):].strip()).resolve()
    back = target / "gitdir"
    if back.is_file():
        try:
            if (target / back.read_text(encoding="utf-8").strip()).resolve() == dot.resolve():
                return target
        except (OSError, UnicodeDecodeError):
            pass
    worktree = _config_values(target / "config").get("core.worktree")
    if worktree and (target / worktree[-1]).resolve() == dot.parent.resolve():
        return target
    raise UserError(
        f"{show(dot)}: names the git directory {show(target)}, which is neither a worktree nor a submodule of "
        "this checkout; ctxgauge reads nothing outside the repository it is given (pass that repository itself)"
    )


def _config_values(path: Path) -> dict[str, list[str]]:
    """The keys of one git config file, read by git without following its includes (`--no-includes`)."""
    if not path.is_file():
        return {}
    proc = subprocess.run(git_command("config", "-z", "--no-includes", "--file", str(path), "--list"),
                          cwd=path.parent, capture_output=True, env=git_env(), stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise UserError(f"{show(path)}: git cannot read this config file "
                        f"({proc.stderr.decode('utf-8', 'replace').strip()[:200]})")
    out: dict[str, list[str]] = {}
    for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if item:
            key, _, value = item.partition("\n")
            out.setdefault(key.lower(), []).append(value)
    return out
