"""The on-disk store: one file per entry under its stage's directory, written atomically, read verified.

Layout (`v1` is the entry format; a new format gets a new directory and never misreads an old one):

    ROOT/v1/<stage key>/stage.json          what produced the entries (name and identity, for `cache show`)
    ROOT/v1/<stage key>/<id[:2]>/<id[2:]>   one entry: MAGIC, SHA-256 of the payload, the payload

A stage key is the SHA-256 of the producing stage's identity (its code, configuration and library
versions), so work from an older tokeniser or model lives under another key and is never served after a
change. An entry is written to a uniquely named temporary file in its own directory and renamed into place
(atomic on one file system): several processes may write the same entry at once, and the last rename wins
with the same bytes. The checksum is the second guard: a file cut short by a full disk or a crash reads as a
miss (and is removed), never as work. Entries are not fsynced: losing one to a power cut costs a recompute.

The size is bounded: after a process has written a twentieth of the bound, entries are pruned least
recently used first (a hit refreshes its file's mtime) until the store is at 90% of the bound. Temporary
files a killed writer left behind are swept then too (and by `ctxgauge cache prune`), once older than
`STALE_TEMP_SECONDS`.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

FORMAT_DIR = "v1"
MAGIC = b"CXGW1\n"
STAGE_FILE = "stage.json"
DEFAULT_MAX_BYTES = 2 << 30  # 2 GiB: the embeddings of a few large repositories
STALE_TEMP_SECONDS = 15 * 60
"""A writer's temporary file older than this was left by a process that died before renaming it."""
_HEADER = len(MAGIC) + 32


@dataclass(frozen=True)
class StageUsage:
    """What one stage holds in the store."""

    key: str
    """The stage key (SHA-256 of its identity)."""
    name: str
    """The stage's name, e.g. `bm25.content-terms`."""
    entries: int
    """How many entries."""
    bytes: int
    """Their total size on disk (entry files only)."""

    def to_json(self) -> dict:
        return {"key": self.key, "name": self.name, "entries": self.entries, "bytes": self.bytes}


class Stage:
    """The entries of one producing stage: `get(content_id)` and `put(content_id, payload)`."""

    def __init__(self, store: "WorkCache", key: str, name: str, identity: dict):
        self.store, self.key, self.name = store, key, name
        self.dir = store.root / FORMAT_DIR / key
        self._identity = identity
        self._described = False

    def _path(self, content_id: str) -> Path:
        # Content ids are hex digests already (git blob ids, SHA-256s); anything else is hashed first so a
        # caller can never name a path outside the stage's directory.
        cid = content_id if _is_hex(content_id) else hashlib.sha256(content_id.encode("utf-8", "surrogateescape")).hexdigest()
        return self.dir / cid[:2] / cid[2:]

    def get(self, content_id: str) -> bytes | None:
        """The payload stored for `content_id`, or None (absent, or torn and now removed)."""
        path = self._path(content_id)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        payload = data[_HEADER:]
        if data[:len(MAGIC)] != MAGIC or hashlib.sha256(payload).digest() != data[len(MAGIC):_HEADER]:
            try:
                path.unlink()
            except OSError:
                pass
            return None
        try:
            os.utime(path)  # least recently used goes first when the store is pruned
        except OSError:
            pass
        return payload

    def put(self, content_id: str, payload: bytes) -> None:
        """Store `payload` for `content_id` atomically; a failure to write (full disk, read-only cache) only
        means the work is recomputed next time, so it is swallowed."""
        path = self._path(content_id)
        try:
            if not self._described:
                self._describe()
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, MAGIC + hashlib.sha256(payload).digest() + payload)
        except OSError:
            return
        self.store._wrote(len(payload) + _HEADER)

    def _describe(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = self.dir / STAGE_FILE
        if not meta.exists():
            text = json.dumps({"name": self.name, "identity": self._identity}, sort_keys=True, indent=2) + "\n"
            _write_atomic(meta, text.encode())
        self._described = True


class WorkCache:
    """A content-addressed store of per-blob and per-chunk work under `root`, bounded to `max_bytes`."""

    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_BYTES):
        self.root = Path(root)
        self.max_bytes = int(max_bytes)
        self._written = 0
        self._stages: dict[str, Stage] = {}

    def __repr__(self) -> str:
        return f"<work cache {self.root}>"

    def stage(self, name: str, identity: dict) -> Stage:
        """The stage whose entries were produced by `identity` (any JSON object; see `stage_identity`)."""
        key = hashlib.sha256(json.dumps({"name": name, "identity": identity}, sort_keys=True).encode()).hexdigest()
        if key not in self._stages:
            self._stages[key] = Stage(self, key, name, identity)
        return self._stages[key]

    def _wrote(self, n: int) -> None:
        self._written += n
        if self._written >= max(self.max_bytes // 20, 1):
            self._written = 0
            self.sweep()
            self.prune(self.max_bytes * 9 // 10)

    # -- inspection and pruning ------------------------------------------------------------------------
    def _entries(self) -> Iterator[tuple[str, os.DirEntry]]:
        base = self.root / FORMAT_DIR
        if not base.is_dir():
            return
        for stage in sorted(os.scandir(base), key=lambda e: e.name):
            if not stage.is_dir(follow_symlinks=False):
                continue
            for shard in sorted(os.scandir(stage.path), key=lambda e: e.name):
                if not shard.is_dir(follow_symlinks=False):
                    continue
                for entry in os.scandir(shard.path):
                    if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
                        yield stage.name, entry

    def usage(self) -> list[StageUsage]:
        """Entries and bytes per stage, by stage name then key."""
        counts: dict[str, list[int]] = {}
        for stage, entry in self._entries():
            c = counts.setdefault(stage, [0, 0])
            c[0] += 1
            c[1] += entry.stat(follow_symlinks=False).st_size
        out = []
        for key, (n, size) in counts.items():
            try:
                name = json.loads((self.root / FORMAT_DIR / key / STAGE_FILE).read_text("utf-8"))["name"]
            except (OSError, ValueError, KeyError, TypeError):
                name = "?"
            out.append(StageUsage(key, str(name), n, size))
        return sorted(out, key=lambda u: (u.name, u.key))

    def prune(self, target_bytes: int | None = None) -> tuple[int, int]:
        """Remove least recently used entries until at most `target_bytes` remain (default: the bound);
        returns (entries removed, bytes removed). Another process's entry vanishing mid-prune is fine."""
        target = self.max_bytes if target_bytes is None else int(target_bytes)
        entries = []
        total = 0
        for _, entry in self._entries():
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            entries.append((st.st_mtime_ns, entry.path, st.st_size))
            total += st.st_size
        removed = freed = 0
        for _, path, size in sorted(entries):
            if total <= target:
                break
            try:
                os.unlink(path)
            except OSError:
                continue
            total -= size
            removed += 1
            freed += size
        return removed, freed

    def sweep(self, max_age_s: float = STALE_TEMP_SECONDS) -> tuple[int, int]:
        """Remove temporary files that writers left behind (a process killed between creating its temp file
        and renaming it into place) once they are older than `max_age_s`: a live writer renames its file
        within moments, so an old one is no one's. Returns (files removed, bytes removed)."""
        base = self.root / FORMAT_DIR
        if not base.is_dir():
            return 0, 0
        cutoff = time.time() - max_age_s
        removed = freed = 0
        for stage in os.scandir(base):
            if not stage.is_dir(follow_symlinks=False):
                continue
            for shard in [stage, *(d for d in os.scandir(stage.path) if d.is_dir(follow_symlinks=False))]:
                for entry in os.scandir(shard.path):
                    if not (entry.name.startswith(".") and entry.name.endswith(".tmp")):
                        continue
                    try:
                        st = entry.stat(follow_symlinks=False)
                        if st.st_mtime >= cutoff or not entry.is_file(follow_symlinks=False):
                            continue
                        os.unlink(entry.path)
                    except OSError:  # gone already, or not ours to remove
                        continue
                    removed += 1
                    freed += st.st_size
        return removed, freed

    def clear(self) -> None:
        """Remove every entry of every format (the root directory itself stays)."""
        for child in (self.root / FORMAT_DIR,):
            shutil.rmtree(child, ignore_errors=True)


def _is_hex(s: str) -> bool:
    return 8 <= len(s) <= 128 and all(c in "0123456789abcdef" for c in s)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
