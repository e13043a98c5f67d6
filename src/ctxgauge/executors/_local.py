"""Local executors: this process (the default), or a pool of local worker processes."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Iterator, Sequence

from ctxgauge._lifeline import pool_initializer
from ctxgauge.executors._base import Executor, Part, Work, cancel_each, parts_in_order, run_collected


class InlineExecutor(Executor):
    """Units run one after another in this process, and each part is handed back as soon as it is made.

    Why a pool of one is this process: nothing is pickled, engine objects (and what they cache) are shared
    with the caller, and a run killed mid-unit keeps every part already recorded."""

    spec = "local"
    workers = 1

    def map(self, fn: Work, items: Sequence[Any]) -> Iterator[Part]:
        for i, item in enumerate(items):
            for value in fn(item):
                yield Part(i, value, "local/main")


class PoolExecutor(Executor):
    """N local worker processes (`concurrent.futures.ProcessPoolExecutor`); a unit's parts come back when
    the unit ends, in item order.

    Workers are spawned, not forked: a fork of a process holding threads (torch, a tokenizer pool) can
    deadlock in the child. A worker that dies breaks the pool (BrokenProcessPool raised from `map`); the
    units not yet recorded run again on `--resume`."""

    def __init__(self, workers: int):
        self.workers = workers
        self.spec = f"local:{workers}"
        self._pool: ProcessPoolExecutor | None = None

    def map(self, fn: Work, items: Sequence[Any]) -> Iterator[Part]:
        # Not a generator function: the units go to the workers now, so a caller may do its own work while
        # they run and read their parts later (the determinism suite's rebuilds beside its base build).
        if self._pool is None:
            # Each worker ends itself when this process is gone, SIGKILL included (`_lifeline`: no orphans).
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=pool_initializer, initargs=(os.getpid(),))
        futures = [self._pool.submit(run_collected, fn, item) for item in items]
        return parts_in_order(futures, cancel_each)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
