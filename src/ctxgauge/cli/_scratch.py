"""One temporary directory per ctxgauge process, named by its pid, so a run killed with SIGKILL (nothing
can catch it) leaves its scratch where the next command finds and removes it.

`main` makes `ctxgauge-run-<pid>-<random>` in the temporary directory and points `tempfile` and TMPDIR at
it for the whole command: every temporary directory of the run (a suite's indexes, an engine's corpus copy,
spawned workers', engine processes') lies inside, and the whole is removed when the command ends however it
ends short of SIGKILL. Before that, each `ctxgauge-run-<pid>-*` of this user whose pid no longer runs is
removed: what a SIGKILLed run left (a cases run's indexes: hundreds of MB). A live pid is never swept, even a
reused one; a directory whose name does not parse is never touched. Crash logs go to the temporary directory
itself (`outer_tempdir`), never inside, so they outlive the command that wrote them.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "ctxgauge-run-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)-[A-Za-z0-9_]+")
_outer: str | None = None


def outer_tempdir() -> str:
    """The temporary directory outside this process's own (where crash logs go)."""
    return _outer or tempfile.gettempdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it runs, as another user
        return True
    return True


def sweep_stale(where: Path) -> list[Path]:
    """Remove this user's `ctxgauge-run-<pid>-*` directories in `where` whose pid no longer runs; return them."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    swept = []
    for path in sorted(where.glob(f"{PREFIX}*")):
        match = _NAME.fullmatch(path.name)
        if match is None or int(match.group(1)) == os.getpid():
            continue
        try:
            st = path.lstat()
        except OSError:
            continue
        if not path.is_dir() or path.is_symlink() or (uid is not None and st.st_uid != uid):
            continue
        if not _alive(int(match.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            swept.append(path)
    return swept


@contextmanager
def process_scratch() -> Iterator[Path | None]:
    """This process's own temporary directory for the block (None when none can be made: the temporary
    directory is then used as it is), stale ones swept first."""
    global _outer
    outer = tempfile.gettempdir()
    try:
        sweep_stale(Path(outer))
        mine = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=outer))
    except OSError:
        yield None
        return
    # Process-wide on purpose: this is the process's entry point, and the choice must reach every library
    # that asks tempfile, and (through TMPDIR) every worker and engine process the command starts.
    saved = tempfile.tempdir, os.environ.get("TMPDIR")
    _outer, tempfile.tempdir, os.environ["TMPDIR"] = outer, str(mine), str(mine)
    try:
        yield mine
    finally:
        tempfile.tempdir = saved[0]
        if saved[1] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[1]
        _outer = None
        shutil.rmtree(mine, ignore_errors=True)
