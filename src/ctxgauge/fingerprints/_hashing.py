"""The two digests a fingerprint carries: per-query result hashes and the artifact hash."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Final

from ctxgauge._untrusted import walk_tree
from ctxgauge.errors import EngineError

from ._jsjson import js_json_stringify

__all__ = ["EMPTY_QUERY_HASH", "SPAN_HASHES", "artifact_hash_of_dir", "query_hash", "sha256_file", "span_hash"]

_CHUNK = 1 << 20


def query_hash(paths: Sequence[str]) -> str:
    """SHA-256 hex of a ranked result list, as ContextBenchmark computes it.

    Their `resultKey` is `sha256(JSON.stringify(results.map(r => r.file)))`: the compact JSON array of the
    paths in rank order (no spaces, JavaScript string escaping), UTF-8 encoded. Paths are hashed as given
    (corpus-relative, `/`-separated by the engine contract); scores do not enter the hash.
    """
    if isinstance(paths, str):
        raise TypeError("query_hash takes a list of paths, not one string")
    for item in paths:
        if not isinstance(item, str):
            raise TypeError(f"paths must be str, got {type(item).__name__}: {item!r}")
    return hashlib.sha256(js_json_stringify(list(paths)).encode("utf-8")).hexdigest()


SPAN_HASHES: Final = "spanHashes"
"""The key under the `ctxgauge` namespace holding each query's `span_hash` (`queryHashes` stays file-only,
so ContextBenchmark's tool reads our files as before)."""


def span_hash(answer: Sequence[tuple[str, Sequence[Sequence[int]]]]) -> str:
    """SHA-256 hex of a ranked answer with its spans: the compact JSON (JavaScript escaping, as
    `query_hash`) of `[[path, [[start, end], ...]], ...]` in rank order, UTF-8 encoded; a file-only hit has
    `[]`. Equal span hashes mean the same files in the same order handing over the same lines."""
    rows = []
    for path, spans in answer:
        if not isinstance(path, str):
            raise TypeError(f"paths must be str, got {type(path).__name__}: {path!r}")
        rows.append([path, [[int(s), int(e)] for s, e in spans]])
    return hashlib.sha256(js_json_stringify(rows).encode("utf-8")).hexdigest()


EMPTY_QUERY_HASH: Final = query_hash([])
"""`query_hash([])`: the hash of a query that returned nothing (4f53cda1...b945)."""


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 hex of a file's bytes, read in chunks so a large artifact never sits whole in memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _artifact_file(out_dir: Path, artifact_file: str) -> str:
    parts = PurePosixPath(artifact_file.replace("\\", "/")).parts
    if not parts or PureWindowsPath(artifact_file).is_absolute() or artifact_file.startswith("/") or ".." in parts:
        # The artifact of record must live inside out_dir; anything else would hash a file the engine does not own.
        raise EngineError(f"artifact_file must be a relative path inside the output directory: {artifact_file!r}")
    target = out_dir.joinpath(*parts)
    if not target.is_file():
        raise EngineError(f"declared artifact file {artifact_file!r} was not written to {out_dir}")
    return sha256_file(target)


def _manifest_lines(out_dir: Path) -> list[bytes]:
    lines: list[tuple[bytes, Path]] = []
    for root, dirs, files in walk_tree(out_dir):
        for name in dirs + files:
            full = Path(root, name)
            mode = os.lstat(full).st_mode
            rel = full.relative_to(out_dir).as_posix()
            if stat.S_ISLNK(mode):
                # A link points outside what the engine wrote (the contract: everything persisted is in out_dir),
                # and following it would make the hash depend on the machine's file system.
                raise EngineError(f"artifact directory {out_dir} contains a symbolic link: {rel}")
            if name in files and not stat.S_ISREG(mode):
                raise EngineError(f"artifact directory {out_dir} contains a special file: {rel}")
            if name in files:
                # fsencode gives the name's own bytes on POSIX and UTF-8 on Windows, so the order is locale-free.
                lines.append((os.fsencode(rel), full))
    lines.sort(key=lambda item: item[0])
    return [rel + b"\0" + sha256_file(full).encode("ascii") + b"\n" for rel, full in lines]


def artifact_hash_of_dir(out_dir: str | os.PathLike[str], artifact_file: str | None = None) -> str:
    """SHA-256 hex identifying what an engine built into `out_dir`.

    With `artifact_file` (the engine's one file of record, relative to out_dir): SHA-256 of that file's bytes,
    exactly as ContextBenchmark hashes a declared `artifactFile`.

    Without it, the whole directory, by this construction:

    1. list every regular file under out_dir (empty directories do not count; a symbolic link or special file
       is an EngineError, since an artifact must be self-contained);
    2. name each by its path relative to out_dir with `/` separators, as bytes (the name's own bytes on POSIX,
       UTF-8 on Windows), and sort by those bytes;
    3. for each, form the line `path NUL sha256hex(content) LF` (64 lowercase hex digits);
    4. the result is the SHA-256 of those lines concatenated (an empty directory hashes to SHA-256 of nothing).

    The same value in a shell: `cd out_dir && find . -type f | sed 's|^\\./||' | LC_ALL=C sort | while IFS= read -r f;
    do printf '%s\\0%s\\n' "$f" "$(sha256sum < "$f" | cut -c1-64)"; done | sha256sum`.

    This differs on purpose from the reference's `hashDir`, which sorts each directory level with
    `localeCompare` (ICU collation, not byte order, and not reproducible outside Node) and feeds raw contents
    with NUL terminators (ambiguous when a file contains NUL). Hashing each file first gives fixed-length,
    unambiguous records. The two tools never compare artifact hashes of one system, so nothing is lost.
    """
    root = Path(out_dir)
    if not root.is_dir():
        raise EngineError(f"artifact directory does not exist: {root}")
    if artifact_file is not None:
        return _artifact_file(root, artifact_file)
    digest = hashlib.sha256()
    for line in _manifest_lines(root):
        digest.update(line)
    return digest.hexdigest()
