"""Files in and out: atomic, canonical writes (a reader never sees half a file, equal data gives equal bytes),
the one rule for names that become paths, and the one reader of JSON and YAML input with its user errors."""

from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path
from typing import Any, Iterable

from ctxgauge.errors import UserError

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


# -- names that become paths --------------------------------------------------------------------------------
# One rule for every writer that turns a name it did not choose (a tree entry of an inspected repository, a
# question, case, run, engine or battery id read from an input file) into a path: a name may not climb out
# (`..`), vanish (empty, `.`), reach into git's own directory (`.git` in any case: case-insensitive file
# systems treat `.GIT` as `.git`), or hold a separator or byte some file system reads as structure
# (`\` on Windows, NUL, control characters, which also split the one-line error a user sees).
_UNSAFE_CHARS = re.compile(r"[\\\x00-\x1f\x7f]")


def unsafe_name_reason(name: str) -> str | None:
    """Why `name` may not be one path component, or None when it may (see the rule above)."""
    if name in ("", ".", ".."):
        return f"the name {name!r} is not a file name"
    if name.casefold() == ".git":
        return f"{name!r} is git's own directory"
    if "/" in name:
        return f"{name!r} holds a '/'"
    bad = _UNSAFE_CHARS.search(name)
    if bad:
        return f"{name!r} holds the character {bad.group()!r}"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in name):
        return f"{name!r} holds bytes that are not UTF-8"
    return None


def safe_relpath(path: str, what: str = "path") -> str:
    """`path` (POSIX, relative) when every component is a safe name; a UserError naming the bad component."""
    if path.startswith("/"):
        raise UserError(f"{what} {path!r} is absolute; only relative paths are written")
    for part in path.split("/"):
        reason = unsafe_name_reason(part)
        if reason:
            raise UserError(f"{what} {path!r} refused: {reason}")
    return path


def safe_join(root: str | Path, path: str, what: str = "path") -> Path:
    """`root / path` for a relative POSIX `path` that cannot leave `root` (checked by `safe_relpath`)."""
    return Path(root).joinpath(*safe_relpath(path, what).split("/"))


def safe_file_names(names: Iterable[str], what: str) -> dict[str, str]:
    """A file name for each of `names` (ids read from input), unchanged when already safe and plain,
    otherwise made safe (every character outside letters, digits, `-`, `_`, `.` and `@` becomes `_`, a leading
    dot too). Two names that come out the same are refused, never written over each other."""
    out: dict[str, str] = {}
    taken: dict[str, str] = {}
    for name in names:
        if name in out:
            continue
        made = re.sub(r"[^\w.@-]|^\.", "_", name, flags=re.ASCII) or "_"
        other = taken.get(made.casefold())
        if other is not None:
            raise UserError(f"{what}s {other!r} and {name!r} both become the file name {made!r}; rename one of them")
        taken[made.casefold()] = name
        out[name] = made
    return out
