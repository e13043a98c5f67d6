"""A repository opened read-only: revisions, trees, history and blobs, each through the invocation policy."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from ctxgauge.errors import UserError
from ctxgauge.git._blobs import BlobReader
from ctxgauge.git._confine import confine
from ctxgauge.git._log import LOG_FORMAT, Commit, FileChange, parse_changes, parse_log
from ctxgauge.git._policy import DIFF_SAFE, RENAME_THRESHOLD, run_git


CHANGES_BATCH = 256
"""Tree diffs `Repo.prefetch_changes` reads with one `git diff-tree --stdin`."""
_FULL_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _split_headers(raw: bytes, heads: list[str]) -> list[bytes]:
    """`git diff-tree --stdin -z` output cut into one block per commit asked (each after its `ID\\0`
    header, in order): a header is the token where a record (`:meta`, then a path) would start."""
    tokens = raw.split(b"\0")
    blocks: list[list[bytes]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i].lstrip(b"\n")
        if tok.startswith(b":"):
            if not blocks:
                raise UserError("git diff-tree --stdin printed a change before any commit")
            blocks[-1] += [tok, tokens[i + 1]]
            i += 2
        else:
            if tok:
                blocks.append([])
                if len(blocks) > len(heads) or tok.decode() != heads[len(blocks) - 1]:
                    raise UserError(f"git diff-tree --stdin answered {tok[:64]!r} out of turn")
            i += 1
    if len(blocks) != len(heads):
        raise UserError(f"git diff-tree --stdin answered {len(blocks)} of {len(heads)} diffs")
    return [b"\0".join(b) + b"\0" if b else b"" for b in blocks]


@dataclass(frozen=True)
class TreeEntry:
    """One entry of `git ls-tree -r --long`: mode, object type, object id, size (None for submodules and for
    missing blobs), path."""

    mode: str
    type: str
    oid: str
    size: int | None
    path: str


class Repo:
    """A git repository opened read-only. Use as a context manager so the blob reader process is closed."""

    def __init__(self, path: str | Path):
        p = Path(path)
        if not p.exists():
            raise UserError(f"{path}: no such file or directory")
        location = confine(p)
        if location is None:
            raise UserError(f"{path}: not a git repository (this needs its history: give a git clone, work tree "
                            "or bare repository)")
        self.location = location
        """Where the locator found the repository; every git call here runs with its GIT_DIR pinned. A folder
        inside a work tree opens that whole repository (`location.prefix` says which folder was named)."""
        self.git_dir = location.git_dir
        self.path = p
        self._reader: BlobReader | None = None
        self._plan: list[tuple[str, str]] = []  # tree diffs announced by prefetch_changes, in order
        self._planned: dict[tuple[str, str], int] = {}  # each one not yet asked for -> its place in _plan
        self._changes: dict[tuple[str, str], tuple[list[str], list[TreeEntry]]] = {}  # read ahead, not asked

    def __reduce__(self) -> tuple:
        # Sent to a worker process (a git corpus's history goes with the corpus): the worker opens the
        # repository itself; the blob reader process and what was read ahead stay this process's own.
        return (Repo, (self.path,))

    # -- plumbing ---------------------------------------------------------------------------------------
    def run(self, args: list[str]) -> str:
        """Run a git command in the repository and return its standard output as text."""
        return self.run_bytes(args).decode("utf-8", "surrogateescape")

    def run_bytes(self, args: list[str], *, input: bytes | None = None) -> bytes:
        """Run a git command in the repository (`input` on its stdin) and return its standard output."""
        return run_git(self.git_dir, args, input=input, pinned=self.location.env())

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

    def tree_changes(self, old: str, new: str) -> tuple[list[str], list[TreeEntry]]:
        """What differs between two commits' trees, recursively: the paths `new` no longer has, and `new`'s
        entries at every path added or changed, as `tree(new)` lists them (sizes included).

        No rename detection: a moved file is a path gone and an entry added, as two listings would show it.
        Two git calls whatever the size of the trees (the diff, then the sizes of the new blobs), so a caller
        walking many commits lists each commit by what changed instead of by the whole tree; fewer still
        for the pairs announced by `prefetch_changes`."""
        pair = (old, new)
        got = self._changes.pop(pair, None)
        if got is None and pair in self._planned:
            at = self._planned[pair]
            batch = [p for p in self._plan[at:at + CHANGES_BATCH] if p not in self._changes]
            try:
                self._read_changes(batch)
            except UserError:  # an object missing somewhere in the batch: each pair is read alone when asked
                for p in batch:
                    self._planned.pop(p, None)
            got = self._changes.pop(pair, None)
        if got is None:
            got = self._read_changes([pair])[pair]
        self._planned.pop(pair, None)
        return got

    def prefetch_changes(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Announce the `tree_changes(old, new)` a caller walking many commits will ask for, in order: they
        are then read CHANGES_BATCH at a time, each batch by one `git diff-tree --stdin` and one `cat-file
        --batch-check` for its new blobs' sizes, not two git processes per pair. Only full commit ids are
        taken (a commit's `--stdin` line names commits; anything else is read pair by pair as before).
        Replaces the previous announcement."""
        self._plan = [(a, b) for a, b in pairs if _FULL_ID.fullmatch(a) and _FULL_ID.fullmatch(b)]
        self._planned = {p: i for i, p in reversed(list(enumerate(self._plan)))}
        self._changes = {}

    def _read_changes(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[list[str], list[TreeEntry]]]:
        """`tree_changes` of each pair, read together (kept in `_changes` when more than one)."""
        if len(pairs) == 1:
            old, new = pairs[0]
            raw = self.run_bytes(["diff-tree", "-r", "-z", "--raw", "--no-renames", *DIFF_SAFE, "--end-of-options",
                                  old, new])
            blocks = [raw]
        else:
            # `NEW OLD` lines: NEW diffed against OLD as its one parent; each diff after a `NEW\0` header
            # (--always: printed for an empty diff too), in the order asked.
            raw = self.run_bytes(["diff-tree", "--stdin", "--always", "-r", "-z", "--raw", "--no-renames",
                                  *DIFF_SAFE], input=b"".join(f"{new} {old}\n".encode() for old, new in pairs))
            blocks = _split_headers(raw, [new for _, new in pairs])
        parsed = []
        for block in blocks:
            tokens = block.split(b"\0")
            gone: list[str] = []
            changed: list[tuple[str, str, str]] = []  # (new mode, new oid, path)
            for i in range(0, len(tokens) - 1, 2):
                meta, path = tokens[i].lstrip(b"\n"), tokens[i + 1].decode("utf-8", "surrogateescape")
                if not meta:
                    break
                _, new_mode, _, new_oid, status = meta[1:].decode().split()
                if status == "D":
                    gone.append(path)
                else:
                    changed.append((new_mode, new_oid, path))
            parsed.append((gone, changed))
        blobs = sorted({oid for _, changed in parsed for mode, oid, _ in changed if mode != "160000"})
        sizes: dict[str, int | None] = {}
        if blobs:
            out = self.run_bytes(["cat-file", "--batch-check"], input=b"".join(o.encode() + b"\n" for o in blobs))
            for line in out.decode().splitlines():
                fields = line.split()
                # `OID missing` for an absent blob: None, as `ls-tree --long` prints BAD for it
                sizes[fields[0]] = int(fields[2]) if len(fields) == 3 and fields[2].isdigit() else None
        result = {}
        for pair, (gone, changed) in zip(pairs, parsed):
            result[pair] = (gone, [TreeEntry(mode, "commit" if mode == "160000" else "blob", oid,
                                             None if mode == "160000" else sizes.get(oid), path)
                                   for mode, oid, path in changed])
        if len(pairs) > 1:
            self._changes.update(result)
        return result

    def commit_times(self, revs: Iterable[str]) -> dict[str, tuple[str, int] | None]:
        """Each revision's commit id and committer time (seconds since the epoch, as the commit records it),
        or None when it names no commit; one `git cat-file --batch` for them all (a revision is read from
        stdin, never as an option)."""
        revs = list(dict.fromkeys(revs))
        out: dict[str, tuple[str, int] | None] = dict.fromkeys(revs)
        usable = [r for r in revs if r and "\n" not in r and not r.isspace()]
        if not usable:
            return out
        raw = self.run_bytes(["cat-file", "--batch"], input=b"".join(r.encode("utf-8", "surrogateescape")
                                                                      + b"^{commit}\n" for r in usable))
        at = 0
        for rev in usable:
            end = raw.index(b"\n", at)
            fields = raw[at:end].split()
            at = end + 1
            if len(fields) != 3 or fields[1] != b"commit":  # `REV^{commit} missing` (or ambiguous)
                continue
            size = int(fields[2])
            body, at = raw[at:at + size], at + size + 1
            for line in body.split(b"\n"):
                if not line:
                    break  # the headers end at the first blank line
                if line.startswith(b"committer "):
                    stamp = line.rsplit(b" ", 2)[-2]
                    if stamp.isdigit():
                        out[rev] = (fields[0].decode(), int(stamp))
                    break
        return out

    def rev_list(self, rev: str) -> list[str]:
        """Every ancestor of `rev` (itself included), newest first, as `git rev-list` orders them."""
        return self.run(["rev-list", rev]).split()

    def log(self, rev: str, *, max_count: int | None = None, since: str | None = None) -> list[Commit]:
        """Commits reachable from `rev`, newest first (rev-list order), each with its name-status diff.

        Renames are detected at 50% similarity, copies never; merges carry no changes.
        """
        # No ordering flag: `git log` then walks in `git rev-list REV` order, which replay promises.
        args = ["log", "-z", f"--format={LOG_FORMAT}", "--name-status", RENAME_THRESHOLD, *DIFF_SAFE]
        if max_count is not None:
            args.append(f"--max-count={max_count}")
        if since:
            args.append(f"--since={since}")
        args += ["--end-of-options", rev]
        return parse_log(self.run(args))

    def changes(self, old: str, new: str) -> list[FileChange]:
        """Name-status diff between two commits (renames at 50%, no copies)."""
        raw = self.run(["diff-tree", "-r", "-z", "--name-status", RENAME_THRESHOLD, *DIFF_SAFE,
                        "--end-of-options", old, new])
        return parse_changes(raw.split("\0"))

    # -- blobs -------------------------------------------------------------------------------------------
    @property
    def reader(self) -> BlobReader:
        """The repository's one `git cat-file --batch` process, started on first use."""
        if self._reader is None:
            self._reader = BlobReader(self.git_dir, pinned=self.location.env())
        return self._reader

    def read_blob(self, oid: str) -> bytes | None:
        """The bytes of one blob, or None when the object is missing from the repository."""
        return self.reader.read(oid)

    def read_blobs(self, oids: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """Stream many blobs through the one long-lived `git cat-file --batch` process."""
        return self.reader.read_many(oids)

    def close(self) -> None:
        """Stop the blob reader process, if one was started."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> "Repo":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
