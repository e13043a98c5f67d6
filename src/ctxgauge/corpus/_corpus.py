"""Corpus: the files an engine indexes, read from a directory or from a git tree at any revision.

A corpus is a sorted tuple of `CorpusFile(path, blob, size)`: POSIX paths relative to the source, ordered by
their UTF-8 bytes (never by locale), each with its git blob id, so two sources with the same content have
the same content hash however they were read. Which files are listed, and every filtered file counted by
reason in `summary()`, is `_listing`'s; where their bytes come from is `_readers`'s.

A git corpus reads its tree with `git ls-tree` and contents with one `git cat-file --batch`, without
checking anything out, and exposes the history up to and including its revision, never past it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from ctxgauge.corpus._listing import (BINARY_SNIFF_BYTES, SKIP_REASONS, CorpusFile, empty_skips, find, is_binary,
                                     list_directory, list_entries, may_clash, path_key)
from ctxgauge.corpus._readers import DirReader, GitReader, HeldReader, OverlayReader, Reader
from ctxgauge._io import safe_join
from ctxgauge.errors import UserError
from ctxgauge.git import Commit, Repo, blob_id, changed_in_work_tree, locate

DEFAULT_MAX_BYTES = 1 << 20
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
__all__ = ["BINARY_SNIFF_BYTES", "Change", "Corpus", "CorpusFile", "DEFAULT_MAX_BYTES", "HOLD_LIMIT", "History",
           "SKIP_REASONS", "is_binary", "is_git_source", "open_corpus", "path_key", "repo_name"]


@dataclass(frozen=True)
class Change:
    """One changed path between two corpora, as engines' `update` receives it.

    status: `added`, `modified`, `deleted` or `renamed`; `old_path` is set for renames; `old_blob` is None
    for additions and `new_blob` None for deletions.
    """

    status: str
    path: str
    old_path: str | None = None
    old_blob: str | None = None
    new_blob: str | None = None


class History:
    """Read-only view of a git corpus's past: commits reachable from its revision, newest first."""

    def __init__(self, repo: Repo, rev: str):
        self._repo = repo
        self.rev = rev
        self._commits: list[Commit] | None = None

    def commits(self, limit: int | None = None) -> list[Commit]:
        """Every commit up to and including the corpus revision, with subjects, authors, dates, changes;
        with `limit`, only the `limit` newest of them (what git walks first, so the same list every time)."""
        if self._commits is not None:
            return list(self._commits[:limit] if limit is not None else self._commits)
        if limit is not None:
            return self._repo.log(self.rev, max_count=limit)
        self._commits = self._repo.log(self.rev)
        return list(self._commits)


class Corpus:
    """The files of a source, filtered and sorted, with a reader for their bytes.

    Build one with `Corpus.from_directory`, `Corpus.from_git` or `open_corpus`; derive one with `overlay`, or
    another revision of the same repository with `at`.
    """

    def __init__(
        self,
        *,
        name: str,
        kind: str,
        files: Iterable[CorpusFile],
        skipped: Mapping[str, list[str]],
        reader: "Reader",
        rev: str | None = None,
        history: History | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ):
        ordered = tuple(sorted(files, key=lambda f: path_key(f.path)))
        self._set(name, kind, ordered, {f.path: f for f in ordered},
                  {r: sorted(p, key=path_key) for r, p in skipped.items() if p}, reader, rev, history, max_bytes)

    def _set(self, name, kind, files, by_path, skipped, reader, rev, history, max_bytes) -> None:
        self.name = name
        self.kind = kind
        self.files: tuple[CorpusFile, ...] = files
        self.skipped = skipped
        self.rev = rev
        self.history = history
        self.max_bytes = max_bytes
        self._reader = reader
        self._by_path = by_path
        self._reason_of: dict[str, str] | None = None  # path -> skip reason, made when first needed
        self._origin: tuple | None = None  # (weak ref to the corpus this one was derived from, the changes)
        self.subtree = ""
        """A git corpus of a folder inside a work tree: that folder, relative to the top (POSIX, no slash at
        either end); only files under it are listed, by their paths from the top. "" for the whole tree."""
        self.uncommitted: int | None = None
        """Tracked files under the subtree whose work-tree bytes differ from the committed ones (or that are
        gone), counted by `open_corpus` for a work tree read at HEAD; None when not counted."""

    def _carry(self, new: "Corpus") -> "Corpus":
        new.subtree, new.uncommitted = self.subtree, self.uncommitted
        return new

    @classmethod
    def _of(cls, *, name, kind, files, by_path, skipped, reader, rev, history, max_bytes) -> "Corpus":
        """A corpus from parts already sorted and filtered (`at`): nothing is sorted or indexed again."""
        self = cls.__new__(cls)
        self._set(name, kind, files, by_path, {r: p for r, p in skipped.items() if p}, reader, rev, history,
                  max_bytes)
        return self

    def _reasons(self) -> dict[str, str]:
        if self._reason_of is None:
            self._reason_of = {p: r for r, paths in self.skipped.items() for p in paths}
        return self._reason_of

    # -- construction -----------------------------------------------------------------------------------
    @classmethod
    def from_directory(cls, root: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES, name: str | None = None) -> "Corpus":
        """The files under `root`, walked without following symbolic links; `.git` directories skipped."""
        root = Path(root)
        if not root.is_dir():
            raise UserError(f"{root}: no such directory")
        files, skipped = list_directory(root, max_bytes)
        return cls(name=name or root.resolve().name, kind="directory", files=files, skipped=skipped,
                   reader=DirReader(root), max_bytes=max_bytes)

    @classmethod
    def from_git(cls, repo: Repo, rev: str = "HEAD", *, max_bytes: int = DEFAULT_MAX_BYTES,
                 name: str | None = None, binary_cache: dict[str, bool] | None = None,
                 subtree: str | None = None) -> "Corpus":
        """The tree of commit `rev`, read through git plumbing (nothing is checked out).

        `binary_cache` (blob id -> is binary) lets a caller walking many commits read each blob once.
        `subtree`: only the files under this folder (default: the folder the repository was opened at, so
        `Repo(REPO/src)` reads the subtree `src/` of the committed tree; docs/replay.md, "SOURCE").
        """
        sub = (repo.location.prefix if subtree is None else subtree).strip("/")
        commit = repo.resolve(rev)
        skipped = empty_skips()
        sniffed: dict[str, bytes] = {}
        entries = [e for e in repo.tree(commit) if in_subtree(e.path, sub)]
        files = list_entries(repo, entries, max_bytes, binary_cache, skipped, sniffed)
        out = cls(name=name or repo_name(repo), kind="git", files=files, skipped=skipped,
                  reader=GitReader(repo, sniffed), rev=commit, history=History(repo, commit), max_bytes=max_bytes)
        out.subtree = sub
        return out

    def at(self, rev: str, *, binary_cache: dict[str, bool] | None = None, known_commit: bool = False) -> "Corpus":
        """The corpus of another commit of this git corpus's repository: what `Corpus.from_git(repo, rev)`
        lists, derived from this one by the tree diff between the two commits, so only what changed is
        listed and sniffed (a replay moving from commit to commit then costs the change, not the tree).
        `self.changes_to(result)` is known without comparing every path. ValueError for a corpus that is
        not a plain git tree (a directory, an overlay).

        `known_commit`: `rev` is a full commit id taken from the repository's own history (replay walking
        its log), so it is not resolved again (a git call per commit saved). Any other revision, a full id
        written by a user included, is resolved as `from_git` resolves it: a tree's or a tag's id, or an id
        of no object, would otherwise be diffed as if it were a commit, or fail with another message."""
        if self.kind != "git" or type(self._reader) is not GitReader or self.rev is None:
            raise ValueError("Corpus.at needs a corpus read with Corpus.from_git")
        repo = self._reader.repo
        commit = rev if known_commit and _FULL_SHA.fullmatch(rev) else repo.resolve(rev)
        gone, entries = repo.tree_changes(self.rev, commit)
        if self.subtree:
            gone = [p for p in gone if in_subtree(p, self.subtree)]
            entries = [e for e in entries if in_subtree(e.path, self.subtree)]
        by_path, reasons, files = dict(self._by_path), dict(self._reasons()), list(self.files)
        touched = gone + [e.path for e in entries]
        skips_moved = False
        for path in touched:
            if by_path.pop(path, None) is not None:
                del files[find(files, path)]
            elif reasons.pop(path, None) is not None:
                skips_moved = True
        if self.skipped.get("unsafe-name") or may_clash(files, by_path, entries):
            # A crafted tree (a path twice, or a file and a folder of one name): whether a path clashes is a
            # property of the whole tree (`_listing._without_clashes`), so the whole tree is listed.
            # Git never writes one.
            return Corpus.from_git(repo, commit, max_bytes=self.max_bytes, name=self.name, binary_cache=binary_cache,
                                   subtree=self.subtree)
        skipped = empty_skips()
        sniffed: dict[str, bytes] = {}
        for f in list_entries(repo, entries, self.max_bytes, binary_cache, skipped, sniffed):
            files.insert(find(files, f.path), f)
            by_path[f.path] = f
        for reason, paths in skipped.items():
            reasons.update(dict.fromkeys(paths, reason))
            skips_moved = skips_moved or bool(paths)
        if skips_moved:
            grouped: dict[str, list[str]] = {}
            for path, reason in reasons.items():
                grouped.setdefault(reason, []).append(path)
            skipped = {r: sorted(grouped[r], key=path_key) for r in SKIP_REASONS if r in grouped}
        else:
            skipped = self.skipped
        self._reader.sniffed = sniffed  # the previous listing's blobs were read by now, or never will be
        new = Corpus._of(name=self.name, kind=self.kind, files=tuple(files), by_path=by_path, skipped=skipped,
                         reader=self._reader, rev=commit, history=History(repo, commit), max_bytes=self.max_bytes)
        new._reason_of = reasons
        new.subtree = self.subtree
        new._origin = (weakref.ref(self), _changes(sorted(set(touched), key=path_key), self._by_path, by_path))
        return new

    def prefetch(self, revs: Iterable[str]) -> None:
        """Announce the commits (full ids) `at` will be asked for next, in order, each from the one before
        and the first from this corpus: their tree diffs are then read in batches (`Repo.prefetch_changes`)
        instead of by two git processes each. Nothing for a corpus `at` does not serve."""
        if self.kind != "git" or type(self._reader) is not GitReader or self.rev is None:
            return
        chain = [self.rev, *revs]
        self._reader.repo.prefetch_changes(list(zip(chain, chain[1:])))

    def overlay(self, extra: Mapping[str, bytes]) -> "Corpus":
        """This corpus plus (or with replaced) files given as path -> bytes; the source is not touched."""
        files = {f.path: f for f in self.files}
        for path, data in extra.items():
            files[path] = CorpusFile(path, blob_id(data), len(data))
        return self._carry(Corpus(name=self.name, kind=self.kind, files=files.values(), skipped=self.skipped,
                                  reader=OverlayReader(self._reader, dict(extra)), rev=self.rev,
                                  history=self.history, max_bytes=self.max_bytes))

    def held(self) -> "Corpus":
        """This corpus with every file's bytes read now, in one pass, and served from memory from then on:
        a caller building the same corpus several times (the determinism suite) reads its source once for
        them all. A corpus of more than HOLD_LIMIT bytes is returned as it is (read from its source each time)."""
        if sum(f.size for f in self.files) > HOLD_LIMIT:
            return self
        data = {f.blob: d for f, d in self.iter_bytes()}
        return self._carry(Corpus(name=self.name, kind=self.kind, files=self.files, skipped=self.skipped,
                                  reader=HeldReader(data), rev=self.rev, history=self.history,
                                  max_bytes=self.max_bytes))

    # -- reading ----------------------------------------------------------------------------------------
    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    def __len__(self) -> int:
        return len(self.files)

    def __contains__(self, path: str) -> bool:
        return path in self._by_path

    def get(self, path: str) -> CorpusFile | None:
        return self._by_path.get(path)

    def read(self, path: str) -> bytes:
        """The bytes of an indexed file."""
        f = self._by_path.get(path)
        if f is None:
            raise KeyError(path)
        return self._reader.read(f)

    def text(self, path: str) -> str:
        """An indexed file decoded as UTF-8 (undecodable bytes replaced, so every engine sees the same text)."""
        return self.read(path).decode("utf-8", "replace")

    def iter_bytes(self, files: Iterable[CorpusFile] | None = None) -> Iterator[tuple[CorpusFile, bytes]]:
        """(file, bytes) for the given files (default: all), streamed in one batch for git corpora."""
        return self._reader.read_many(list(self.files if files is None else files))

    def close(self) -> None:
        """End the process the corpus reads through, if any (a git corpus's `git cat-file --batch`, shared
        with the corpora `at`, `overlay` and `held` derived from it). The corpus stays usable: a later read
        starts the process again. A caller holding many corpora closes each when done with it: an open
        one keeps its process alive until the corpus is garbage collected."""
        self._reader.close()

    def content_hash(self) -> str:
        """SHA-256 over the sorted `path\\0blob\\n` lines: equal for equal content however it was read."""
        h = hashlib.sha256()
        for f in self.files:
            h.update(path_key(f.path) + b"\0" + f.blob.encode() + b"\n")
        return h.hexdigest()

    def materialize(self, dest: str | Path) -> Path:
        """Write the indexed files as a plain directory (for external engines that read a directory)."""
        dest = Path(dest)
        for f, data in self.iter_bytes():
            # Every path is checked again here, whatever built the corpus (an overlay adds paths too).
            target = safe_join(dest, f.path, "corpus path")
            try:
                _make_parents(dest, target)
                with open(target, "xb") as fh:  # never through a file or link already there
                    fh.write(data)
            except (FileExistsError, NotADirectoryError):
                raise UserError(f"corpus path {f.path!r} clashes with another path of the corpus (a file and a "
                                "folder of one name, or one path twice); rename one of them") from None
            except OSError as exc:
                if exc.errno != errno.ENAMETOOLONG:
                    raise
                raise UserError(f"corpus path {f.path[:80]!r}...: too long to write as a file here "
                                f"({len(str(target))} characters); the command engine cannot be given this "
                                "corpus as a folder") from None
        return dest

    def require_files(self) -> "Corpus":
        """This corpus, or a UserError saying nothing was indexed and what was skipped: ranking or
        fingerprinting an empty corpus gives identical empty answers that read as a result."""
        if self.files:
            return self
        skipped = ", ".join(f"{len(p)} {r}" for r, p in sorted(self.skipped.items()) if p)
        raise UserError(f"{self.name}: nothing to index: no text file" + (f" (skipped: {skipped})" if skipped else "")
                        + "; point at a directory or revision that holds source files")

    def summary(self) -> dict:
        """What was indexed and what was filtered, by reason: the figures every report shows."""
        return {
            "name": self.name,
            "kind": self.kind,
            "rev": self.rev,
            "files": len(self.files),
            "bytes": sum(f.size for f in self.files),
            "hash": self.content_hash(),
            "max_bytes": self.max_bytes,
            "skipped": {r: len(p) for r, p in sorted(self.skipped.items())},
            # Only when there is something to say, so a whole repository's summary is as it always was.
            **({"subtree": self.subtree} if self.subtree else {}),
            **({"uncommitted": self.uncommitted} if self.uncommitted is not None else {}),
        }

    def source_line(self) -> str:
        """What was measured, in one line (`source_line` of `summary()`)."""
        return source_line(self.summary())

    def changes_to(self, new: "Corpus") -> list[Change]:
        """Path-level changes from this corpus to `new` (added, modified, deleted), sorted by path."""
        origin = new._origin
        if origin is not None and origin[0]() is self:  # `new = self.at(rev)`: the diff already said
            return list(origin[1])
        paths = sorted(set(self._by_path) | set(new._by_path), key=path_key)
        return _changes(paths, self._by_path, new._by_path)


def _make_parents(root: Path, target: Path) -> None:
    """`target.parent.mkdir(parents=True, exist_ok=True)` without recursion (pathlib's recurses once per level:
    a tree 1,500 levels deep raised RecursionError); `root` and any missing folder above it are made too, as
    pathlib made them."""
    missing = []
    d = target.parent
    while not d.is_dir() and d != d.parent:
        missing.append(d)
        d = d.parent
    for d in reversed(missing):
        d.mkdir(exist_ok=True)


def _changes(paths: Iterable[str], old: Mapping[str, CorpusFile], new: Mapping[str, CorpusFile]) -> list[Change]:
    out: list[Change] = []
    for path in paths:
        a, b = old.get(path), new.get(path)
        if a is None and b is not None:
            out.append(Change("added", path, new_blob=b.blob))
        elif b is None and a is not None:
            out.append(Change("deleted", path, old_blob=a.blob))
        elif a is not None and b is not None and a.blob != b.blob:
            out.append(Change("modified", path, old_blob=a.blob, new_blob=b.blob))
    return out


def source_line(summary: Mapping) -> str:
    """What was measured, in one line, from a corpus summary (as recorded): `SOURCE name@rev, subtree src/
    (committed tree; 3 uncommitted changes not measured)`. Every command reading a source prints it."""
    rev = summary.get("rev")
    where = str(summary.get("name")) + (f"@{str(rev)[:10]}" if rev else "")
    if summary.get("kind") != "git":
        return f"SOURCE {where} (a plain folder, read as it is)"
    notes = ["committed tree"]
    n = summary.get("uncommitted")
    if n:
        notes.append(f"{n} uncommitted change{'s' if n != 1 else ''} not measured")
    sub = summary.get("subtree")
    return f"SOURCE {where}" + (f", subtree {sub}/" if sub else "") + f" ({'; '.join(notes)})"


def in_subtree(path: str, subtree: str) -> bool:
    """Whether repository path `path` lies under folder `subtree` ("" holds everything)."""
    return not subtree or path.startswith(subtree + "/")


def repo_name(repo: Repo) -> str:
    """A repository's label: its folder's name without `.git`, or the folder above for a checkout's `.git`
    or a bare mirror's `repo` folder (`owner+name/repo`). Only the name: records hold no paths. Every suite
    names a repository with this one function, so the same clone is one name everywhere (a folder inside a
    work tree is named by its repository, never by the folder)."""
    p = repo.location.top if repo.location.prefix else repo.path.resolve()
    name = p.name[:-4] if p.name.endswith(".git") else p.name
    if name in ("repo", ".git", "") and p.parent.name:
        name = p.parent.name
    return name or "repo"


HOLD_LIMIT = 256 << 20
"""`Corpus.held` keeps at most this many bytes in memory; a larger corpus is read from its source each time."""


def is_git_source(p: Path) -> bool:
    """Whether `open_corpus` reads `p` as a git repository: the locator finds `p` in one (a work tree, a
    folder inside one, which is that repository's subtree, or a bare repository). A redirected or broken
    repository is refused (UserError), never walked past."""
    return locate(p) is not None


def count_uncommitted(repo: Repo, commit: str, subtree: str) -> int:
    """Tracked files under `subtree` whose work-tree bytes are not the blob `commit` holds (or that are gone),
    hashed here, as records/_provenance.py does: no `git status` (which refreshes the index and may run the
    repository's clean filters). Untracked files are not counted."""
    top = repo.location.work_tree
    if top is None:
        return 0
    return sum(1 for _ in changed_in_work_tree(repo, commit, top, lambda path: in_subtree(path, subtree)))


def open_corpus(source: str | Path, rev: str | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES,
                name: str | None = None) -> Corpus:
    """A corpus from a path: a git repository is read at `rev` (default HEAD, the committed tree, so build
    output and untracked files stay out); any other directory is read as it is, and then `rev` is an error.
    """
    p = Path(source)
    if not p.exists():
        raise UserError(f"{source}: no such file or directory")
    if not p.is_dir():
        raise UserError(f"{source}: not a directory (give a directory or a git repository)")
    if is_git_source(p):
        repo = Repo(p)
        corpus = Corpus.from_git(repo, rev or "HEAD", max_bytes=max_bytes, name=name)
        if repo.location.work_tree is not None and corpus.rev == repo.resolve("HEAD"):
            corpus.uncommitted = count_uncommitted(repo, corpus.rev, corpus.subtree)
        return corpus
    if rev is not None:
        raise UserError(f"{source}: --rev needs a git repository, and this directory is not one")
    return Corpus.from_directory(p, max_bytes=max_bytes, name=name)
