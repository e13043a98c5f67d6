"""The one output rule: where ctxgauge may write, what it may write over, and what a failed write tells the user.

1. A file the user names (`report --md FILE`, `--html FILE`) is written there and nowhere else: never through a
   symbolic link found at that path (the link would carry the write elsewhere), never onto something that is
   not a regular file.
2. An existing file is replaced only when ctxgauge wrote it: a report carries GENERATOR_MARK near its top, and a
   file without it (a run's run.json, a case file, anything else) is refused with one line, exit 2, unless the
   user says `--force`. An input of the same command (any file inside a run being reported) is never
   overwritten, `--force` or not.
3. Data-derived file names are bounded (`_io.bounded_name`).
4. The user's environment failing a write (a full disk, a file too large, a read-only file system, no
   permission, a directory where a file belongs) is never a bug: `environment_reason` turns such an OSError into
   the one line a user reads (`no space left on device: PATH`). Before a run is recorded it is a user error
   (exit 2); once a run is recorded, `RunDir` marks it `error` with that reason and raises
   `EnvironmentProblem` carrying the run directory, which the CLI turns into exit 6 and the `--resume` command.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Iterable

from ctxgauge.errors import UserError

GENERATOR_MARK = "generator: ctxgauge"
"""The marker every report ctxgauge writes carries in its first lines (an HTML comment in both formats), so a
later `report --md/--html` onto the same path knows it may replace it."""
MARK_LINE = f"<!-- {GENERATOR_MARK} -->"
"""The marker as it is written: a comment, invisible in a rendered page and in rendered Markdown."""
MARK_WINDOW = 4096
"""How many bytes at the top of an existing file are searched for the marker."""

ENVIRONMENT_ERRNOS: dict[int, str] = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large for this file system or its limit",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "is a directory, not a file",
    errno.ENOTDIR: "a part of the path is not a directory",
    errno.ENAMETOOLONG: "file name too long",
    errno.EEXIST: "already exists and is not a directory",
    errno.ELOOP: "is a symbolic link (never written through)",
    errno.EIO: "input/output error",
}
"""The errors of a write that say something about the user's disk or folders, never about ctxgauge's code,
each with the words the one line uses."""


class EnvironmentProblem(Exception):
    """A write failed for an environmental reason after a run was recorded: the run is marked `error` with
    `reason` and stays resumable; the CLI prints one line with the `--resume` command and exits 6."""

    def __init__(self, run_dir, reason: str):
        super().__init__(reason)
        self.run_dir = run_dir
        self.reason = reason


def environment_reason(exc: BaseException | None, where: str | os.PathLike | None = None) -> str | None:
    """`<what went wrong>: <path>` when `exc` (or an exception it was raised from) is an OSError of the user's
    environment (ENVIRONMENT_ERRNOS), else None. `where`: the path to name instead of the error's own (the
    folder the user gave, when the error came from a file inside it)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen and not isinstance(exc, UserError):
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS:
            text = ENVIRONMENT_ERRNOS[exc.errno]
            shown = where if where is not None else exc.filename
            return f"{text}: {_shown(shown)}" if shown is not None else text
        # `raise ... from None` hides the context: what was already explained is not explained again.
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return None


def _shown(path) -> str:
    text = os.fsdecode(path) if isinstance(path, (bytes, os.PathLike)) else str(path)
    return text if text.isprintable() else text.encode("unicode_escape", "backslashreplace").decode("ascii")


def is_ctxgauge_output(path: str | Path) -> bool:
    """Whether `path` is a regular file (not reached through a link) whose first MARK_WINDOW bytes hold the
    GENERATOR_MARK. Opened without following a link and without blocking, so a FIFO placed there is no hang."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        head = os.read(fd, MARK_WINDOW)
    finally:
        os.close(fd)
    return GENERATOR_MARK.encode("ascii") in head


def check_output_target(path: str | Path, *, option: str, inputs: Iterable[str | Path] = (),
                        force: bool = False) -> Path:
    """The path a report may be written to, or a UserError (exit 2) that leaves whatever is there unchanged.

    `inputs`: files and directories the same command reads (a run directory stands for every file in it);
    writing onto or into one of them is refused even with `force`."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise UserError(f"{option} {_shown(path)}: cannot be written ({exc.strerror or exc})") from None
    target = _real_target(path)
    for item in inputs:
        item_real = Path(os.path.realpath(item))
        if target == item_real or item_real in target.parents:
            raise UserError(f"{option} {_shown(path)}: is an input of this command ({_shown(item)}); it is "
                            "never written over; choose a path outside what is read")
    if st is None:
        return path
    if stat.S_ISLNK(st.st_mode):
        raise UserError(f"{option} {_shown(path)}: is a symbolic link; ctxgauge never writes through one; "
                        "name the file itself")
    if stat.S_ISDIR(st.st_mode):
        raise UserError(f"{option} {_shown(path)}: is a directory; name a file")
    if not stat.S_ISREG(st.st_mode):
        raise UserError(f"{option} {_shown(path)}: is not a regular file; name a file")
    if not force and not is_ctxgauge_output(path):
        raise UserError(f"{option} {_shown(path)}: exists and was not written by ctxgauge; it is left unchanged "
                        "(add --force to replace it, or choose another path)")
    return path


def _real_target(path: Path) -> Path:
    """Where a write to `path` lands: its parent resolved, its own name kept (a link there is refused anyway)."""
    return Path(os.path.realpath(path.parent if str(path.parent) else ".")) / path.name


__all__ = ["ENVIRONMENT_ERRNOS", "EnvironmentProblem", "GENERATOR_MARK", "MARK_LINE", "check_output_target",
           "environment_reason", "is_ctxgauge_output"]
