"""A bug in ctxgauge, reported: its traceback to a log file in the temporary directory, and the one line
naming that file (exit EXIT_INTERNAL, 70). Standard library only, so the same line is printed when the
command app itself fails to import (a dependency broken under it).

Logs are named `ctxgauge-crash-*.log`; writing one prunes all but the newest KEEP_LOGS, so a bug hit in a
loop (a script, a scheduler retrying) cannot fill the temporary directory.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from pathlib import Path

from ctxgauge.cli._scratch import outer_tempdir
from ctxgauge.cli._text import printable

LOG_PREFIX = "ctxgauge-crash-"
LOG_SUFFIX = ".log"
KEEP_LOGS = 20
"""How many crash logs the temporary directory keeps (the newest, the one just written included)."""


def crash_line(exc: BaseException) -> tuple[str, str | None]:
    """(the one line to print after `error: `, the traceback text when no log file could be written, else None).
    The log holds the version and the traceback only (no argument: one may be a secret); when it cannot be
    written the caller prints the traceback itself, so it is never lost."""
    import ctxgauge

    text = f"ctxgauge {ctxgauge.__version__}, Python {sys.version.split()[0]}\n\n" + "".join(
        traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        log = _write_log(text)
        where, unwritten = f"the traceback is in {log}", None
    except OSError:
        where, unwritten = "the traceback is above", text
    line = (f"internal error: {printable(type(exc).__name__)}: {printable(exc)} (a bug in ctxgauge; "
            f"{printable(where)}; please report it)")
    return line, unwritten


def _write_log(text: str) -> str:
    fd, log = tempfile.mkstemp(prefix=LOG_PREFIX, suffix=LOG_SUFFIX, dir=outer_tempdir())
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    prune_logs(Path(log), keep=KEEP_LOGS)
    return log


def prune_logs(new: Path, keep: int = KEEP_LOGS) -> None:
    """Remove all but the newest `keep` crash logs beside `new`, the one just written, which is always kept
    (whatever the others' times say: a clock set back). Newest by modification time, then name. Only this
    user's logs count (a shared /tmp holds other users' too); one removed meanwhile by another process, or
    one that cannot be removed, is left."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    others = []
    for path in new.parent.glob(f"{LOG_PREFIX}*{LOG_SUFFIX}"):
        try:
            st = path.lstat()
        except OSError:
            continue
        if path.name != new.name and (uid is None or st.st_uid == uid):
            others.append((st.st_mtime_ns, path.name, path))
    for _, _, path in sorted(others, reverse=True)[max(keep - 1, 0):]:
        try:
            path.unlink()
        except OSError:
            continue


def crash_before_app(exc: BaseException) -> None:
    """The command app could not be imported: the crash line on stderr with no Rich, and exit 70."""
    from ctxgauge.errors import EXIT_INTERNAL

    line, unwritten = crash_line(exc)
    if unwritten is not None:
        sys.stderr.write(unwritten)
    sys.stderr.write(f"error: {line}\n")
    sys.stderr.flush()
    raise SystemExit(EXIT_INTERNAL)
