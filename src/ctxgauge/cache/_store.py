"""The on-disk store: one SQLite database of entries, written in transactions, read verified.

Layout (`v2` is the entry format; a new format gets a new directory and never misreads an old one):

    ROOT/v2/work.sqlite     table `stages` (key, name, identity: for `cache show`) and table `entries`
                            (stage key, content id, SHA-256 of the payload, the payload, its size, last use)

A stage key is the SHA-256 of the producing stage's identity (its code, configuration and library
versions), so work from an older tokeniser or model lives under another key and is never served after a
change. Every write is one SQLite transaction in write-ahead-log mode, so several processes may read and
write at once (writers take turns; a reader never waits) and no reader ever sees half an entry; the
checksum is the second guard: a payload that does not match it reads as a miss (and is removed), never as
work. A database that is not one (a crash mid-way through the file system, another file in its place) is
deleted and begun again: the cache only ever holds work that can be recomputed. Writes are not synced to
disk one by one (`synchronous=NORMAL`): losing the newest entries to a power cut costs a recompute.

One file instead of a file per entry (the `v1` format): a cold replay of 200 commits writes ~4,000 entries,
and creating 4,000 small files in 256 shard directories cost more than all the tokenising they saved (0.4 to
0.7 ms a file on an ext4 disk, 0.08 ms a transaction here). `v1` directories are removed by `sweep`.

The size is bounded: after a process has written a twentieth of the bound, entries are pruned least
recently used first (a hit refreshes an entry's use, recorded in batches) until the store is at 90% of
the bound, and the pages they held are given back to the file system. The database must live on a local
disk (SQLite's write-ahead log needs shared memory between the processes that use it).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import sqlite3
import threading
import time
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

FORMAT_DIR = "v2"
DB_FILE = "work.sqlite"
OLD_FORMAT_DIRS = ("v1",)
"""Directories of earlier entry formats under the root: never read, removed by `sweep`."""
DEFAULT_MAX_BYTES = 2 << 30  # 2 GiB: the embeddings of a few large repositories
BUSY_TIMEOUT_S = 60.0
"""How long a writer waits for another process's transaction before the write is dropped (a miss later)."""
TOUCH_BATCH = 1024
"""Hits whose use is recorded in one transaction (at this many, at a prune, and when the process ends)."""

_SCHEMA = """
PRAGMA auto_vacuum = INCREMENTAL;
CREATE TABLE IF NOT EXISTS stages (key TEXT PRIMARY KEY, name TEXT NOT NULL, identity TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    stage TEXT NOT NULL, id TEXT NOT NULL, digest BLOB NOT NULL, payload BLOB NOT NULL, size INTEGER NOT NULL,
    used INTEGER NOT NULL, PRIMARY KEY (stage, id));
CREATE INDEX IF NOT EXISTS entries_by_use ON entries (used);
"""


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
    """Their payloads' total size."""

    def to_json(self) -> dict:
        return {"key": self.key, "name": self.name, "entries": self.entries, "bytes": self.bytes}


class Stage:
    """The entries of one producing stage: `get(content_id)` and `put(content_id, payload)`."""

    def __init__(self, store: "WorkCache", key: str, name: str, identity: dict):
        self.store, self.key, self.name = store, key, name
        self._identity = identity
        self._described = False

    def get(self, content_id: str) -> bytes | None:
        """The payload stored for `content_id`, or None (absent, or torn and now removed)."""
        return self.store._get(self, content_id)

    def put(self, content_id: str, payload: bytes) -> None:
        """Store `payload` for `content_id` in one transaction; a failure to write (full disk, read-only
        cache, another process holding the database for longer than BUSY_TIMEOUT_S) only means the work is
        recomputed next time, so it is swallowed."""
        self.store._put(self, content_id, payload)


class WorkCache:
    """A content-addressed store of per-blob and per-chunk work under `root`, bounded to `max_bytes`."""

    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_BYTES):
        self.root = Path(root)
        self.max_bytes = int(max_bytes)
        self.path = self.root / FORMAT_DIR / DB_FILE
        self._written = 0
        self._stages: dict[str, Stage] = {}
        self._lock = threading.RLock()  # re-entered: a failed statement drops the connection under it
        self._con: sqlite3.Connection | None = None
        self._pid = 0
        self._unwritable = False
        self._touched: list[tuple[int, str, str]] = []
        self._clock = 0
        _live.add(self)

    def __repr__(self) -> str:
        return f"<work cache {self.root}>"

    def stage(self, name: str, identity: dict) -> Stage:
        """The stage whose entries were produced by `identity` (any JSON object; see `stage_identity`)."""
        key = hashlib.sha256(json.dumps({"name": name, "identity": identity}, sort_keys=True).encode()).hexdigest()
        if key not in self._stages:
            self._stages[key] = Stage(self, key, name, identity)
        return self._stages[key]

    # -- the database ----------------------------------------------------------------------------------
    def _db(self, create: bool) -> sqlite3.Connection | None:
        """The connection (opened once per process), or None: no database yet and `create` false, or one
        that cannot be made here (a read-only cache)."""
        if self._con is not None and self._pid == os.getpid():
            return self._con
        self._con = None  # a connection never crosses into a forked child
        if not create and not self.path.is_file():
            return None
        if create and self._unwritable:
            return None
        for attempt in range(2):
            con = None
            try:
                if create:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                      check_same_thread=False)
                con.execute("PRAGMA journal_mode = WAL")
                con.execute("PRAGMA synchronous = NORMAL")
                con.executescript(_SCHEMA)
                self._con, self._pid = con, os.getpid()
                for stage in self._stages.values():  # a new database (or one begun again) names its stages anew
                    stage._described = False
                return con
            except sqlite3.OperationalError:  # cannot be made or opened here, or busy for too long
                if con is not None:
                    con.close()
                self._unwritable = self._unwritable or create
                return None
            except sqlite3.DatabaseError:  # not a database: only recomputable work is lost
                if con is not None:
                    con.close()
                if attempt == 0:
                    self._remove_files()
        return None

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except OSError:
                pass

    def _failed(self, exc: sqlite3.Error) -> None:
        """A statement failed: a broken database is dropped (begun again on the next write); anything else
        (busy, disk full) costs only this entry."""
        if not isinstance(exc, sqlite3.OperationalError):
            with self._lock:
                self._drop_connection()
                self._touched = []
                self._remove_files()

    def _drop_connection(self) -> None:
        """Close this process's connection (one a forked child inherited is only forgotten, never closed)."""
        con, self._con = self._con, None
        if con is not None and self._pid == os.getpid():
            try:
                con.close()
            except sqlite3.Error:
                pass

    def _now(self) -> int:
        """A clock for `used` that never goes back within a process (the least recently used go first)."""
        self._clock = max(self._clock + 1, time.time_ns())
        return self._clock

    def _get(self, stage: Stage, content_id: str) -> bytes | None:
        with self._lock:
            con = self._db(create=False)
            if con is None:
                return None
            try:
                row = con.execute("SELECT digest, payload FROM entries WHERE stage = ? AND id = ?",
                                  (stage.key, content_id)).fetchone()
                if row is None:
                    return None
                digest, payload = row  # a BLOB reads as bytes
                if hashlib.sha256(payload).digest() != digest:
                    con.execute("DELETE FROM entries WHERE stage = ? AND id = ?", (stage.key, content_id))
                    return None
            except sqlite3.Error as exc:
                self._failed(exc)
                return None
            self._touched.append((self._now(), stage.key, content_id))
            if len(self._touched) >= TOUCH_BATCH:
                self._flush_touched(con)
            return payload

    def _put(self, stage: Stage, content_id: str, payload: bytes) -> None:
        payload = bytes(payload)
        with self._lock:
            con = self._db(create=True)
            if con is None:
                return
            try:
                if not stage._described:
                    con.execute("INSERT OR IGNORE INTO stages VALUES (?, ?, ?)",
                                (stage.key, stage.name, json.dumps(stage._identity, sort_keys=True)))
                    stage._described = True
                con.execute("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?)",
                            (stage.key, content_id, hashlib.sha256(payload).digest(), payload, len(payload),
                             self._now()))
            except sqlite3.Error as exc:
                self._failed(exc)
                return
        self._wrote(len(payload))

    def _flush_touched(self, con: sqlite3.Connection) -> None:
        touched, self._touched = self._touched, []
        if not touched:
            return
        try:
            with _transaction(con):
                con.executemany("UPDATE entries SET used = max(used, ?) WHERE stage = ? AND id = ?", touched)
        except sqlite3.Error as exc:  # only the order of pruning suffers
            self._failed(exc)

    def flush(self) -> None:
        """Record the uses of entries read since the last flush (done by itself in batches and at exit)."""
        with self._lock:
            con = self._db(create=False) if self._touched else None
            if con is not None:
                self._flush_touched(con)

    def close(self) -> None:
        """Flush recorded uses and close this process's connection (a later call opens it again)."""
        self.flush()
        with self._lock:
            self._drop_connection()

    def _wrote(self, n: int) -> None:
        self._written += n
        if self._written >= max(self.max_bytes // 20, 1):
            self._written = 0
            self.sweep()
            self.prune(self.max_bytes * 9 // 10)

    # -- inspection and pruning ------------------------------------------------------------------------
    def usage(self) -> list[StageUsage]:
        """Entries and bytes per stage, by stage name then key."""
        with self._lock:
            con = self._db(create=False)
            if con is None:
                return []
            try:
                rows = con.execute("SELECT e.stage, coalesce(s.name, '?'), count(*), sum(e.size) FROM entries e "
                                   "LEFT JOIN stages s ON s.key = e.stage GROUP BY e.stage").fetchall()
            except sqlite3.Error as exc:
                self._failed(exc)
                return []
        return sorted((StageUsage(key, str(name), n, size) for key, name, n, size in rows),
                      key=lambda u: (u.name, u.key))

    def prune(self, target_bytes: int | None = None) -> tuple[int, int]:
        """Remove least recently used entries until at most `target_bytes` remain (default: the bound);
        returns (entries removed, bytes removed). Another process writing meanwhile is fine."""
        target = self.max_bytes if target_bytes is None else int(target_bytes)
        with self._lock:
            con = self._db(create=False)
            if con is None:
                return 0, 0
            self._flush_touched(con)
            try:
                with _transaction(con):
                    total = con.execute("SELECT coalesce(sum(size), 0) FROM entries").fetchone()[0]
                    doomed: list[tuple[str, str]] = []
                    freed = 0
                    if total > target:
                        for key, cid, size in con.execute("SELECT stage, id, size FROM entries "
                                                          "ORDER BY used, stage, id"):
                            if total - freed <= target:
                                break
                            doomed.append((key, cid))
                            freed += size
                        con.executemany("DELETE FROM entries WHERE stage = ? AND id = ?", doomed)
                        con.execute("DELETE FROM stages WHERE key NOT IN (SELECT DISTINCT stage FROM entries)")
                if doomed:
                    con.execute("PRAGMA incremental_vacuum")  # the freed pages back to the file system
            except sqlite3.Error as exc:
                self._failed(exc)
                return 0, 0
        return len(doomed), freed

    def sweep(self) -> tuple[int, int]:
        """Remove what no reader of this format will read: the directories of earlier entry formats (`v1`:
        a file per entry, and the temporary files its killed writers left). Returns (files, bytes) removed."""
        removed = freed = 0
        for name in OLD_FORMAT_DIRS:
            old = self.root / name
            if not old.is_dir() or old.is_symlink():
                continue
            for dirpath, _, files in os.walk(old):
                for f in files:
                    try:
                        freed += os.lstat(os.path.join(dirpath, f)).st_size
                        removed += 1
                    except OSError:
                        pass
            shutil.rmtree(old, ignore_errors=True)
        return removed, freed

    def clear(self) -> None:
        """Remove every entry of every format (the root directory itself stays)."""
        self.close()
        for child in (FORMAT_DIR, *OLD_FORMAT_DIRS):
            shutil.rmtree(self.root / child, ignore_errors=True)


@contextmanager
def _transaction(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE on an autocommit connection, then the connection's own context: COMMIT, or ROLLBACK on
    an error."""
    con.execute("BEGIN IMMEDIATE")
    with con:
        yield con


_live: "weakref.WeakSet[WorkCache]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """At exit, every store records the uses it saw and closes (SQLite then folds the log into the file)."""
    for store in list(_live):
        try:
            store.close()
        except Exception:  # noqa: BLE001 - an exit handler must not fail the exit
            pass
