"""A run as its readers receive it: the run's record with its suite's `spec`, `results` and units read
into the suite's typed classes, once.

Report, export, `runs`, `replay --baseline` and `qa rescore` read a run through a `TypedRun`: they read
attributes (`run.results.summary`, `unit.vs.ranking`), never the stored JSON's keys. `typed(ref)` makes one
from a `ctxgauge.records.RunRef` (and returns a TypedRun unchanged); the checked readers
(`ctxgauge.report.load_runs`, `read_checked`) hand out TypedRuns already.

A suite without typed classes (a plugin's) is read as plain JSON: `spec` and `results` stay dicts and its
units stay `ctxgauge.records.Unit`, as that suite's own view expects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxgauge.records import UNITS_FILE, RunRecord, RunRef, Subject
from ctxgauge.results._base import Record
from ctxgauge.results._retrieval import UnitBase
from ctxgauge.results._table import classes


@dataclass
class TypedRun:
    """One run, its suite's parts typed (see the module docstring). It answers what a `RunRef` answers
    (path, rel, record, suite, status, finished, run_id, subject), so a reader needs nothing else."""

    ref: RunRef
    """The run directory and its record as read."""
    spec: Any
    """The suite's settings: an instance of its spec class (a dict for a suite without typed classes)."""
    results: Any
    """The suite's results: an instance of its results class, the class's defaults for a run that recorded
    none (did not finish); a dict for a suite without typed classes."""
    _units: list[Any] | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        """The run directory."""
        return self.ref.path

    @property
    def rel(self) -> str:
        """The run's relative path (its name in exports and reports)."""
        return self.ref.rel

    @property
    def record(self) -> RunRecord:
        """run.json, migrated (its suite parts as stored JSON: read them here through `spec`/`results`)."""
        return self.ref.record

    @property
    def suite(self) -> str:
        """The suite that wrote the run."""
        return self.ref.suite

    @property
    def status(self) -> str:
        """started, success, cancelled or error."""
        return self.ref.status

    @property
    def finished(self) -> bool:
        """True only for a run that finished successfully."""
        return self.ref.finished

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.ref.run_id

    @property
    def subject(self) -> Subject:
        """What the run measured: dataset, systems, model."""
        return self.ref.subject

    @property
    def typed(self) -> bool:
        """Whether the suite has typed classes (else spec and results are dicts, units plain)."""
        return isinstance(self.spec, Record)

    def units(self) -> list[Any]:
        """The run's units, each an instance of its suite's unit class (read on first use; plain
        `ctxgauge.records.Unit` for a suite without typed classes)."""
        if self._units is None:
            found = classes(self.suite)
            plain = self.ref.units()
            where = str(self.path / UNITS_FILE)
            self._units = plain if found is None else [found.unit.from_json(u.to_json(), where, "unit")
                                                       for u in plain]
        return self._units


def typed(run: RunRef | TypedRun, units: list[UnitBase] | None = None) -> TypedRun:
    """`run` read through its suite's typed classes (RecordError, one line, when a value does not fit);
    a TypedRun is returned as it is. `units`: the run's typed units when the caller already read them."""
    if isinstance(run, TypedRun):
        return run
    found = classes(run.suite)
    rec = run.record
    where = str(run.path / "run.json")
    if found is None:
        return TypedRun(run, rec.spec, run.results, units)
    spec = found.spec.from_json(rec.spec, where, "spec")
    results = found.results.from_json(rec.results if rec.results is not None else {}, where, "results")
    return TypedRun(run, spec, results, units)
