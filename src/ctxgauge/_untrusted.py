"""Opening files ctxgauge did not write: no symbolic link followed, no FIFO or device waited on, no file read
past a size limit named here.

A FIFO opened for reading blocks until a writer appears (forever, when nobody writes), a link can name any
file on the machine, and `/dev/zero` never ends: every file found inside a repository or a folder ctxgauge
walks (a `.git/HEAD`, `.git/config`, a gitfile, `commondir`) is opened by `read_untrusted`, which opens it
`O_NOFOLLOW | O_NONBLOCK`, checks the open descriptor is a regular file (fstat, so no swap between check
and read), and reads at most the file's limit.

The limits, in one place (docs/security.md lists the same values):
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ctxgauge.errors import UserError

GIT_SMALL_FILE_LIMIT = 64 << 10
"""A git file ctxgauge reads itself: `HEAD`, a `.git` file (gitfile), `commondir`, a worktree's `gitdir`
backlink, `objects/info/alternates`. Git writes each as one short line."""

GIT_CONFIG_LIMIT = 1 << 20
"""A repository's `config` or `config.worktree`, before git is asked to parse it."""

INPUT_FILE_LIMIT = 1 << 30
"""A file the user names on the command line (a case file, a battery, a fingerprint, a `--repos` file, a
SWE-bench or TREC file): read whole into memory, so bounded; the largest public SWE-bench file is ~100 MB."""

JSON_DEPTH_LIMIT = 100
"""Deepest nesting of lists and objects read from a JSON or YAML document ctxgauge did not write (an input
file, a harness's or engine's answer): deeper ones are refused with one line, where the parser, a comparison
or the writer would otherwise raise RecursionError (no ctxgauge file nests past ~10)."""

INTEGER_DIGITS_LIMIT = 4300
"""Digits in an integer read from input (a hunk header's line number, an anchor's line): Python refuses to
convert longer ones (CVE-2020-10735); ctxgauge says so in one line instead of a traceback."""


def _shown(path: str | Path) -> str:
    text = str(path)
    return text if text.isprintable() else text.encode("unicode_escape", "backslashreplace").decode("ascii")


def kind_of(mode: int) -> str:
    """What a file of this mode is, in words (for the one line of a refusal)."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "not a regular file"


def check_regular(path: str | Path, what: str) -> os.stat_result | None:
    """The lstat of `path` when it is a regular file, None when it does not exist; any other kind (a link, a
    FIFO, a device, a directory) is a UserError naming it. For files git itself will open: checked here
    first, so git never blocks on a FIFO or follows a link out of the repository."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UserError(f"{what} {_shown(path)}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise UserError(f"{what} {_shown(path)}: is {kind_of(st.st_mode)}, not a regular file; ctxgauge reads "
                        "nothing it would wait on or that leads elsewhere")
    return st


class Refused(Exception):
    """Why `open_regular` or `read_regular` would not give a file's bytes; each caller words it for its reader.

    `kind`: "missing", "link" (the path is a symbolic link), "directory", "special" (a FIFO, socket or
    device: `mode` says which), "too-large" (`size` bytes at open), "grew" (past the limit while read) or
    "unreadable" (`reason`: the system's words)."""

    def __init__(self, kind: str, *, reason: str = "", mode: int = 0, size: int = 0):
        super().__init__(kind)
        self.kind, self.reason, self.mode, self.size = kind, reason, mode, size


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_regular(path: str | Path, limit: int) -> int:
    """A descriptor of `path`, opened `O_NOFOLLOW | O_NONBLOCK` (a link is refused, a FIFO does not block
    the open), whose fstat is a regular file of at most `limit` bytes (no swap between check and read);
    otherwise `Refused`. The caller closes it. The one open of every file ctxgauge did not write."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise Refused("missing", reason="No such file or directory") from None
    except IsADirectoryError:
        raise Refused("directory", mode=stat.S_IFDIR) from None
    except OSError as exc:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = 0
        raise Refused("link" if stat.S_ISLNK(mode) else "unreadable", reason=str(exc.strerror or exc),
                      mode=mode) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise Refused("directory", mode=st.st_mode)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("special", mode=st.st_mode)
        if st.st_size > limit:
            raise Refused("too-large", size=st.st_size)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str | Path, limit: int, chunk: int = 1 << 20) -> bytes:
    """The bytes of `path` by `open_regular`'s rules, never more than `limit` even if it grows while read."""
    fd = open_regular(path, limit)
    try:
        chunks: list[bytes] = []
        total = 0
        while True:
            try:
                piece = os.read(fd, min(chunk, limit + 1 - total))
            except OSError as exc:
                raise Refused("unreadable", reason=str(exc.strerror or exc)) from None
            if not piece:
                return b"".join(chunks)
            chunks.append(piece)
            total += len(piece)
            if total > limit:  # grew since fstat
                raise Refused("grew")
    finally:
        os.close(fd)


def read_untrusted(path: str | Path, limit: int, what: str) -> bytes | None:
    """The bytes of a file ctxgauge did not write, or None when it does not exist: `read_regular`, any
    refusal a UserError of one line (`<what> <path>: ...`)."""
    try:
        return read_regular(path, limit, chunk=1 << 16)
    except Refused as r:
        if r.kind == "missing":
            return None
        shown = f"{what} {_shown(path)}"
        if r.kind == "link":
            raise UserError(f"{shown}: is a symbolic link; ctxgauge follows no link out of what it reads") from None
        if r.kind in ("directory", "special"):
            raise UserError(f"{shown}: is {kind_of(r.mode)}, not a regular file; ctxgauge reads nothing it would "
                            "wait on") from None
        if r.kind == "too-large":
            raise UserError(f"{shown}: {r.size} bytes, more than the {limit} this file may hold") from None
        if r.kind == "grew":
            raise UserError(f"{shown}: more than the {limit} bytes this file may hold") from None
        raise UserError(f"{shown}: cannot be read ({r.reason})") from None


def parse_int(text: str | bytes, what: str) -> int:
    """An integer from input text, or a UserError when it has more than INTEGER_DIGITS_LIMIT digits (or is no
    integer at all): `int()` would raise ValueError on the former, naming an interpreter limit."""
    raw = text.decode("ascii", "replace") if isinstance(text, bytes) else text
    digits = raw.strip().lstrip("+-")
    if len(digits) > INTEGER_DIGITS_LIMIT:
        raise UserError(f"{what}: an integer of {len(digits)} digits (at most {INTEGER_DIGITS_LIMIT} are read)")
    try:
        return int(raw)
    except ValueError:
        raise UserError(f"{what}: {raw[:40]!r} is not an integer") from None


def walk_tree(root: str | Path):
    """`os.walk(root, followlinks=False)` (top-down, the same triples, `dirnames` prunable in place) without
    recursion: a tree 1,000 levels deep is walked, where os.walk before Python 3.12 recurses once per level
    and raises RecursionError. Directories that cannot be listed are skipped, as os.walk skips them."""
    stack = [os.fspath(root)]
    while stack:
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        dirs, files = [], []
        for e in entries:
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(e.name)
        # os.walk lists a symlink to a directory among dirnames (not followed); keep that
        for name in list(files):
            if os.path.isdir(os.path.join(top, name)) and os.path.islink(os.path.join(top, name)):
                files.remove(name)
                dirs.append(name)
        yield top, dirs, files
        stack.extend(os.path.join(top, d) for d in reversed(dirs) if not os.path.islink(os.path.join(top, d)))
