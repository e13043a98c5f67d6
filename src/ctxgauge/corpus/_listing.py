"""What a corpus indexes of a source: the files it lists, and every other entry skipped under one reason.

A listed file is a `CorpusFile(path, blob, size)`: a POSIX path relative to the source, ordered by its UTF-8
bytes (`path_key`, never by locale), with its git blob id. Every entry not listed is counted under one of
`SKIP_REASONS`: binary (a NUL byte in the first 8,000 bytes, git's own test), too large, `.git`, unreadable,
symbolic link (never followed: a link could point out of the corpus), submodule, missing object, unsafe name
(a path component `..`, `.git` in any case, or one holding a backslash, a control character or bytes that are
not UTF-8, by `_io.safe_relpath`: a crafted tree could otherwise make a materialised corpus write outside its
folder, and every engine and record could not even encode the name). Manifests and lockfiles are listed like
any other text.

`list_directory` walks a directory; `list_entries` classifies git tree entries (a whole tree for
`Corpus.from_git`, or only the entries a tree diff touched for `Corpus.at`, which `may_clash` and `find`
serve). The corpus module imports this one, never the other way.
"""

from __future__ import annotations

import bisect
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from ctxgauge._io import unsafe_name_reason
from ctxgauge._untrusted import walk_tree
from ctxgauge.git import Repo, TreeEntry, blob_id

BINARY_SNIFF_BYTES = 8000
SKIP_REASONS = ("binary", "too-large", "git-dir", "unreadable", "symlink", "submodule", "missing-object",
                "unsafe-name")


def path_key(path: str) -> bytes:
    """Sort key for corpus paths: their UTF-8 bytes, the same order git uses, whatever the locale."""
    return path.encode("utf-8", "surrogateescape")


def is_binary(data: bytes) -> bool:
    """Git's heuristic: a NUL byte in the first 8,000 bytes makes a file binary."""
    return b"\0" in data[:BINARY_SNIFF_BYTES]


@dataclass(frozen=True, order=True)
class CorpusFile:
    """One indexed file: POSIX path relative to the corpus root, git blob id of its bytes, size in bytes."""

    path: str
    blob: str
    size: int


def empty_skips() -> dict[str, list[str]]:
    """A fresh `skipped` mapping: every reason of `SKIP_REASONS`, in that order, with no path yet."""
    return {r: [] for r in SKIP_REASONS}


def list_directory(root: Path, max_bytes: int) -> tuple[list[CorpusFile], dict[str, list[str]]]:
    """The files under `root` a corpus indexes, and every other path by reason, walked without following
    symbolic links; `.git` directories are skipped whole."""
    files: list[CorpusFile] = []
    skipped = empty_skips()
    for dirpath, dirnames, filenames in walk_tree(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        if ".git" in dirnames:
            dirnames.remove(".git")
            skipped["git-dir"].append(prefix + ".git")
        for d in list(dirnames):
            if os.path.islink(os.path.join(dirpath, d)):
                dirnames.remove(d)
                skipped["symlink"].append(prefix + d)
        for fn in filenames:
            rel = prefix + fn
            full = os.path.join(dirpath, fn)
            if not _safe_path(rel):
                skipped["unsafe-name"].append(rel)
                continue
            try:
                st = os.lstat(full)
                if stat.S_ISLNK(st.st_mode):
                    skipped["symlink"].append(rel)
                    continue
                if not stat.S_ISREG(st.st_mode):
                    skipped["unreadable"].append(rel)
                    continue
                if st.st_size > max_bytes:
                    skipped["too-large"].append(rel)
                    continue
                with open(full, "rb") as fh:
                    data = fh.read()
            except OSError:
                skipped["unreadable"].append(rel)
                continue
            if is_binary(data):
                skipped["binary"].append(rel)
                continue
            files.append(CorpusFile(rel, blob_id(data), len(data)))
    return files, skipped


SNIFF_HOLD = 64 << 20
"""Bytes of sniffed text blobs one listing keeps for its corpus's reader (`GitReader.sniffed`)."""


def list_entries(repo: Repo, entries: Iterable[TreeEntry], max_bytes: int, binary_cache: dict[str, bool] | None,
                 skipped: dict[str, list[str]], keep: dict[str, bytes] | None = None) -> list[CorpusFile]:
    """The tree entries a corpus indexes; every other one appended to `skipped` under its reason. Blobs not
    in `binary_cache` (blob id -> is binary) are read once to sniff them; with `keep`, the text ones' bytes
    are put there (up to SNIFF_HOLD bytes in all) for the corpus's reader, so they are not read twice."""
    candidates: list[CorpusFile] = []
    for e in entries:
        if not _safe_path(e.path):
            skipped["unsafe-name"].append(e.path)
        elif e.type == "commit":
            skipped["submodule"].append(e.path)
        elif e.mode == "120000":
            skipped["symlink"].append(e.path)
        elif e.size is not None and e.size > max_bytes:
            skipped["too-large"].append(e.path)
        else:
            candidates.append(CorpusFile(e.path, e.oid, e.size or 0))
    candidates = _without_clashes(candidates, skipped["unsafe-name"])
    cache = binary_cache if binary_cache is not None else {}
    unknown = sorted({f.blob for f in candidates if f.blob not in cache})
    missing: set[str] = set()
    held = 0
    for oid, data in repo.read_blobs(unknown):
        if data is None:
            missing.add(oid)
        else:
            cache[oid] = binary = is_binary(data)
            if keep is not None and not binary and held + len(data) <= SNIFF_HOLD:
                keep[oid] = data
                held += len(data)
    files = []
    for f in candidates:
        if f.blob in missing:
            skipped["missing-object"].append(f.path)
        elif cache[f.blob]:
            skipped["binary"].append(f.path)
        else:
            files.append(f)
    return files


def may_clash(files: list[CorpusFile], by_path: Mapping[str, CorpusFile], entries: list[TreeEntry]) -> bool:
    """Whether an entry `Corpus.at` adds could clash (`_without_clashes`) with another or with a file it
    keeps: a path listed twice, a file where a folder of kept files is, or a kept file where a folder of it is."""
    paths = [e.path for e in entries]
    if len(set(paths)) != len(paths):
        return True
    for p in paths:
        i = find(files, p + "/")
        if i < len(files) and files[i].path.startswith(p + "/"):
            return True
        if any(p[:i] in by_path for i, c in enumerate(p) if c == "/"):
            return True
    new = set(paths)
    return any(p[:i] in new for p in paths for i, c in enumerate(p) if c == "/")


def find(files: list[CorpusFile], path: str) -> int:
    """Where `path` is, or belongs, in files sorted by path bytes."""
    return bisect.bisect_left(files, path_key(path), key=lambda f: path_key(f.path))


def _without_clashes(files: list[CorpusFile], skipped: list[str]) -> list[CorpusFile]:
    """`files` less every path a crafted tree lists twice (a duplicate entry, or a name holding `/` that
    repeats a nested path) or as both a file and a folder (`a` and `a/b`): no directory can hold both, so
    materialising them would fail half-way, and which copy an engine saw would depend on the reader. All
    copies are skipped (as unsafe names), so the choice never depends on order. Git's own fsck calls these
    trees broken (duplicateEntries); a tree git writes never has one."""
    seen: dict[str, int] = {}
    for f in files:
        seen[f.path] = seen.get(f.path, 0) + 1
    folders = {f.path[:i] for f in files for i, c in enumerate(f.path) if c == "/"}
    both = {p for p in seen if p in folders}  # a file, and a folder of files under the same name
    clash = {p for p, n in seen.items() if n > 1 or p in both
             or any(p[:i] in both for i, c in enumerate(p) if c == "/")}
    if not clash:
        return files
    skipped.extend(sorted((f.path for f in files if f.path in clash), key=path_key))
    return [f for f in files if f.path not in clash]


def _safe_path(path: str) -> bool:
    return all(unsafe_name_reason(part) is None for part in path.split("/"))
