"""Read-only access to a git repository through git plumbing: revisions, trees, blobs, history.

Nothing here checks out, writes to or runs anything from the inspected repository. Every git call runs with
the user's and the system's configuration switched off and the settings that change output pinned
(rename detection, quoting, textconv), so the same repository gives the same answers on every machine.
"""

from __future__ import annotations

import hashlib
import os
import queue
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ctxgauge.errors import UserError

# Settings pinned on every call. A user's `diff.renames`, `core.quotepath` or a textconv driver would
# otherwise change which files a commit is said to change, and so the cases a replay builds.
_PINNED = [
    "-c", "core.quotepath=false",
    "-c", "diff.renames=false",
    "-c", "diff.noprefix=false",
    "-c", "log.showSignature=false",
    "-c", "safe.directory=*",
    "-c", "core.fsmonitor=false",
]

RENAME_THRESHOLD = "-M50%"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",  # a reader must not take the index lock
        LC_ALL="C",
    )
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        env.pop(var, None)
    return env


def blob_id(data: bytes) -> str:
    """The git blob id of `data` (SHA-1 of the `blob <size>\\0` header and the bytes), as `git hash-object`."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


@dataclass(frozen=True)
class TreeEntry:
    """One entry of `git ls-tree -r --long`: mode, object type, object id, size (None for submodules and for
    missing blobs), path."""

    mode: str
    type: str
    oid: str
    size: int | None
    path: str


@dataclass(frozen=True)
class FileChange:
    """One line of a name-status diff: status letter (A, M, D, R, T), path, and the old path of a rename."""

    status: str
    path: str
    old_path: str | None = None


@dataclass(frozen=True)
class Commit:
    """A commit as history shows it. `changes` is the diff against the first parent (empty for merges)."""

    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    timestamp: int
    subject: str
    changes: tuple[FileChange, ...] = field(default=())


class Repo:
    """A git repository opened read-only. Use as a context manager so the blob reader process is closed."""

    def __init__(self, path: str | Path):
        p = Path(path)
        if not p.exists():
            raise UserError(f"{path}: no such file or directory")
        try:
            out = self._run_at(p, ["rev-parse", "--git-dir"]).strip()
        except UserError:
            raise UserError(f"{path}: not a git repository (give a directory without --rev, or a git repository)")
        git_dir = Path(out)
        self.git_dir = git_dir if git_dir.is_absolute() else (p / git_dir).resolve()
        self.path = p
        self._reader: BlobReader | None = None

    # -- plumbing ---------------------------------------------------------------------------------------
    @staticmethod
    def _run_at(cwd: Path, args: list[str], *, input: bytes | None = None) -> str:
        return Repo._run_bytes_at(cwd, args, input=input).decode("utf-8", "surrogateescape")

    @staticmethod
    def _run_bytes_at(cwd: Path, args: list[str], *, input: bytes | None = None) -> bytes:
        proc = subprocess.run(
            ["git", *_PINNED, *args], cwd=cwd, input=input, capture_output=True, env=_env(), check=False
        )
        if proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise UserError(f"git {args[0]} failed in {cwd}: {msg[-1] if msg else 'exit ' + str(proc.returncode)}")
        return proc.stdout

    def run(self, args: list[str]) -> str:
        """Run a git command in the repository and return its standard output as text."""
        return self._run_at(self.git_dir, args)

    def run_bytes(self, args: list[str]) -> bytes:
        return self._run_bytes_at(self.git_dir, args)

    # -- revisions and trees ----------------------------------------------------------------------------
    def resolve(self, rev: str = "HEAD") -> str:
        """The full commit id `rev` names; a clear error when it names nothing."""
        try:
            return self.run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"]).strip()
        except UserError:
            raise UserError(f"{self.path}: no commit named {rev!r} (check the revision with `git log`)") from None

    def tree(self, commit: str) -> list[TreeEntry]:
        """Every entry of the commit's tree, recursively, in git's order (by path bytes)."""
        raw = self.run_bytes(["ls-tree", "-r", "-z", "--long", "--full-tree", commit])
        entries = []
        for rec in raw.split(b"\0"):
            if not rec:
                continue
            meta, path = rec.split(b"\t", 1)
            mode, typ, oid, size = meta.split()
            entries.append(
                TreeEntry(
                    mode.decode(), typ.decode(), oid.decode(),
                    # `-` for a submodule; `BAD` when the blob is missing (a snapshot without some objects)
                    None if size in (b"-", b"BAD") else int(size), path.decode("utf-8", "surrogateescape"),
                )
            )
        return entries

    def rev_list(self, rev: str) -> list[str]:
        """Every ancestor of `rev` (itself included), newest first, as `git rev-list` orders them."""
        return self.run(["rev-list", rev]).split()

    def log(self, rev: str, *, max_count: int | None = None, since: str | None = None) -> list[Commit]:
        """Commits reachable from `rev`, newest first (rev-list order), each with its name-status diff.

        Renames are detected at 50% similarity, copies never; merges carry no changes.
        """
        fmt = "%x1e%H%x00%P%x00%an%x00%ae%x00%at%x00%s"
        # No ordering flag: `git log` then walks in `git rev-list REV` order, which replay promises.
        args = ["log", "-z", f"--format={fmt}", "--name-status", RENAME_THRESHOLD, "--no-textconv",
                "--no-ext-diff", "--no-color"]
        if max_count is not None:
            args.append(f"--max-count={max_count}")
        if since:
            args.append(f"--since={since}")
        args += ["--end-of-options", rev]
        raw = self.run_bytes(args).decode("utf-8", "surrogateescape")
        return [c for c in (_parse_log_record(r) for r in raw.split("\x1e")) if c is not None]

    def changes(self, old: str, new: str) -> list[FileChange]:
        """Name-status diff between two commits (renames at 50%, no copies)."""
        raw = self.run_bytes(["diff-tree", "-r", "-z", "--name-status", RENAME_THRESHOLD, "--no-textconv",
                              "--no-ext-diff", old, new])
        return _parse_changes(raw.decode("utf-8", "surrogateescape").split("\0"))

    # -- blobs -------------------------------------------------------------------------------------------
    @property
    def reader(self) -> "BlobReader":
        if self._reader is None:
            self._reader = BlobReader(self.git_dir)
        return self._reader

    def read_blob(self, oid: str) -> bytes | None:
        """The bytes of one blob, or None when the object is missing from the repository."""
        return self.reader.read(oid)

    def read_blobs(self, oids: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """Stream many blobs through the one long-lived `git cat-file --batch` process."""
        return self.reader.read_many(oids)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> "Repo":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _parse_changes(tokens: list[str]) -> list[FileChange]:
    out: list[FileChange] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i].lstrip("\n")
        if not tok:
            i += 1
            continue
        status = tok[0]
        if status in "RC":
            out.append(FileChange(status, tokens[i + 2], tokens[i + 1]))
            i += 3
        else:
            out.append(FileChange(status, tokens[i + 1]))
            i += 2
    return out


def _parse_log_record(rec: str) -> Commit | None:
    if not rec:
        return None
    parts = rec.split("\0")
    sha, parents, name, email, ts, subject = parts[:6]
    return Commit(
        sha=sha, parents=tuple(parents.split()), author_name=name, author_email=email,
        timestamp=int(ts), subject=subject, changes=tuple(_parse_changes(parts[6:])),
    )


class BlobReader:
    """One long-lived `git cat-file --batch` process.

    Requests are written by a writer thread while the caller reads replies: writing every request before
    reading any reply deadlocks once both pipe buffers are full.
    """

    def __init__(self, git_dir: Path):
        self._proc = subprocess.Popen(
            ["git", *_PINNED, "cat-file", "--batch"], cwd=git_dir, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env(),
        )
        self._lock = threading.Lock()

    def read(self, oid: str) -> bytes | None:
        for _, data in self.read_many([oid]):
            return data
        return None

    def read_many(self, oids: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        oids = list(oids)
        if not oids:
            return
        with self._lock:
            stdin, stdout = self._proc.stdin, self._proc.stdout
            assert stdin is not None and stdout is not None
            errors: queue.Queue[BaseException] = queue.Queue()

            def write() -> None:
                try:
                    for oid in oids:
                        stdin.write(oid.encode() + b"\n")
                    stdin.flush()
                except BaseException as exc:  # surfaced to the reader below
                    errors.put(exc)

            def reply() -> bytes | None:
                header = stdout.readline()
                if not header:
                    raise UserError("git cat-file stopped answering (is the repository readable?)")
                fields = header.split()
                if len(fields) >= 2 and fields[1] == b"missing":
                    return None
                data = stdout.read(int(fields[2]))
                stdout.read(1)  # the newline after every object
                return data

            writer = threading.Thread(target=write, daemon=True)
            writer.start()
            done = 0
            try:
                for oid in oids:
                    data = reply()
                    done += 1
                    yield oid, data
            finally:
                # A caller that stops early must not leave replies in the pipe for the next request.
                for _ in range(done, len(oids)):
                    reply()
                writer.join()
            if not errors.empty():
                raise errors.get()

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.close()
            except OSError:
                pass
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
