"""One writer per run directory: a kernel lock on `<dir>/.lock`, held for the run's life.

Two `ctxgauge replay --out X` started together used to both record into X: units.jsonl held both runs'
lines interleaved under a run.json naming one engine. Every command that writes a run directory (replay,
cases, determinism, qa run and adjudicate, demo; `replay --repos` also locks its folder) now takes
`flock(LOCK_EX | LOCK_NB)` on `.lock` before it writes anything else there, and keeps the descriptor open
until the run ends. The kernel drops the lock when the process dies however it dies (SIGKILL included),
so a killed run leaves no stale lock to clean up: `--resume` simply takes it again.

The holder writes its pid into the file after locking, so a refused writer can name it:
`X: another ctxgauge (pid N) is writing this run` (exit 2). The file is never part of a record: dot files
are not hashed into run.json's `files` (`hash_files`), hence never exported, and a directory holding only
it counts as empty. Readers never create it: `check_not_written` only looks at a lock that exists.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from ctxgauge.errors import UserError

LOCK_FILE = ".lock"
"""The lock file's name inside a run directory (a dot file: never hashed, never exported)."""
_PID_WAIT = 0.5
"""Seconds a refused writer waits for the holder's pid to land (it is written just after the lock)."""


def _plain(path: Path) -> str:
    text = str(path)
    return text if text.isprintable() else text.encode("unicode_escape", "backslashreplace").decode("ascii")


def _holder(fd: int) -> str:
    """The pid the holder wrote, or `unknown` (it has the lock but has not written it yet, or wrote junk)."""
    deadline = time.monotonic() + _PID_WAIT
    while True:
        try:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            text = ""
        if text.isdigit():
            return text
        if time.monotonic() >= deadline:
            return "unknown"
        time.sleep(0.02)


def _busy(path: Path, fd: int) -> UserError:
    return UserError(f"{_plain(path)}: another ctxgauge (pid {_holder(fd)}) is writing this run; wait for it "
                     "to end, or choose another --out")


class RunLock:
    """The held lock of one directory; `release()` (or leaving a `with` block) ends it, and so does the
    process's death."""

    def __init__(self, path: Path, fd: int):
        self.path = path
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Drop the lock (closing the descriptor releases it); the file stays, holding a stale pid that no
        lock backs. Idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def lock_dir(path: str | Path) -> RunLock:
    """Take the writer's lock of directory `path` (which must exist), or refuse with one line (UserError)
    naming the pid of the process that holds it."""
    path = Path(path)
    try:
        # O_NOFOLLOW: a link planted as .lock must not make us create or truncate a file elsewhere.
        fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise UserError(f"{_plain(path)}: cannot lock the run directory ({exc.strerror or exc}); choose "
                        "another --out") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        try:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise _busy(path, fd) from None
            raise UserError(f"{_plain(path)}: cannot lock the run directory ({exc.strerror or exc}); choose "
                            "another --out") from None
        finally:
            os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except OSError:
        pass  # the lock holds without the pid; a refused writer then says `pid unknown`
    return RunLock(path, fd)


def check_not_written(path: str | Path) -> None:
    """Refuse (UserError, the writer's line) when another process holds `path`'s writer lock. Creates
    nothing: a directory without `.lock` was never written under a lock, or by nobody now."""
    path = Path(path)
    try:
        fd = os.open(path / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise _busy(path, fd) from None
            return
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def is_empty_dir(path: Path, ignore: tuple[str, ...] = ()) -> bool:
    """Whether directory `path` holds nothing but its lock file (and names in `ignore`)."""
    return all(p.name == LOCK_FILE or p.name in ignore for p in path.iterdir())
