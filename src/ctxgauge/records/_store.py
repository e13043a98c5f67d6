"""The results store: one SQLite file per runs directory, an index for `ctxgauge runs list|show`.

The file lives under the work-cache directory (`ctxgauge.cache.configured_dir()`), in `runs-index/`, named
by a hash of the runs directory's resolved path; with the cache off (`--no-cache`, `CTXGAUGE_CACHE=off`) it
is held in memory. It never lives in the runs directory: a command that reads a folder never writes into it
(an index written into an export made the next `export --check` fail). A `.ctxgauge-store.sqlite` an
earlier version left beside the runs is neither read nor written; export and `export --check` ignore it.

The run directories stay the truth. The store holds one row per run, read from its run.json; every open
syncs it with the directories (a run.json whose size or modification time changed is read again, a run
whose directory is gone is dropped), and a store that is missing, corrupt or of another schema is deleted
and rebuilt from the directories. Nothing is ever written only to the store, so deleting it loses nothing.

    with ResultsStore.open("ctxgauge-runs") as store:
        rows = store.list(suite="replay")
        row = store.get("replay-20261130T025625Z-1a2b3c")
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from ctxgauge.errors import UserError
from ctxgauge.records._discover import find_run_dirs, read_found
from ctxgauge.records._model import STATUSES, RunRecord
from ctxgauge.records._run import RUN_FILE, file_sha256

STATUS_FILTERS = (*STATUSES, "finished", "unfinished")
"""What `runs list --status` accepts: a record status, or the finished/unfinished the runs table shows."""

STORE_FILE = ".ctxgauge-store.sqlite"
"""The name earlier versions gave the store inside the runs directory: such a file is ignored (never read,
written or exported)."""
STORE_DIR = "runs-index"
"""The stores' folder under the work-cache directory."""
STORE_SCHEMA = 2
"""Bumped when the table changes; a store of another version is rebuilt."""

COLUMNS = ("path", "run_id", "suite", "status", "finished", "dataset", "systems", "model", "headline",
           "started_at", "finished_at", "units_ok", "units_failed", "units_skipped", "error", "run_json_sha256",
           "mtime_ns", "size", "record")

_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
  path TEXT PRIMARY KEY, run_id TEXT NOT NULL, suite TEXT NOT NULL, status TEXT NOT NULL,
  finished INTEGER NOT NULL, dataset TEXT, systems TEXT, model TEXT, headline TEXT, started_at TEXT,
  finished_at TEXT, units_ok INTEGER, units_failed INTEGER, units_skipped INTEGER, error TEXT,
  run_json_sha256 TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, record TEXT NOT NULL
);
CREATE INDEX runs_by_suite ON runs (suite, started_at);
INSERT INTO meta VALUES ('schema_version', '{STORE_SCHEMA}');
"""


@dataclass
class SyncStats:
    """What a sync changed."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    unreadable: list[str] = field(default_factory=list)
    """`path: why` for run directories whose run.json could not be read (left out of the store)."""


def _row(rel: str, run_dir: Path, record: RunRecord, stat) -> dict[str, Any]:
    # Every column comes from the typed record (subject, headline): the store never needs to know a suite.
    return {
        "path": rel, "run_id": record.run_id or run_dir.name, "suite": record.suite, "status": record.status,
        "finished": int(record.finished), "dataset": record.subject.dataset,
        "systems": json.dumps(record.subject.systems), "model": record.subject.model or "",
        "headline": record.headline, "started_at": record.timing.get("started_at"),
        "finished_at": record.timing.get("finished_at"), "units_ok": record.counts.get("ok"),
        "units_failed": record.counts.get("failed"), "units_skipped": record.counts.get("skipped"),
        "error": record.error, "run_json_sha256": file_sha256(run_dir / RUN_FILE),
        "mtime_ns": stat.st_mtime_ns, "size": stat.st_size, "record": json.dumps(record.to_json(), sort_keys=True),
    }


class ResultsStore:
    """An open store over one runs directory. Use `ResultsStore.open` (syncs) as a context manager."""

    def __init__(self, runs_dir: Path, conn: sqlite3.Connection, path: Path | None):
        self.runs_dir = runs_dir
        self.conn = conn
        self.path = path
        """The SQLite file (None: held in memory, the runs directory being read-only)."""
        self.last_sync = SyncStats()

    @classmethod
    def open(cls, runs_dir: str | Path, path: str | Path | None = None, *, sync: bool = True) -> "ResultsStore":
        """Open (creating or rebuilding as needed) the store of `runs_dir` and sync it with the directories."""
        runs_dir = Path(runs_dir)
        if not runs_dir.is_dir():
            raise UserError(f"{runs_dir}: no such directory of runs")
        target = Path(path) if path is not None else default_path(runs_dir)
        conn, where = _connect(target) if target is not None else (_memory(), None)
        store = cls(runs_dir, conn, where)
        if sync:
            try:
                store.sync()
            except sqlite3.OperationalError as exc:
                if where is None or "locked" in str(exc):
                    raise
                # A store file we may read but not write (published, read-only): index in memory instead.
                store.close()
                store = cls(runs_dir, _memory(), None)
                store.sync()
        return store

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database connection."""
        self.conn.close()

    def sync(self) -> SyncStats:
        """Bring the store in line with the run directories; returns what changed."""
        stats = SyncStats()
        known = {r[0]: (r[1], r[2]) for r in self.conn.execute("SELECT path, mtime_ns, size FROM runs")}
        seen = set()
        with self.conn:
            for rel, run_dir in find_run_dirs(self.runs_dir):
                try:
                    st = (run_dir / RUN_FILE).stat()
                except OSError as exc:
                    stats.unreadable.append(f"{rel}: {exc}")
                    continue
                if known.get(rel) == (st.st_mtime_ns, st.st_size):
                    seen.add(rel)
                    stats.unchanged += 1
                    continue
                record = read_found(rel, run_dir, stats.unreadable)
                if record is None:
                    continue
                row = _row(rel, run_dir, record, st)
                seen.add(rel)
                placeholders = ", ".join("?" for _ in COLUMNS)
                self.conn.execute(f"INSERT OR REPLACE INTO runs ({', '.join(COLUMNS)}) VALUES ({placeholders})",
                                  [row[c] for c in COLUMNS])
                if rel in known:
                    stats.updated += 1
                else:
                    stats.added += 1
            for rel in set(known) - seen:
                self.conn.execute("DELETE FROM runs WHERE path = ?", (rel,))
                stats.removed += 1
        self.last_sync = stats
        return stats

    def list(self, *, suite: str | None = None, status: str | None = None,
             known_suites: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Runs, oldest first (by start time, then path), optionally of one suite or status; rows without
        the stored record (use `get` for it). `status` is a record status or `finished`/`unfinished` (the
        words the runs table shows); an unknown status, or a suite neither in the store nor in
        `known_suites`, is a user error rather than an empty list that reads as "no such runs"."""
        if status is not None and status not in STATUS_FILTERS:
            raise UserError(f"--status {status!r}: not a run status; use one of {', '.join(STATUS_FILTERS)}")
        if suite is not None and suite not in self.suites() | set(known_suites):
            raise UserError(f"--suite {suite!r}: no such suite; use one of "
                            f"{', '.join(sorted(self.suites() | set(known_suites)))}")
        finished = {"finished": 1, "unfinished": 0}.get(status or "")
        record_status = None if status in ("finished", "unfinished") else status
        sql = "SELECT * FROM runs WHERE (? IS NULL OR suite = ?) AND (? IS NULL OR status = ?) " \
              "AND (? IS NULL OR finished = ?) ORDER BY started_at, path"
        args = (suite, suite, record_status, record_status, finished, finished)
        return [_public(r, record=False) for r in self._rows(sql, args)]

    def suites(self) -> set[str]:
        """The suites of the runs in the store."""
        return {r["suite"] for r in self._rows("SELECT DISTINCT suite FROM runs", ())}

    def get(self, key: str) -> dict[str, Any] | None:
        """One run by its relative path or its run id (None when the store has neither)."""
        rows = list(self._rows("SELECT * FROM runs WHERE path = ? OR run_id = ? ORDER BY path", (key, key)))
        if len(rows) > 1:
            raise UserError(f"{key}: names {len(rows)} runs ({', '.join(r['path'] for r in rows)}); give the path")
        return _public(rows[0], record=True) if rows else None

    def _rows(self, sql: str, args: tuple) -> Iterator[dict[str, Any]]:
        cur = self.conn.execute(sql, args)
        names = [d[0] for d in cur.description]
        for values in cur:
            yield dict(zip(names, values))


def _public(row: dict[str, Any], *, record: bool) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k not in ("mtime_ns", "size", "record")}
    out["finished"] = bool(out["finished"])
    out["systems"] = json.loads(out["systems"] or "[]")
    if record:
        out["record"] = RunRecord.from_json(json.loads(row["record"]))
    return out


def default_path(runs_dir: str | Path) -> Path | None:
    """Where the store of `runs_dir` lives: under the work-cache directory, keyed by the resolved path of
    `runs_dir` (None: the cache is off, so the store is held in memory)."""
    from ctxgauge.cache import configured_dir

    root = configured_dir()
    if root is None:
        return None
    key = hashlib.sha256(str(Path(runs_dir).resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return root / STORE_DIR / f"{key}.sqlite"


def _memory() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(_SCHEMA)
    return conn


def _connect(target: Path) -> tuple[sqlite3.Connection, Path | None]:
    """A connection to a store of the current schema at `target`, rebuilt when it is not one; in memory
    when the file cannot be made or opened (a read-only copy of published runs)."""
    for attempt in range(2):
        conn = None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(target, timeout=30)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                conn.executescript(_SCHEMA)
                return conn, target
            version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() \
                if "meta" in tables else None
            if version and version[0] == str(STORE_SCHEMA) and "runs" in tables:
                return conn, target
        except OSError:
            return _memory(), None  # the cache directory cannot be made: index in memory
        except sqlite3.OperationalError as exc:
            if conn is not None:
                conn.close()
            if "locked" in str(exc):
                raise UserError(f"{target}: the results store is busy (another ctxgauge is writing it); "
                                "try again") from None
            return _memory(), None  # cannot create or open the file here: index in memory
        except sqlite3.DatabaseError:
            pass  # not a database (corrupt, or another file): rebuilt below
        conn.close()
        if attempt == 0:
            # The directories are the truth: a store of another schema, or a broken one, is only an index.
            target.unlink(missing_ok=True)
    return _memory(), None
