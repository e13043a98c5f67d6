"""Finding run directories and reading them once: the only way reports, exports and the store find runs.

A run is a directory holding `run.json`. A runs directory may nest runs at any depth (suites write
`ctxgauge-runs/<suite>-<time>-<id>/`, users group them by hand); discovery never descends into a run, never
into hidden directories, and never into a previous export (it holds copies, which would count twice).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ctxgauge.errors import UserError
from ctxgauge.records._model import RunRecord, Subject, Unit
from ctxgauge.records._run import RUN_FILE, read_run, read_units

EXPORT_MANIFEST = "manifest.json"
"""The file at the root of an export tree (`ctxgauge.export`), which discovery recognises and skips."""
EXPORT_KIND = "ctxgauge.export"
"""`kind` of an export's manifest."""
EXPORT_RUNS = "runs"
"""The folder of an export tree holding its copies of the runs."""


def is_export_dir(path: Path) -> bool:
    """Whether `path` is the root of a tree `ctxgauge export` wrote."""
    manifest = path / EXPORT_MANIFEST
    if not manifest.is_file():
        return False
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get("kind") == EXPORT_KIND
    except (OSError, ValueError, AttributeError):
        return False


@dataclass
class RunRef:
    """One run directory and its record, read once."""

    path: Path
    """The run directory."""
    rel: str
    """Its POSIX path relative to the runs directory it was found in (its name in exports and reports)."""
    record: RunRecord
    """`run.json`, migrated to the current schema."""
    _units: list[Unit] | None = field(default=None, repr=False)

    @property
    def suite(self) -> str:
        """The suite that wrote the run (a name in the suite-view registry)."""
        return self.record.suite

    @property
    def status(self) -> str:
        """started, success, cancelled or error."""
        return self.record.status

    @property
    def finished(self) -> bool:
        """True only for a run that finished successfully: the only kind whose figures enter a mean."""
        return self.record.finished

    @property
    def run_id(self) -> str:
        """The run's id (its directory name when written)."""
        return self.record.run_id or self.path.name

    @property
    def subject(self) -> Subject:
        """What the run measured: dataset, systems, model."""
        return self.record.subject

    @property
    def spec(self) -> dict[str, Any]:
        """The options the run was started with."""
        return self.record.spec

    @property
    def results(self) -> dict[str, Any]:
        """The suite's results ({} for a run that did not finish)."""
        return self.record.results or {}

    def units(self) -> list[Unit]:
        """The run's units (read on first use)."""
        if self._units is None:
            self._units = read_units(self.path)
        return self._units


def _walk(root: Path) -> Iterable[Path]:
    if (root / RUN_FILE).is_file():
        yield root
        return
    if is_export_dir(root):
        # A previous export's runs are copies; descend only into its runs/ folder when the user named the
        # export itself, so `ctxgauge report EXPORT_DIR` works and a store holding an export counts once.
        return
    for child in sorted(root.iterdir(), key=lambda p: p.name.encode()):
        if child.is_dir() and not child.name.startswith(".") and not child.is_symlink():
            yield from _walk(child)


def find_run_dirs(root: str | Path) -> list[tuple[str, Path]]:
    """(relative path, directory) of every run under `root`, sorted, without reading any record: `root`
    itself when it is a run (named by its directory name), the runs of an export tree, or every run below."""
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"{root}: no such directory of runs")
    start = root / EXPORT_RUNS if is_export_dir(root) and (root / EXPORT_RUNS).is_dir() else root
    found = [(d.name if d == start else d.relative_to(start).as_posix(), d) for d in _walk(start)]
    return sorted(found, key=lambda x: x[0].encode())


def read_found(rel: str, run_dir: Path, unreadable: list[str]) -> RunRecord | None:
    """The record of one run `find_run_dirs` found, or None with `rel: why` appended to `unreadable` when its
    run.json cannot be read (damaged, not a record, newer schema): how every reader that goes on past one bad
    run (the results store, reports over a directory) reads a found run."""
    try:
        return read_run(run_dir)
    except (UserError, OSError) as exc:
        unreadable.append(f"{rel}: {exc}")
        return None


def discover_runs(root: str | Path, *, unreadable: list[str] | None = None) -> list[RunRef]:
    """Every run under `root` (see `find_run_dirs`), its record read, sorted by relative path; UserError
    when `root` is missing or a record cannot be read. Given `unreadable`, a run below `root` whose record
    cannot be read is left out and named there instead (`read_found`); `root` itself being a damaged run
    is still a UserError (the user named that run)."""
    if unreadable is None or (Path(root) / RUN_FILE).is_file():
        return [RunRef(d, rel, read_run(d)) for rel, d in find_run_dirs(root)]
    found = ((rel, d, read_found(rel, d, unreadable)) for rel, d in find_run_dirs(root))
    return [RunRef(d, rel, record) for rel, d, record in found if record is not None]


def load_runs(paths: Iterable[str | Path], *, unreadable: list[str] | None = None) -> list[RunRef]:
    """The runs under every path given, each once (by resolved directory), in the order found; `unreadable`
    as in `discover_runs`."""
    out: list[RunRef] = []
    seen: set[Path] = set()
    for p in paths:
        if Path(p).name == RUN_FILE and Path(p).is_file():
            p = Path(p).parent  # `report runs/x/run.json`: the run whose record that is
        for ref in discover_runs(p, unreadable=unreadable):
            key = ref.path.resolve()
            if key not in seen:
                seen.add(key)
                out.append(ref)
    return out
