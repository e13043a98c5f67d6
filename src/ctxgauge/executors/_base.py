"""The one small interface every executor implements, and the `--executor` spec."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

from ctxgauge.errors import UserError

EXECUTOR_HELP = ("Where units run: local (this process), local:N (N processes), dask-local[:N] (a Dask "
                 "LocalCluster of N workers), dask://HOST:PORT (a Dask scheduler).")

_LOCAL = re.compile(r"^local(?::(\d+))?$")
_DASK_LOCAL = re.compile(r"^dask-local(?::(\d+))?$")
_DASK = re.compile(r"^dask://([^\s/:]+:\d+)$")


def parse_executor(spec: str) -> tuple[str, Any]:
    """`(kind, argument)` of an executor spec: ("local", workers), ("dask-local", workers) or
    ("dask", "host:port"); UserError with the accepted forms otherwise."""
    s = spec.strip()
    for pattern, kind, default in ((_LOCAL, "local", 1), (_DASK_LOCAL, "dask-local", 2)):
        m = pattern.match(s)
        if m:
            n = int(m.group(1)) if m.group(1) else default
            if n < 1:
                raise UserError(f"--executor {spec}: the number of workers must be at least 1")
            return kind, n
    m = _DASK.match(s)
    if m:
        return "dask", m.group(1)
    raise UserError(f"--executor {spec!r}: not an executor; use local, local:N, dask-local[:N] or dask://HOST:PORT")


@dataclass(frozen=True)
class Part:
    """One thing a unit of work produced (a unit may produce several, e.g. one per commit of a slice)."""

    item: int
    """Index of the unit in the items handed to `Executor.map`."""
    value: Any
    """What the unit's function yielded (picklable when the unit ran elsewhere)."""
    worker: str
    """The worker that ran the unit: `local/main`, `local/pid<N>`, or `dask/<worker address>`. Not part of
    a result's identity: records keep it beside timing, and comparisons leave both out."""


def worker_name() -> str:
    """This process's worker name, as `Part.worker` gives it."""
    try:
        from distributed import get_worker

        return f"dask/{get_worker().address}"
    except (ImportError, ValueError):
        pass
    return f"local/pid{os.getpid()}"


Work = Callable[[Any], Iterable[Any]]
"""A unit's function: a module-level generator function (picklable by reference) taking one item."""


class Executor:
    """Runs a function over items and hands back their parts in item order, whatever finished first.

    Item order is the contract that keeps records independent of the executor: the parts of item 0, in
    the order its function yielded them, then item 1's, and so on. A unit that fails raises from `map`
    at its turn; a worker that dies mid-unit is the scheduler's to recover (the unit runs again from its
    start elsewhere, and its parts are handed back once).
    """

    spec: str = "local"
    """The spec this executor was opened with."""
    workers: int = 1
    """How many units may run at once (a suite slices its work by it)."""

    def map(self, fn: Work, items: Sequence[Any]) -> Iterator[Part]:
        """The parts of `fn(item)` for every item, in item order. A pool hands the units to its workers when
        `map` is called, so the caller may work on while they run; this process's executor runs each unit
        when its parts are read."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop whatever this executor started (pools, a local cluster); idempotent."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def run_collected(fn: Work, item: Any) -> tuple[list[Any], str]:
    """Run one unit to its end in this (worker) process: its parts, and this worker's name."""
    return list(fn(item)), worker_name()


def parts_in_order(futures: list[Any], cancel: Callable[[list[Any]], Any]) -> Iterator[Part]:
    """The parts of submitted `run_collected` futures (anything with `.result()`), unit by unit in the order
    submitted, whichever finished first: what every pool-backed executor's `map` yields. When the caller
    stops reading (an error, a closed generator), `cancel(futures)` drops the units not yet run."""
    try:
        for i, fut in enumerate(futures):
            values, worker = fut.result()
            for value in values:
                yield Part(i, value, worker)
    finally:
        cancel(futures)


def cancel_each(futures: list[Any]) -> None:
    """Cancel `concurrent.futures` futures one by one (a running or finished one stays as it is)."""
    for fut in futures:
        fut.cancel()
