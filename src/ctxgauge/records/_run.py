"""Run directories: the one layout every suite writes.

    <run dir>/
      run.json      schema_version, status, suite, spec (every option and seed), provenance,
                    results (at the end), counts, files (SHA-256 of every other file), timing
      units.jsonl   one line per unit of work (a commit, a query, a case): id, status ok|failed|skipped,
                    reason, figures; its wall-clock time under `timing`
      ...           artifacts a suite's report needs (fingerprints, rankings)

`run.json` is rewritten atomically at the start and at the end; units are appended and flushed as they
finish, so a crash leaves a readable record and `--resume` skips what is done. A resumed run must have
the same spec. A finished run is never overwritten: an existing directory without `--resume` is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from ctxgauge._io import write_json_atomic
from ctxgauge.errors import UserError
from ctxgauge.records._provenance import provenance, utc_now

SCHEMA_VERSION = 1
RUN_FILE = "run.json"
UNITS_FILE = "units.jsonl"
STATUSES = ("started", "success", "cancelled", "error")
UNIT_STATUSES = ("ok", "failed", "skipped")

# Migrations from an older schema version to the next: version -> function(record) -> record.
MIGRATIONS: dict[int, Callable[[dict], dict]] = {}


def default_run_dir(suite: str, root: str | Path = "ctxgauge-runs") -> Path:
    """`ctxgauge-runs/<suite>-<utc time>-<short id>/`: sortable by time, unique per run."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return Path(root) / f"{suite}-{stamp}-{uuid.uuid4().hex[:6]}"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def hash_files(run_dir: Path) -> dict[str, str]:
    """SHA-256 of every file in the run directory but run.json, by POSIX relative path, sorted."""
    out = {}
    for p in sorted(run_dir.rglob("*"), key=lambda q: q.relative_to(run_dir).as_posix().encode()):
        rel = p.relative_to(run_dir).as_posix()
        if p.is_file() and rel != RUN_FILE and not p.name.startswith("."):
            out[rel] = file_sha256(p)
    return out


def migrate(record: dict, source: str | Path = "run.json") -> dict:
    """Bring a record to the current schema; refuse one written by a newer ctxgauge."""
    version = record.get("schema_version")
    if not isinstance(version, int):
        raise UserError(f"{source}: not a ctxgauge run record (no schema_version)")
    if version > SCHEMA_VERSION:
        raise UserError(f"{source}: written with run schema {version}, newer than this ctxgauge reads "
                        f"({SCHEMA_VERSION}); upgrade ctxgauge")
    while version < SCHEMA_VERSION:
        record = MIGRATIONS[version](record)
        version = record["schema_version"]
    return record


def read_run(run_dir: str | Path) -> dict:
    """The run record of a run directory, migrated to the current schema."""
    path = Path(run_dir) / RUN_FILE
    if not path.is_file():
        raise UserError(f"{run_dir}: not a run directory (no {RUN_FILE})")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return migrate(record, path)


def read_units(run_dir: str | Path) -> list[dict]:
    """The units of a run, the last line per id winning (a resumed run retries failed units); a torn last
    line from a crash is ignored."""
    path = Path(run_dir) / UNITS_FILE
    if not path.exists():
        return []
    units: dict[str, dict] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                unit = json.loads(line)
            except json.JSONDecodeError:
                continue
            units[str(unit["id"])] = unit
    return list(units.values())


class RunDir:
    """A run being recorded. Create with `RunDir.start(...)` and use as a context manager: leaving the block
    normally does nothing (call `finish`), an exception marks the run `error`, Ctrl-C marks it `cancelled`."""

    def __init__(self, path: Path, record: dict, done: dict[str, dict]):
        self.path = path
        self.record = record
        self.done = done  # unit id -> unit, for units finished ok or skipped in an earlier attempt

    # -- lifecycle --------------------------------------------------------------------------------------
    @classmethod
    def start(cls, path: str | Path, *, suite: str, spec: dict, resume: bool = False,
              context: dict | None = None) -> "RunDir":
        """Open a new run directory, or with `resume` reopen an unfinished one with the same spec."""
        path = Path(path)
        run_file = path / RUN_FILE
        if run_file.exists():
            if not resume:
                raise UserError(f"{path}: a run is already recorded there; pass --resume to continue it or "
                                "choose another --out")
            old = read_run(path)
            if old.get("suite") != suite or old.get("spec") != json.loads(json.dumps(spec)):
                raise UserError(f"{path}: the recorded run has different options; --resume needs the same "
                                "command, or choose another --out")
            if old.get("status") == "success":
                raise UserError(f"{path}: that run already finished; nothing to resume")
            done = {u["id"]: u for u in read_units(path) if u.get("status") in ("ok", "skipped")}
            old["status"] = "started"
            old.setdefault("timing", {})["resumed_at"] = utc_now()
            run = cls(path, old, done)
            run._repair_units()
            run._write()
            return run
        if path.exists() and any(path.iterdir()):
            raise UserError(f"{path}: exists and is not empty; choose another --out")
        path.mkdir(parents=True, exist_ok=True)
        record = {
            "schema_version": SCHEMA_VERSION,
            "kind": "ctxgauge.run",
            "suite": suite,
            "run_id": path.name,
            "status": "started",
            "spec": spec,
            "context": context or {},
            "provenance": provenance(),
            "results": None,
            "counts": {},
            "error": None,
            "files": {},
            "timing": {"started_at": utc_now()},
        }
        run = cls(path, record, {})
        run._write()
        return run

    def _repair_units(self) -> None:
        # A crash can leave half a line; cut it so the next append starts on a line of its own.
        p = self.path / UNITS_FILE
        if p.exists():
            data = p.read_bytes()
            if data and not data.endswith(b"\n"):
                p.write_bytes(data[: data.rfind(b"\n") + 1])

    def _write(self) -> None:
        write_json_atomic(self.path / RUN_FILE, self.record)

    def __enter__(self) -> "RunDir":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None or self.record["status"] != "started":
            return
        if issubclass(exc_type, KeyboardInterrupt):
            self.finish("cancelled", error="interrupted")
        else:
            self.finish("error", error=f"{exc_type.__name__}: {exc}")

    # -- units ------------------------------------------------------------------------------------------
    def is_done(self, unit_id: str) -> bool:
        return str(unit_id) in self.done

    def add_unit(self, unit_id: str, status: str, *, figures: dict | None = None, reason: str | None = None,
                 timing: dict | None = None, **extra: Any) -> dict:
        """Append one finished unit (flushed and synced before returning, so a crash keeps it)."""
        if status not in UNIT_STATUSES:
            raise ValueError(f"unit status must be one of {UNIT_STATUSES}")
        unit = {"id": str(unit_id), "status": status, "reason": reason, "figures": figures or {}, **extra}
        if timing:
            unit["timing"] = timing
        with open(self.path / UNITS_FILE, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(unit, sort_keys=True, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        if status in ("ok", "skipped"):
            self.done[str(unit_id)] = unit
        return unit

    def units(self) -> list[dict]:
        return read_units(self.path)

    def iter_units(self) -> Iterator[dict]:
        return iter(self.units())

    # -- end --------------------------------------------------------------------------------------------
    def finish(self, status: str = "success", *, results: Any = None, error: str | None = None) -> dict:
        """Write the results and the hash of every other file, and mark the run with its final status."""
        if status not in STATUSES[1:]:
            raise ValueError(f"final status must be one of {STATUSES[1:]}")
        counts = {s: 0 for s in UNIT_STATUSES}
        for u in self.units():
            counts[u["status"]] = counts.get(u["status"], 0) + 1
        self.record.update(status=status, results=results, error=error, counts=counts)
        self.record["timing"]["finished_at"] = utc_now()
        self.record["files"] = hash_files(self.path)
        self._write()
        return self.record
