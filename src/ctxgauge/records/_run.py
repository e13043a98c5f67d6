"""Run directories: the one layout every suite writes.

    <run dir>/
      run.json      a RunRecord (`_model`): schema_version, suite, suite_version, subject, status, spec
                    (every option and seed), context, provenance, results and headline (at the end),
                    counts, files (SHA-256 of every other file), timing
      units.jsonl   one Unit per line (a commit, a query, a case): id, status ok|failed|skipped, reason,
                    figures, request, the suite's own fields; its wall-clock time under `timing`
      ...           artifacts a suite's report needs (fingerprints, rankings)

`run.json` is rewritten atomically at the start and at the end; units are appended and flushed as they
finish, so a crash leaves a readable record and `--resume` skips what is done and retries what failed. A
resumed run must have the same spec (a value recorded as `unknown(...)` aside). A finished run is never
overwritten: an existing directory without `--resume` is refused, and so is resuming one with no failed unit.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from ctxgauge._io import InputError, escape_surrogates, parse_data, read_data, write_json_atomic
from ctxgauge._killpoints import checkpoint
from ctxgauge._output import EnvironmentProblem, environment_reason
from ctxgauge._untrusted import Refused, open_regular, walk_tree
from ctxgauge.errors import Interrupted, UserError
from ctxgauge.records._lock import LOCK_FILE, RunLock, is_empty_dir, lock_dir
from ctxgauge.records._migrate import check_version, migrate, migrate_unit
from ctxgauge.records._model import SCHEMA_VERSION, STATUSES, UNIT_STATUSES, RunRecord, Subject, Unit
from ctxgauge.records._outcome import outcome, tally
from ctxgauge.records._provenance import provenance, utc_now

RUN_FILE = "run.json"
UNITS_FILE = "units.jsonl"
SYNC_EVERY = 1.0
"""Seconds between two fsyncs of units.jsonl at most (`RunDir.add_unit`)."""
VOLATILE_UNIT_FIELDS = ("timing", "workers", "run_id")
"""Unit fields that say how a unit ran, not what it measured: wall-clock seconds, the workers that ran it and
the run that recorded it. Two runs of the same work are equal when their units are equal without these (`comparable_unit`)."""


def comparable_unit(unit: Unit | Mapping[str, Any]) -> dict:
    """A unit's JSON line without its `VOLATILE_UNIT_FIELDS`: what must be equal whichever executor, worker
    or resume ran it."""
    data = unit.to_json() if isinstance(unit, Unit) else unit
    return {k: v for k, v in data.items() if k not in VOLATILE_UNIT_FIELDS}


def default_run_dir(suite: str, root: str | Path = "ctxgauge-runs") -> Path:
    """`ctxgauge-runs/<suite>-<utc time>-<short id>/`: sortable by time, unique per run."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return Path(root) / f"{suite}-{stamp}-{uuid.uuid4().hex[:6]}"


def file_sha256(path: Path) -> str:
    """SHA-256 hex of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def regular_files(root: Path) -> list[tuple[str, Path]]:
    """(POSIX relative path, path) of every regular file under `root`, sorted by the path's bytes.

    Symbolic links are never followed nor listed: a link placed in a run directory would otherwise publish
    whatever it points at (a system file) in an export, under the run's name."""
    out = []
    for dirpath, dirnames, filenames in walk_tree(root):
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            full = Path(dirpath, name)
            if stat.S_ISREG(os.lstat(full).st_mode):
                out.append((full.relative_to(root).as_posix(), full))
    return sorted(out, key=lambda item: item[0].encode("utf-8", "surrogateescape"))


def is_regular_inside(root: Path, rel: str) -> bool:
    """True when `root/rel` is a regular file reached through no symbolic link below `root`."""
    here = Path(root)
    parts = rel.split("/")
    for i, part in enumerate(parts):
        if part in ("", ".", ".."):
            return False
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except OSError:
            return False
        if stat.S_ISLNK(mode) or (i < len(parts) - 1 and not stat.S_ISDIR(mode)):
            return False
    return stat.S_ISREG(mode)


def hash_files(run_dir: Path) -> dict[str, str]:
    """SHA-256 of every regular file in the run directory but run.json (links never followed), by POSIX
    relative path, sorted."""
    return {rel: file_sha256(p) for rel, p in regular_files(run_dir)
            if rel != RUN_FILE and not p.name.startswith(".")}


def verify_files(run_dir: str | Path, record: RunRecord) -> dict[str, str]:
    """Each file of a run against its record: `ok`, `changed` (SHA-256 differs), `missing`, or `unhashed`
    (present but not in the record's `files`: added after the run finished, or the run never finished)."""
    run_dir = Path(run_dir)
    out = {}
    for name, digest in sorted(record.files.items()):
        src = run_dir / name
        out[name] = "missing" if not src.is_file() else "ok" if file_sha256(src) == digest else "changed"
    for name in hash_files(run_dir):
        out.setdefault(name, "unhashed")
    return dict(sorted(out.items()))


def _read_json(path: Path) -> Any:
    # Our own records may hold `\\udcxx` escapes (file names that are not UTF-8): kept, not refused.
    return read_data(path, "run record", fmt="json", surrogates=True)


def read_run(run_dir: str | Path) -> RunRecord:
    """The run record of a run directory, migrated to the current schema (UserError: not a run, damaged,
    or written by a newer ctxgauge)."""
    path = Path(run_dir) / RUN_FILE
    if not path.is_file():
        raise UserError(f"{run_dir}: not a run directory (no {RUN_FILE})")
    data = _read_json(path)
    if not isinstance(data, Mapping):
        raise UserError(f"{path}: not a ctxgauge run record (not a JSON object)")
    return RunRecord.from_json(migrate(data, str(path)), str(path))


def _written_version(run_dir: Path) -> int:
    # The schema the unit lines were written under is the one run.json was written with (before migration).
    data = _read_json(run_dir / RUN_FILE) if (run_dir / RUN_FILE).is_file() else {}
    version = data.get("schema_version", SCHEMA_VERSION) if isinstance(data, Mapping) else SCHEMA_VERSION
    return check_version(version, str(run_dir / RUN_FILE))


def read_units(run_dir: str | Path, *, check: Callable[[str, dict], None] | None = None) -> list[Unit]:
    """The units of a run, migrated to the current schema, the last line per id winning (a resumed run
    retries failed units).

    A torn last line (no newline: the process died while writing it) is dropped, never parsed as data; any
    other line that is not a unit (not JSON, not an object with an id) is an InputError naming the line,
    since a damaged record must not be read as a shorter one. `check(where, line)` sees every line (migrated,
    before it becomes a Unit; `where` is `path:N`): how a reader validates a run
    (`ctxgauge.report.check_run`) without reading the file twice."""
    run_dir = Path(run_dir)
    path = run_dir / UNITS_FILE
    version = _written_version(run_dir)
    if not os.path.lexists(path):  # a dangling link or a FIFO there is opened, and refused, by _open_units
        return []
    units: dict[str, Unit] = {}
    with _open_units(path) as fh:
        for number, line in enumerate(fh, start=1):
            if not line.endswith(b"\n"):
                break  # torn by a crash: the unit was never finished
            if not line.strip():
                continue
            data = parse_data(line, "units file", f"{path}:{number}", finite=False, surrogates=True)
            if not isinstance(data, dict) or not isinstance(data.get("id"), (str, int)) or isinstance(data["id"], bool):
                raise InputError("units file", f"{path}:{number}",
                                 "not a unit (a JSON object with an id); the run record is damaged: restore units.jsonl or record the run again")
            data = migrate_unit(data, version)
            if check is not None:
                check(f"{path}:{number}", data)
            unit = Unit.from_json(data)
            units[unit.id] = unit
    return list(units.values())


MAX_UNITS_BYTES = 1 << 30
"""Largest units.jsonl read (1 GiB; a 10,000-commit replay with --vs writes about 150 MB)."""


def _open_units(path: Path):
    """units.jsonl opened for reading, or the InputError a user can mend: never through a symbolic link, never
    blocking (a FIFO placed there hung `report`), a regular file only (a link to /dev/zero grew the reader to
    23 GB), and at most MAX_UNITS_BYTES."""
    try:
        fd = open_regular(path, MAX_UNITS_BYTES)
    except Refused as r:
        if r.kind == "link":
            raise InputError("units file", path, "is a symbolic link; a run's units.jsonl is a file it wrote "
                             "itself: restore it or record the run again") from None
        if r.kind in ("directory", "special"):
            raise InputError("units file", path, "is not a regular file (a FIFO, device or socket); restore the "
                             "run's units.jsonl or record the run again") from None
        if r.kind == "too-large":
            raise InputError("units file", path, f"is {r.size} bytes, more than the {MAX_UNITS_BYTES} a run's "
                             "units are read up to") from None
        raise InputError("units file", path, f"cannot read ({r.reason})") from None
    try:
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


UNKNOWN = "unknown"
"""The one key of a spec value that could not be learned when the run started: `{"unknown": why}`."""


def unknown(why: str) -> dict[str, str]:
    """A spec value the run could not learn (an engine whose `identity` request failed), kept with why.

    Only for a value every unit it concerns fails without (the suite fails them all), so nothing measured
    depends on it: a resumed run then matches it whatever the value is now (the engine mended), and takes
    the value it learns. Anything else in the spec must be the same to resume."""
    return {UNKNOWN: str(why)}


def _is_unknown(value: Any) -> bool:
    return isinstance(value, dict) and list(value) == [UNKNOWN]


def _resumed_spec(old: dict, new: dict, measured: bool) -> dict | None:
    """The spec a resumed run goes on with, or None when `new` differs from the recorded `old`.

    A value `unknown` on one side matches any value on the other, and the known one is kept; an unknown
    recorded value is replaced only while no unit is ok (a measured unit would depend on it)."""
    if set(old) != set(new):
        return None
    out = {}
    for key, was in old.items():
        now = new[key]
        if was == now or _is_unknown(now):
            out[key] = was
        elif _is_unknown(was) and not measured:
            out[key] = now
        else:
            return None
    return out


def spec_differences(old: dict, new: dict, measured: bool = True) -> list[str]:
    """What makes `new` differ from the recorded `old`, one `option (recorded X, now Y)` per option, in
    sorted order (empty when `_resumed_spec` would accept it): the refusal of a `--resume` names them."""
    def show(value: object) -> str:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        return text if len(text) <= 60 else text[:59] + "…"

    out = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            out.append(f"{key} (recorded {show(old[key])}, now not given)")
        elif key not in old:
            out.append(f"{key} (not recorded, now {show(new[key])})")
        elif _resumed_spec({key: old[key]}, {key: new[key]}, measured) is None:
            out.append(f"{key} (recorded {show(old[key])}, now {show(new[key])})")
    return out


def _leftovers(path: Path) -> tuple[str, ...]:
    """Names of the temporary files a writer killed before its first run.json landed leaves behind."""
    return tuple(p.name for p in path.iterdir() if p.name.startswith(f".{RUN_FILE}.") and p.name.endswith(".tmp"))


def plain_path(path: Path) -> str:
    """A path for a one-line message: control characters escaped (a newline would split the line)."""
    text = str(path)
    return text if text.isprintable() else text.encode("unicode_escape", "backslashreplace").decode("ascii")


class RunDir:
    """A run being recorded. Create with `RunDir.start(...)` and use as a context manager: leaving the block
    normally does nothing (call `finish`), an exception marks the run `error`, Ctrl-C marks it `cancelled`."""

    def __init__(self, path: Path, record: RunRecord, done: dict[str, dict], lock: RunLock | None = None):
        self.path = path
        self.lock = lock
        """The directory's writer lock (`_lock`), held from `start` until `finish` (or `close`, or leaving the
        `with` block, or the process's end)."""
        self.record = record
        self.done = done
        """Unit id -> its JSON line, for units finished ok or skipped in an earlier attempt."""
        self._synced_at: float | None = None  # time.monotonic() of the last fsync of units.jsonl
        self._unsynced = False  # a unit line written since then

    # -- lifecycle --------------------------------------------------------------------------------------
    @classmethod
    def start(cls, path: str | Path, *, suite: str, suite_version: int, subject: Subject, spec: dict,
              resume: bool = False, context: dict | None = None) -> "RunDir":
        """Open a new run directory, or with `resume` reopen one with the same spec that did not finish or
        finished with failed units (DESIGN's exit 6 and 7: `--resume` retries them).

        `suite_version` is the suite's own integer version; `subject` what it measures (every suite fills
        it, so readers never guess the dataset or systems from a suite's options)."""
        if not isinstance(suite_version, int) or isinstance(suite_version, bool):
            raise TypeError(f"suite_version must be an int, not {suite_version!r}")
        path = Path(path)
        run_file = path / RUN_FILE
        if path.exists() and not path.is_dir():
            raise UserError(f"{plain_path(path)}: is a file, not a directory; choose another --out")
        made = [p for p in (path, *path.parents) if not os.path.lexists(p)]
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # below a file, on /proc, read-only, no permission
            raise UserError(f"{plain_path(path)}: cannot make the run directory ({exc.strerror or exc}); "
                            "choose another --out") from None
        if not run_file.exists() and not (path / LOCK_FILE).exists() and not is_empty_dir(path, _leftovers(path)):
            # Someone's folder, never a run of ours (a writer locks first): refused before a lock file lands in it.
            raise UserError(f"{path}: exists and is not empty; choose another --out")
        # The writer's lock before anything else is read or written: a second process refused here has
        # touched nothing (`_lock`).
        lock = lock_dir(path)
        try:
            run = cls._open(path, run_file, lock, suite=suite, suite_version=suite_version, subject=subject,
                            spec=spec, resume=resume, context=context)
        except BaseException:
            lock.release()
            if made and not run_file.exists():
                # Nothing was recorded: the lock and the folders made for it go too (nothing is left behind).
                (path / LOCK_FILE).unlink(missing_ok=True)
                for p in made:
                    try:
                        p.rmdir()
                    except OSError:
                        break
            raise
        return run

    @classmethod
    def _open(cls, path: Path, run_file: Path, lock: RunLock, *, suite: str, suite_version: int,
              subject: Subject, spec: dict, resume: bool, context: dict | None) -> "RunDir":
        if run_file.exists():
            if not resume:
                raise UserError(f"{path}: a run is already recorded there; pass --resume to continue it or "
                                "choose another --out")
            if _written_version(path) != SCHEMA_VERSION:
                # Its units were written in an older layout; appending new lines would mix two layouts.
                raise UserError(f"{path}: that run was recorded by an older ctxgauge (run schema "
                                f"{_written_version(path)}); resume it with that version or start a new run")
            old = read_run(path)
            units = read_units(path)
            merged = _resumed_spec(old.spec, json.loads(json.dumps(spec)), any(u.ok for u in units))
            if old.suite != suite:
                raise UserError(f"{path}: the recorded run is a {old.suite} run, not {suite}; --resume needs the "
                                "same command, or choose another --out")
            if merged is None:
                differ = spec_differences(old.spec, json.loads(json.dumps(spec)), any(u.ok for u in units))
                raise UserError(f"{path}: the recorded run has different options: {'; '.join(differ)}; --resume "
                                "needs the same command, or choose another --out")
            if old.status == "success" and not old.counts.get("failed"):
                raise UserError(f"{path}: that run already finished with no failed unit; nothing to resume")
            done = {u.id: u.to_json() for u in units if u.status in ("ok", "skipped")}
            old.spec = merged
            old.status = "started"
            old.timing["resumed_at"] = utc_now()
            run = cls(path, old, done, lock)
            run._repair_units()
            run._write()
            return run
        # A process killed before its first run.json landed leaves only a temporary file (`.run.json.*.tmp`):
        # the run never started, so the directory counts as empty and the leftover goes; so does one holding
        # only the lock file (a writer killed right after locking, or ours).
        leftovers = _leftovers(path)
        if not is_empty_dir(path, leftovers):
            raise UserError(f"{path}: exists and is not empty; choose another --out")
        for name in leftovers:
            (path / name).unlink()
        record = RunRecord(suite=suite, suite_version=suite_version, run_id=path.name, subject=subject,
                           spec=spec, context=context or {}, provenance=provenance(),
                           timing={"started_at": utc_now()})
        run = cls(path, record, {}, lock)
        try:
            run._write()
        except OSError as exc:  # `start` removes what it made for the run
            raise UserError(f"{plain_path(path)}: cannot write the run record ({exc.strerror or exc}); "
                            "choose another --out") from None
        return run

    def _repair_units(self) -> None:
        # A crash can leave half a line; cut it so the next append starts on a line of its own.
        p = self.path / UNITS_FILE
        if p.exists():
            data = p.read_bytes()
            if data and not data.endswith(b"\n"):
                p.write_bytes(data[: data.rfind(b"\n") + 1])

    def _write(self) -> None:
        write_json_atomic(self.path / RUN_FILE, self.record.to_json())

    def close(self) -> None:
        """Release the directory's writer lock: nothing more is written into this run (idempotent)."""
        if self.lock is not None:
            self.lock.release()

    def __enter__(self) -> "RunDir":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None or self.record.status != "started":
                return
            if issubclass(exc_type, KeyboardInterrupt):
                self.finish("cancelled", error="interrupted")
                if not isinstance(exc, Interrupted):
                    raise Interrupted(self.path) from exc
            elif environment_reason(exc) is not None:
                # A full disk, a read-only or wrong-type target: the user's environment, not the run's work. The
                # run stays resumable; the record says why in the user's words (it may not be writable itself:
                # a full disk then leaves it `started`, which --resume continues as well).
                reason = environment_reason(exc)
                try:
                    self.finish("error", error=reason)
                except OSError:
                    pass
                raise EnvironmentProblem(self.path, reason) from exc
            else:
                self.finish("error", error=f"{exc_type.__name__}: {exc}")
        finally:
            self.close()

    # -- units ------------------------------------------------------------------------------------------
    def is_done(self, unit_id: str) -> bool:
        """Whether an earlier attempt finished this unit (ok or skipped)."""
        return str(unit_id) in self.done

    def add_unit(self, unit_id: str, status: str, *, figures: dict | None = None, reason: str | None = None,
                 timing: dict | None = None, request: str | None = None, **extra: Any) -> dict:
        """Append one finished unit; returns its JSON line. `extra` holds the suite's own fields.

        The line is written whole and flushed before returning, so a killed process keeps it (the kernel
        holds it). It is synced to the disk with at most one fsync a second (`SYNC_EVERY`; the first unit
        and `finish` always sync): a machine that loses power loses at most the last second's units, which
        `--resume` runs again (a half line left at the end is cut off), instead of paying an fsync per unit
        (a 200-commit replay spent more than a second of its wall time in them)."""
        if status not in UNIT_STATUSES:
            raise ValueError(f"unit status must be one of {UNIT_STATUSES}")
        unit = Unit(str(unit_id), status, reason, figures or {}, request, timing or None, extra,
                    run_id=self.record.run_id).to_json()
        checkpoint(f"write-before/{UNITS_FILE}")
        with open(self.path / UNITS_FILE, "a", encoding="utf-8") as fh:
            fh.write(escape_surrogates(json.dumps(unit, sort_keys=True, ensure_ascii=False)) + "\n")
            fh.flush()
            checkpoint(f"write-after/{UNITS_FILE}")
            self._unsynced = True
            if self._synced_at is None or time.monotonic() - self._synced_at >= SYNC_EVERY:
                self._sync_units(fh.fileno())
        if status in ("ok", "skipped"):
            self.done[str(unit_id)] = unit
        return unit

    def _sync_units(self, fd: int | None = None) -> None:
        """fsync units.jsonl (through `fd` when it is open), if a line was written since the last fsync."""
        if not self._unsynced:
            return
        checkpoint(f"fsync-before/{UNITS_FILE}")
        if fd is not None:
            os.fsync(fd)
        else:
            with open(self.path / UNITS_FILE, "rb") as fh:
                os.fsync(fh.fileno())
        checkpoint(f"fsync-after/{UNITS_FILE}")
        self._synced_at, self._unsynced = time.monotonic(), False

    def units(self) -> list[Unit]:
        """Every unit recorded so far (the last line per id)."""
        return read_units(self.path)

    def iter_units(self) -> Iterator[Unit]:
        """Iterate `units()`."""
        return iter(self.units())

    # -- end --------------------------------------------------------------------------------------------
    def finish(self, status: str = "success", *, results: Any = None, error: str | None = None,
               headline: str = "") -> dict:
        """Write the results, their one-line headline and the hash of every other file, and mark the run
        with its final status; returns the record's JSON."""
        if status not in STATUSES[1:]:
            raise ValueError(f"final status must be one of {STATUSES[1:]}")
        counts, measured = tally(self.units())
        rec = self.record
        verdict = outcome(counts, measured)
        if status == "success" and verdict.state == "nothing-measured":
            # The record says what the exit code says: a "success" whose units all failed measured nothing.
            headline = f"{verdict.message.split(';')[0]}" + (f"; {headline}" if headline else "")
        rec.status, rec.results, rec.error, rec.counts, rec.headline = status, results, error, counts, headline
        rec.timing["finished_at"] = utc_now()
        self._sync_units()  # every unit on disk before the record that counts them
        rec.files = hash_files(self.path)
        self._write()
        self.close()  # the run's last write: the directory is free for a `--resume` (or a reader's rescore)
        return rec.to_json()
