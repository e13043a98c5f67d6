"""The one check of a run a command reads: every reader of figures goes through `check_run`.

`report`, `export`, `runs show`, `replay --baseline`, `qa rescore`, `qa adjudicate` and `qa baseline save`
read runs through `load_runs` or `read_checked` here, which check each run once, the same way:

- `spec` and `results` of run.json, and every line of units.jsonl, read into its suite's typed classes
  (`ctxgauge.results.SUITES`, the one source of what a record holds; a plugin suite without them against
  the shapes its view declares), so a damaged value is one line naming the file and the JSON path (exit 2),
  never a TypeError deep in a reader;
- unit lines naming another run (`Unit.run_id`, written since the writer's lock came in): a run holding
  any is refused (its figures would mix two runs), except by `runs show`, which counts them.

Nothing here is registered by importing a module: before, the shapes were declared when `ctxgauge.report`
was imported, so `replay --baseline` (which did not import it) crashed on a record `report` refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ctxgauge.errors import UserError
from ctxgauge.records import RUN_FILE, UNITS_FILE, RunRef, check_sections, read_run, read_units
from ctxgauge.records import load_runs as _load_runs
from ctxgauge.report._views import shapes
from ctxgauge.results import TypedRun, UnitBase, classes, typed


@dataclass(frozen=True)
class RunCheck:
    """What `check_run` found beyond the shapes (which it refuses outright)."""

    foreign: int
    """Unit lines of units.jsonl naming another run than run.json's `run_id`."""
    foreign_ids: tuple[str, ...] = ()
    """The other run ids those lines name, sorted."""
    run: TypedRun | None = None
    """The run read through its suite's typed classes (what every reader receives)."""


def check_run(run: RunRef, *, foreign_ok: bool = False) -> RunCheck:
    """Check `run` (its record, and every unit line, read now and kept on `run`) against its suite's shapes
    and for foreign unit lines; UserError (one line) for a damaged value, and for foreign lines unless
    `foreign_ok` (then only counted). The run read through its suite's typed classes is `RunCheck.run`."""
    found_classes = classes(run.suite)
    # A suite with typed classes is checked by reading it into them (the writer's own classes, migrating an
    # older layout first): every value they declare. A plugin suite without them, by its view's shapes.
    spec_shape, results_shape, unit_shape_ = (None, None, None) if found_classes is not None else shapes(run.suite)
    check_sections({"spec": spec_shape, "results": results_shape},
                   {"spec": run.record.spec, "results": run.record.results}, str(run.path / RUN_FILE))
    head = typed(run)
    unit_shape = {"unit": unit_shape_}
    own = run.record.run_id
    foreign: list[str] = []
    parsed: dict[str, UnitBase] = {}

    def line(where: str, data: dict) -> None:
        check_sections(unit_shape, {"unit": data}, where)
        if found_classes is not None:
            parsed[str(data["id"])] = found_classes.unit.from_json(data, where, "unit")
        other = data.get("run_id")
        if own and other is not None and other != own:
            foreign.append(str(other))

    run._units = read_units(run.path, check=line)
    if found_classes is not None:
        head._units = list(parsed.values())  # the last line per id, in first-seen order, as read_units keeps
    found = RunCheck(len(foreign), tuple(sorted(set(foreign))), head)
    if found.foreign and not foreign_ok:
        ids = ", ".join(found.foreign_ids[:3]) + (" ..." if len(found.foreign_ids) > 3 else "")
        raise UserError(f"{run.path / UNITS_FILE}: {found.foreign} unit line(s) of another run ({ids}) beside "
                        f"run {own}'s; the record mixes two runs: record it again into an empty --out")
    return found


def read_checked(run_dir: str | Path, *, foreign_ok: bool = False) -> TypedRun:
    """The run in `run_dir`, read, checked (`check_run`) and typed; UserError when it is not a run or is
    damaged."""
    run_dir = Path(run_dir)
    ref = RunRef(run_dir, run_dir.name, read_run(run_dir))
    return check_run(ref, foreign_ok=foreign_ok).run


def load_runs(paths: Iterable[str | Path], *, unreadable: list[str] | None = None) -> list[TypedRun]:
    """`ctxgauge.records.load_runs`, each run checked (`check_run`). Given `unreadable`, a run found below a
    path that fails its check is left out and named there, like one whose run.json cannot be read; a path
    that is itself a damaged run still refuses (the user named that run). Each run is read through its
    suite's typed classes (`ctxgauge.results.TypedRun`): what every reader receives."""
    paths = list(paths)
    named = {Path(p).resolve() for p in paths if (Path(p) / RUN_FILE).is_file()}
    out = []
    for ref in _load_runs(paths, unreadable=unreadable):
        try:
            out.append(check_run(ref).run)
        except UserError as exc:
            if unreadable is None or ref.path.resolve() in named:
                raise
            unreadable.append(f"{ref.rel}: {exc}")
    return out
