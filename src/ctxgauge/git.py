"""Read-only access to a git repository through git plumbing: revisions, trees, blobs, history.

Nothing here checks out, writes to or runs anything from the inspected repository. Every git call runs with
the user's and the system's configuration switched off and the settings that change output pinned
(rename detection, quoting, textconv), so the same repository gives the same answers on every machine.
"""

from __future__ import annotations

import hashlib
import os
import queue
import re
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ctxgauge.errors import UserError

# The one git invocation policy. Every git process ctxgauge starts goes through `git_command` and
# `git_env`: the user's and the system's configuration are switched off, output-changing settings are
# pinned, and nothing a repository's own configuration names is ever run or fetched:
# - `protocol.allow=never` and GIT_NO_LAZY_FETCH=1: a partial clone (`--filter=blob:none`) would otherwise
#   fetch a missing blob on `ls-tree --long` or `cat-file`, running the repository's `core.sshCommand` or
#   `remote.*.uploadpack` (both switches: git 2.39 honours the first, newer ones the second).
# - `core.fsmonitor=false`, `core.hooksPath=/dev/null`, `core.pager=cat`, `--no-pager`: programs a
#   repository may name for index reads, hooks and paging.
# - `--no-textconv --no-ext-diff` on every diff (see `_DIFF_SAFE`): textconv and external diff drivers;
#   `cat-file --batch` without `--filters` runs no clean/smudge filter; `log.showSignature=false` keeps
#   `gpg.program` out; aliases cannot shadow the built-in commands called here.
# A user's `diff.renames`, `core.quotepath` would otherwise change which files a commit is said to change.
_PINNED = [
    "--no-pager",
    "-c", "core.quotepath=false",
    "-c", "diff.renames=false",
    "-c", "diff.noprefix=false",
    "-c", "log.showSignature=false",
    "-c", "safe.directory=*",
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.pager=cat",
    "-c", "protocol.allow=never",
]
_DIFF_SAFE = ["--no-textconv", "--no-ext-diff", "--no-color"]

RENAME_THRESHOLD = "-M50%"

# Environment a caller's shell may carry that would point git at other repositories, object stores,
# programs or configuration: removed from every call.
_ENV_DROP = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
    "SSH_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_EDITOR", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT", "GIT_EXEC_PATH", "GIT_TRACE", "GIT_REPLACE_REF_BASE",
)


def git_env() -> dict[str, str]:
    """The environment of every git process ctxgauge starts (see the policy above)."""
    env = {k: v for k, v in os.environ.items() if k not in _ENV_DROP and not k.startswith("GIT_CONFIG_KEY_")
           and not k.startswith("GIT_CONFIG_VALUE_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_LAZY_FETCH="1",
        GIT_NO_REPLACE_OBJECTS="1",  # refs/replace/ would make a blob id name other bytes
        GIT_OPTIONAL_LOCKS="0",  # a reader must not take the index lock
        GIT_PROTOCOL_FROM_USER="0",
        LC_ALL="C",
    )
    return env


def git_command(*args: str) -> list[str]:
    """The argv of one git call under the policy: `git <pinned options> <args>`."""
    return ["git", *_PINNED, *args]


_env = git_env  # the name older code used


def _missing_object_message(stderr: str) -> str | None:
    """The one line to print when git stopped because an object is absent (a partial clone's missing blob:
    ctxgauge never fetches), or None when stderr says something else."""
    m = re.search(r"could not fetch ([0-9a-f]{40,64}) from promisor remote", stderr)
    if m is None:
        m = re.search(r"(?:unable to read|missing (?:blob|tree|object)|bad object) ([0-9a-f]{40,64})", stderr)
        if m is None:
            return None
    return (f"object {m.group(1)} is missing from the repository (a partial or shallow clone? ctxgauge never "
            "fetches: clone it without --filter, or run `git fetch --refetch` yourself)")


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
        raise UserError(f"{_show(dot)}: unreadable .git file") from None
    if not text.startswith("gitdir:"):
        raise UserError(f"{_show(dot)}: a .git file that does not start with 'gitdir:'")
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
        f"{_show(dot)}: names the git directory {_show(target)}, which is neither a worktree nor a submodule of "
        "this checkout; ctxgauge reads nothing outside the repository it is given (pass that repository itself)"
    )


def _config_values(path: Path) -> dict[str, list[str]]:
    """The keys of one git config file, read by git without following its includes (`--no-includes`)."""
    if not path.is_file():
        return {}
    proc = subprocess.run(git_command("config", "-z", "--no-includes", "--file", str(path), "--list"),
                          cwd=path.parent, capture_output=True, env=git_env(), stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise UserError(f"{_show(path)}: git cannot read this config file "
                        f"({proc.stderr.decode('utf-8', 'replace').strip()[:200]})")
    out: dict[str, list[str]] = {}
    for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if item:
            key, _, value = item.partition("\n")
            out.setdefault(key.lower(), []).append(value)
    return out


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
                    f"{_show(cfg)}: includes {values[0]!r} ({key}); ctxgauge reads nothing outside the repository "
                    "it is given: remove the include, or inspect a clone without it"
                )
    alternates = common / "objects" / "info" / "alternates"
    if alternates.is_file():
        lines = [ln for ln in alternates.read_text(encoding="utf-8", errors="replace").splitlines()
                 if ln.strip() and not ln.startswith("#")]
        if lines:
            raise UserError(
                f"{_show(path)}: borrows objects from {lines[0]!r} (objects/info/alternates); ctxgauge reads nothing "
                "outside the repository it is given: run `git repack -a -d` and delete that file, or clone without "
                "--shared/--reference"
            )


def _show(path: Path | str) -> str:
    """A path for a one-line message: control characters (a newline would split the line) escaped."""
    return str(path).encode("unicode_escape", "backslashreplace").decode("ascii") if not str(path).isprintable() \
        else str(path)


class Repo:
    """A git repository opened read-only. Use as a context manager so the blob reader process is closed."""

    def __init__(self, path: str | Path):
        p = Path(path)
        if not p.exists():
            raise UserError(f"{path}: no such file or directory")
        confine(p)
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
        proc = subprocess.run(git_command(*args), cwd=cwd, input=input, capture_output=True, env=git_env(),
                              check=False, stdin=None if input is not None else subprocess.DEVNULL)
        if proc.returncode != 0:
            stderr = proc.stderr.decode("utf-8", "replace")
            missing = _missing_object_message(stderr)
            if missing:
                raise UserError(missing)
            msg = stderr.strip().splitlines()
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
        args = ["log", "-z", f"--format={fmt}", "--name-status", RENAME_THRESHOLD, *_DIFF_SAFE]
        if max_count is not None:
            args.append(f"--max-count={max_count}")
        if since:
            args.append(f"--since={since}")
        args += ["--end-of-options", rev]
        raw = self.run_bytes(args).decode("utf-8", "surrogateescape")
        return _parse_log(raw)

    def changes(self, old: str, new: str) -> list[FileChange]:
        """Name-status diff between two commits (renames at 50%, no copies)."""
        raw = self.run_bytes(["diff-tree", "-r", "-z", "--name-status", RENAME_THRESHOLD, *_DIFF_SAFE,
                              "--end-of-options", old, new])
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


def _read_change(tokens: list[str], i: int, status: str) -> tuple[FileChange, int]:
    """The name-status change whose status token is at `i`, and the index after it (a rename or copy holds
    two paths, old then new)."""
    if status in "RC":
        return FileChange(status, tokens[i + 2], tokens[i + 1]), i + 3
    return FileChange(status, tokens[i + 1]), i + 2


def _parse_changes(tokens: list[str]) -> list[FileChange]:
    out: list[FileChange] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i].lstrip("\n")
        if not tok:
            i += 1
            continue
        change, i = _read_change(tokens, i, tok[0])
        out.append(change)
    return out


_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _parse_log(raw: str) -> list[Commit]:
    """Parse `git log -z --format=%x1e%H%x00%P%x00%an%x00%ae%x00%at%x00%s --name-status`.

    Read token by token rather than split on the record byte: a subject, an author or a path may hold
    `\x1e` (only NUL cannot occur), so each commit takes exactly its six fields, then each change exactly
    its status and one or two paths, and only a token in commit position starts the next commit.
    """
    tokens = raw.split("\0")
    commits: list[Commit] = []
    i = 0
    while i < len(tokens):
        head = tokens[i].lstrip("\n")
        if not head:
            i += 1
            continue
        if not head.startswith("\x1e") or not _SHA.fullmatch(head[1:]) or i + 5 >= len(tokens):
            raise UserError(f"git log printed something unexpected ({head[:40]!r}); is the repository intact?")
        sha, parents, name, email, ts, subject = head[1:], *tokens[i + 1:i + 6]
        i += 6
        changes: list[FileChange] = []
        while i < len(tokens):
            tok = tokens[i].lstrip("\n")
            if tok.startswith("\x1e") and _SHA.fullmatch(tok[1:]):
                break
            if not tok:
                i += 1
                continue
            change, i = _read_change(tokens, i, tok[0])
            changes.append(change)
        commits.append(Commit(sha=sha, parents=tuple(parents.split()), author_name=name, author_email=email,
                              timestamp=int(ts), subject=subject, changes=tuple(changes)))
    return commits


class BlobReader:
    """One long-lived `git cat-file --batch` process.

    Requests are written by a writer thread while the caller reads replies: writing every request before
    reading any reply deadlocks once both pipe buffers are full.
    """

    def __init__(self, git_dir: Path):
        # stderr to a file, not a pipe nobody drains: when cat-file dies on an object it may not fetch, its
        # last line says which object, and that is the error the user sees.
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            git_command("cat-file", "--batch"), cwd=git_dir, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._stderr, env=git_env(),
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
                    self._proc.wait()
                    self._stderr.seek(0)
                    said = self._stderr.read().decode("utf-8", "replace")
                    raise UserError(_missing_object_message(said)
                                    or "git cat-file stopped answering (is the repository readable?)")
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
        self._stderr.close()
