"""The typed run record: `RunRecord` (run.json), `Subject` (what a run measured) and `Unit` (a units.jsonl line).

Every suite writes these through `RunDir` and every reader gets them from `read_run` / `read_units` /
`discover_runs`; nothing else parses run.json. The JSON form is the dataclasses' fields by name, so a record
written by this version reads back into an equal object (`RunRecord.from_json(r.to_json()) == r`).

What a field means is fixed by its docstring; what a suite keeps inside `spec`, `context`, `results` and a
unit's `data` is the suite's own (documented in `ctxgauge.suites.<name>`), read by that suite's view in
`ctxgauge.report._views`. Facts that every reader needs whatever the suite (what was measured on, which
systems, with which model, the one-line headline) are typed fields here, so the store and the runs table
never need to know a suite.

Schema history (a migration in `_migrate` brings every older record to the current one):
  1  dc65eaf and before: `suite_version` inside `spec` (an int for replay and cases; absent for
     determinism and qa), no `subject`, no `headline`; cases units named their request `query`.
  2  `suite_version` (int, required) and `subject` at the top; `headline` written at the end; the request
     text of a unit is `request` in every suite; provenance's `platform` gains the machine spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ctxgauge.errors import UserError

SCHEMA_VERSION = 2
"""The run.json schema this ctxgauge writes (see the module docstring for the history)."""
RUN_KIND = "ctxgauge.run"
"""`kind` of every run record."""
STATUSES = ("started", "success", "cancelled", "error")
"""A run's status: `started` while it runs (or after a crash), then one of the other three."""
UNIT_STATUSES = ("ok", "failed", "skipped")
"""A unit's status: measured, failed (its reason says why; never in a mean), or skipped by rule."""
FINISHED = "success"
"""The one status whose figures enter a mean; every other status is published as did-not-finish."""


def figures_headline(figures: Mapping[str, Any], names: Sequence[str], limit: int = 2) -> str:
    """A headline of named figures, `name value` to three decimals, the first `limit` of `names` that are
    numbers in `figures` (a headline the retrieval suites share)."""
    shown = [f"{n} {figures[n]:.3f}" for n in names
             if isinstance(figures.get(n), (int, float)) and not isinstance(figures.get(n), bool)]
    return ", ".join(shown[:limit])


@dataclass
class Subject:
    """What a run measured: the same three facts for every suite, filled when the run starts."""

    dataset: str
    """What it measured on: a repository's name, a case file, a corpus (`name@rev`, rev to 10 characters)
    or a battery; `-` when unknown."""
    systems: list[str] = field(default_factory=list)
    """What it measured, in the order given: engine specs (the measured one first, then `--vs`) or qa arms."""
    model: str | None = None
    """The answering model of a suite that asks one (None for the suites that use none, or none given)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form (field names as keys)."""
        return {"dataset": self.dataset, "systems": list(self.systems), "model": self.model}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Subject":
        """Read the JSON form; missing fields take their defaults."""
        return cls(dataset=str(data.get("dataset") or "-"), systems=[str(s) for s in data.get("systems") or []],
                   model=None if data.get("model") in (None, "") else str(data["model"]))


@dataclass
class Unit:
    """One unit of work (a commit, a case, an engine x family, an arm x question): a line of units.jsonl.

    The line is flat: the fields below by name, and the suite's own fields (`data`) beside them."""

    id: str
    """Unique within the run; a later line with the same id replaces an earlier one (a resumed retry)."""
    status: str
    """`ok`, `failed` or `skipped` (UNIT_STATUSES)."""
    reason: str | None = None
    """Why a unit failed or was skipped (None when ok)."""
    figures: dict[str, Any] = field(default_factory=dict)
    """Metric name -> value for this unit (None where nothing was scorable)."""
    request: str | None = None
    """The request text the unit asked an engine (a commit subject, a case's query), or None."""
    timing: dict[str, float] | None = None
    """Wall-clock seconds of the unit's phases: never an artifact of record, never compared."""
    data: dict[str, Any] = field(default_factory=dict)
    """The suite's own fields (expected files, rankings, verdicts, ...), documented by the suite."""
    run_id: str | None = None
    """The id of the run that wrote the line (`RunRecord.run_id`); None in records written before units
    carried it. A line naming another run is foreign: readers count it (`runs show`) or refuse the run
    (report, export)."""

    _FIELDS = ("id", "status", "reason", "figures", "request", "timing", "run_id")

    def to_json(self) -> dict[str, Any]:
        """The flat JSON line (timing and request only when set)."""
        out: dict[str, Any] = {"id": self.id, "status": self.status, "reason": self.reason,
                               "figures": dict(self.figures), **self.data}
        if self.request is not None:
            out["request"] = self.request
        if self.timing:
            out["timing"] = self.timing
        if self.run_id is not None:
            out["run_id"] = self.run_id
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Unit":
        """Read a flat JSON line: the known fields by name, everything else into `data`."""
        rest = {k: v for k, v in data.items() if k not in cls._FIELDS}
        return cls(id=str(data["id"]), status=str(data.get("status")), reason=data.get("reason"),
                   figures=dict(data.get("figures") or {}), request=data.get("request"),
                   timing=data.get("timing") or None, data=rest,
                   run_id=data["run_id"] if isinstance(data.get("run_id"), str) else None)

    @property
    def ok(self) -> bool:
        """Whether the unit was measured."""
        return self.status == "ok"


@dataclass
class RunRecord:
    """run.json: one run of one suite, from its start to its end."""

    suite: str
    """The suite that wrote it (a name in the suite-view registry, `ctxgauge.report._views`)."""
    suite_version: int
    """The suite's own version: bumped when the same options would give different figures or a different
    `results` layout. Required, an integer."""
    run_id: str
    """The run's id (its directory name when written)."""
    subject: Subject
    """What the run measured (dataset, systems, model), the same fields for every suite."""
    spec: dict[str, Any] = field(default_factory=dict)
    """Every option that changes a figure, and every seed; no local path. `--resume` needs the same spec."""
    status: str = "started"
    """`started`, `success`, `cancelled` or `error` (STATUSES); only `success` enters a mean."""
    context: dict[str, Any] = field(default_factory=dict)
    """What the run found rather than was told (a corpus summary, a battery's identity)."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """What produced it: ctxgauge version and source commit, Python, platform and machine, packages."""
    results: dict[str, Any] | None = None
    """The suite's results, written at the end (None until then, and for a run that did not finish)."""
    headline: str = ""
    """One line of the run's main figures, written with the results (empty until then)."""
    counts: dict[str, int] = field(default_factory=dict)
    """Units per status (ok, failed, skipped) at the end."""
    error: str | None = None
    """Why a run stopped (`interrupted`, an exception) or None."""
    files: dict[str, str] = field(default_factory=dict)
    """SHA-256 of every other file in the run directory, by POSIX relative path, written at the end."""
    timing: dict[str, str] = field(default_factory=dict)
    """UTC times (started_at, resumed_at, finished_at): kept apart so two runs of the same work compare equal."""
    schema_version: int = SCHEMA_VERSION
    """The run.json schema (SCHEMA_VERSION when read: older records are migrated, newer ones refused)."""
    kind: str = RUN_KIND
    """Always `ctxgauge.run`."""

    @property
    def finished(self) -> bool:
        """True only for a run that finished successfully: the only kind whose figures enter a mean."""
        return self.status == FINISHED

    def to_json(self) -> dict[str, Any]:
        """The JSON form written as run.json."""
        return {
            "schema_version": self.schema_version, "kind": self.kind, "suite": self.suite,
            "suite_version": self.suite_version, "run_id": self.run_id, "status": self.status,
            "subject": self.subject.to_json(), "spec": self.spec, "context": self.context,
            "provenance": self.provenance, "results": self.results, "headline": self.headline,
            "counts": self.counts, "error": self.error, "files": self.files, "timing": self.timing,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "run.json") -> "RunRecord":
        """Read a record of the current schema (migrate older ones first: `_migrate.migrate`)."""
        version = data.get("suite_version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise UserError(f"{source}: suite_version must be an integer, not {version!r}; the record is damaged")
        if not isinstance(data.get("suite"), str) or not isinstance(data.get("subject"), Mapping):
            raise UserError(f"{source}: a run record needs `suite` and `subject`; the record is damaged")
        for section in ("spec", "context", "provenance", "counts", "files", "timing"):
            # dict("x") would raise ValueError, dict([1]) TypeError (found by `make fuzz` on v1 records).
            if data.get(section) is not None and not isinstance(data[section], Mapping):
                raise UserError(f"{source}: `{section}` must be an object, not {type(data[section]).__name__}; "
                                "the record is damaged")
        return cls(
            suite=data["suite"], suite_version=version, run_id=str(data.get("run_id") or ""),
            subject=Subject.from_json(data["subject"]), spec=dict(data.get("spec") or {}),
            status=str(data.get("status") or "started"), context=dict(data.get("context") or {}),
            provenance=dict(data.get("provenance") or {}), results=data.get("results"),
            headline=str(data.get("headline") or ""), counts=dict(data.get("counts") or {}),
            error=data.get("error"), files=dict(data.get("files") or {}), timing=dict(data.get("timing") or {}),
            schema_version=int(data["schema_version"]), kind=str(data.get("kind") or RUN_KIND),
        )
