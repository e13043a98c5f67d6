"""Dask distributed: a `LocalCluster` started here, or a scheduler anywhere (`dask://HOST:PORT`).

Dask does the scheduling: it places units on workers, and when a worker dies mid-unit its nanny restarts
it and the scheduler runs the unit again (up to `distributed.scheduler.allowed-failures` times). A unit's
result reaches the client once, so a redone unit is never counted twice. Every worker must be able to
import ctxgauge (the same version) and read the repositories at the paths the client names.
"""

from __future__ import annotations

import logging
from typing import Any, Iterator, Sequence

from ctxgauge.errors import UserError
from ctxgauge.executors._base import Executor, Part, Work, parts_in_order, run_collected

_INSTALL = "Dask is not installed: pip install 'ctxgauge[dask]'"
CONNECT_TIMEOUT = "5s"
"""How long `dask://HOST:PORT` waits for the scheduler to answer."""


def _distributed():
    try:
        import distributed
    except ImportError:
        raise UserError(_INSTALL) from None
    return distributed


class DaskExecutor(Executor):
    """Units as Dask tasks, one task per unit; parts come back in item order."""

    def __init__(self, client: Any, cluster: Any | None, spec: str):
        self._client = client
        self._cluster = cluster
        self.spec = spec
        self.workers = max(1, len(client.scheduler_info().get("workers", {})))

    @classmethod
    def local(cls, workers: int) -> "DaskExecutor":
        """Start a LocalCluster of `workers` single-threaded worker processes (no dashboard)."""
        distributed = _distributed()
        # One thread per worker: engines are not promised to be thread-safe, and a unit is CPU-bound. Logs
        # only at CRITICAL: a unit's failure reaches the caller as its exception, and on a loaded machine a
        # worker's heartbeat racing the cluster's shutdown would print a traceback for nothing.
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=logging.CRITICAL)
        try:
            client = distributed.Client(cluster, set_as_default=False)
            client.wait_for_workers(workers)
        except BaseException:
            cluster.close()
            raise
        return cls(client, cluster, f"dask-local:{workers}")

    @classmethod
    def remote(cls, address: str) -> "DaskExecutor":
        """Connect to the scheduler at `address` (host:port)."""
        distributed = _distributed()
        try:
            client = distributed.Client(f"tcp://{address}", set_as_default=False, timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            raise UserError(f"--executor dask://{address}: no Dask scheduler answers there ({exc}); start one "
                            "with `dask scheduler` and workers with `dask worker HOST:PORT`") from None
        return cls(client, None, f"dask://{address}")

    def map(self, fn: Work, items: Sequence[Any]) -> Iterator[Part]:
        # pure=False: two equal items are still two units (a replay may hand the same slice twice). Submitted
        # now, not when the parts are first read (as the local pool).
        futures = [self._client.submit(run_collected, fn, item, pure=False) for item in items]
        return parts_in_order(futures, self._client.cancel)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
