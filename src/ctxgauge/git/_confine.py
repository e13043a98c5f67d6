"""Confinement: refuse a repository whose reading would read something outside it.

Runs before the first git command on a repository. The repository is found by the one locator (`_locate`,
which already refused a redirected `.git`, `commondir` or object store), then its own configuration is read
without following its includes, and its object store is checked for borrowed objects.
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxgauge._untrusted import GIT_SMALL_FILE_LIMIT, read_untrusted
from ctxgauge.errors import UserError
from ctxgauge.git._locate import Location, config_values, locate
from ctxgauge.git._policy import show


def confine(path: Path) -> Location | None:
    """The repository `path` belongs to (None when none), refused when reading it would read something
    outside it.

    Beyond the locator's refusals: `[include]`/`[includeIf]` in the repository's config (git would read the
    named file; no `-c` can switch an include off) and `objects/info/alternates` (objects borrowed from
    another store) are refused with one line saying so. Called before the first git command on the repository.
    """
    loc = locate(path)
    if loc is None:
        return None  # not a repository: the caller says so
    git_dir, common = loc.git_dir, loc.common_dir
    for cfg in dict.fromkeys((common / "config", git_dir / "config.worktree", common / "config.worktree")):
        for key, values in config_values(cfg).items():
            if re.fullmatch(r"include(if\..*)?\.path", key):
                raise UserError(
                    f"{show(cfg)}: includes another file ({key}); ctxgauge reads nothing outside the repository "
                    "it is given: remove the include, or inspect a clone without it"
                )
    raw = read_untrusted(common / "objects" / "info" / "alternates", GIT_SMALL_FILE_LIMIT, "git alternates")
    if raw is not None:
        lines = [ln for ln in raw.decode("utf-8", "replace").splitlines() if ln.strip() and not ln.startswith("#")]
        if lines:
            raise UserError(
                f"{show(path)}: borrows objects from another store (objects/info/alternates); ctxgauge reads nothing "
                "outside the repository it is given: run `git repack -a -d` and delete that file, or clone without "
                "--shared/--reference"
            )
    return loc
