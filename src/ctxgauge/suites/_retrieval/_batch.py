"""The client side of the pipeline: a source's cases cut into tasks, run by an executor, and each case's
engine parts merged into its unit and recorded in a fixed order, whatever ran them.

A `Batch` is one run being recorded (one repository's replay, one cases file). Its tasks are, for each
slice of consecutive corpora of one source, one task per engine (measured engine first), so in item order
a case's last part arrives with its slice's last engine, and the records are the same whatever the
executor, the number of workers or the slice size.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from ctxgauge.executors import Executor, InlineExecutor
from ctxgauge.records import RunDir
from ctxgauge.results import UnitBase
from ctxgauge.suites._retrieval._context import ContextSpec
from ctxgauge.suites._retrieval._work import Step, Task, drop_live, run_task, slices


def auto_slice(corpora: int, workers: int) -> int | None:
    """Corpora per slice when none is asked for: one slice with one worker (one build, no waste); with
    more, enough slices that every worker gets about two (a fresh build per slice is their price)."""
    if workers <= 1 or corpora <= 1:
        return None
    return max(1, math.ceil(corpora / (2 * workers)))


def record_unit(run: RunDir, unit: UnitBase) -> dict:
    """Append a typed unit (the suite's class in `ctxgauge.results`); returns the JSON line written."""
    fields = unit.to_json()
    uid, status = fields.pop("id"), fields.pop("status")
    return run.add_unit(uid, status, figures=fields.pop("figures", None), reason=fields.pop("reason", None),
                        timing=fields.pop("timing", None), **fields)


def _groups(steps: Sequence[Step]) -> list[list[Step]]:
    """Consecutive steps on one corpus, together."""
    out: list[list[Step]] = []
    for step in steps:
        if out and out[-1][0].where.key == step.where.key:
            out[-1].append(step)
        else:
            out.append([step])
    return out


class Batch:
    """One run's cases being recorded: what is still to run, and the parts of the cases in flight.

    A source sets `todo` (its steps still to run, in visiting order) and implements `merge`; `take` records
    a case's unit once every engine's part is in."""

    def __init__(self, run: RunDir, specs: Sequence[str], depth: int, metrics: Sequence[str],
                 context: ContextSpec | None = None):
        self.run = run
        self.specs = list(specs)
        """Engine specs, the measured one first."""
        self.depth = depth
        self.metrics = tuple(metrics)
        self.context = context
        """What each case's context is scored at (None: file metrics only)."""
        self.todo: list[Step] = []
        self.units: dict[str, dict] = {}
        self._parts: dict[str, dict[int, tuple[dict, str]]] = {}
        self._live = ""

    # -- what a source provides ----------------------------------------------------------------------------
    def merge(self, step: Step, parts: Sequence[dict], workers: Sequence[str]) -> UnitBase:
        """A case's typed unit from its engine parts (measured engine first) and the workers that ran them."""
        raise NotImplementedError

    def live(self) -> str:
        """`share_live` key of the engines (and repositories, corpora) open here, for the inline executor."""
        return ""

    def recorded(self, unit: dict) -> None:
        """Called after each unit this batch records (progress)."""

    @property
    def finished(self) -> bool:
        """Whether every case has its unit."""
        raise NotImplementedError

    # -- the pipeline's own ----------------------------------------------------------------------------------
    def corpora(self) -> int:
        """How many corpus visits the steps still to run make (what slices count)."""
        return len(_groups(self.todo))

    def tasks(self, slice_size: int | None, executor: Executor) -> list[Task]:
        """The units of work still to run: slices of at most `slice_size` consecutive corpora of one source,
        one task per engine each (measured engine first)."""
        self._by_id = {s.case.id: s for s in self.todo}
        if isinstance(executor, InlineExecutor) and not self._live:
            self._live = self.live()
        by_source: list[list[list[Step]]] = []
        for group in _groups(self.todo):
            if by_source and by_source[-1][-1][0].where.source == group[0].where.source:
                by_source[-1].append(group)
            else:
                by_source.append([group])
        return [Task(engine=spec, role=role, steps=tuple(s for g in chunk for s in g), depth=self.depth,
                     metrics=self.metrics, live=self._live, context=self.context)
                for groups in by_source for chunk in slices(groups, slice_size)
                for role, spec in enumerate(self.specs)]

    def take(self, part: dict, worker: str) -> None:
        """Merge one engine part; record the case's unit once every engine's part is in."""
        uid = part["id"]
        got = self._parts.setdefault(uid, {})
        got[part["role"]] = (part, worker)
        if len(got) < len(self.specs):
            return
        del self._parts[uid]
        ordered = [got[r] for r in sorted(got)]
        unit = record_unit(self.run, self.merge(self._by_id[uid], [p for p, _ in ordered], [w for _, w in ordered]))
        self.units[uid] = unit
        self.recorded(unit)

    def close(self) -> None:
        if self._live:
            drop_live(self._live)
            self._live = ""


def execute_many(batches: Sequence[Batch], executor: Executor, slice_size: int | None = None,
                 on_finished: Callable[[Any], None] | None = None) -> None:
    """Run the remaining cases of every batch through one executor (so the workers stay busy across
    repositories); `on_finished(batch)` as soon as a batch's last case is recorded."""
    if slice_size is None:
        slice_size = auto_slice(sum(b.corpora() for b in batches), executor.workers)
    items: list[Task] = []
    owner: list[Batch] = []
    for b in batches:
        for task in b.tasks(slice_size, executor):
            items.append(task)
            owner.append(b)
    pending = list(batches)
    try:
        for b in [b for b in pending if b.finished]:
            pending.remove(b)
            if on_finished is not None:
                on_finished(b)
        for part in executor.map(run_task, items):
            b = owner[part.item]
            b.take(part.value, part.worker)
            if b in pending and b.finished:
                pending.remove(b)
                if on_finished is not None:
                    on_finished(b)
    finally:
        for b in batches:
            b.close()
