"""Atomic, canonical file writes: a reader never sees half a file, and equal data gives equal bytes."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from ctxgauge._killpoints import checkpoint


def canonical_json(obj: Any, *, indent: int | None = None) -> str:
    """JSON with sorted keys and no ASCII escaping: the same object always serialises to the same bytes."""
    if indent is None:
        return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=indent, allow_nan=False)


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write `data` so a reader sees the old file or the new one, never half of one; returns the path.

    The bytes go to a uniquely named temporary file in the same directory (os.replace is atomic only within
    one file system), are synced, then renamed over the target. O_EXCL never follows or reuses a file someone
    else placed at the temporary name; mode 0o666 lets the umask decide, as for any file a user writes
    (mkstemp's 0o600 would leave records unreadable to others).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            checkpoint(f"fsync-before/{path.name}")
            os.fsync(handle.fileno())
            checkpoint(f"fsync-after/{path.name}")
        os.replace(tmp, path)
        checkpoint(f"rename-after/{path.name}")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | Path, obj: Any, *, indent: int | None = 2) -> None:
    """Canonical JSON (sorted keys), newline-terminated, written atomically."""
    write_text_atomic(path, canonical_json(obj, indent=indent) + "\n")


def read_json(path: str | Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
