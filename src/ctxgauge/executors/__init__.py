"""Executors: where units of work run. Suites hand an executor units and get their parts back in a
fixed order, so a record never depends on which executor ran it or on how many workers it had.

    from ctxgauge.executors import open_executor
    with open_executor("dask-local:2") as ex:
        for part in ex.map(work, items):      # work(item) yields parts; a generator function
            part.item, part.value, part.worker

Specs (`--executor`), parsed by `parse_executor`:

| spec | what |
| --- | --- |
| `local` | this process, one unit after another (the default); parts arrive as they are made |
| `local:N` | a pool of N local worker processes (N >= 2); a unit's parts arrive when the unit ends |
| `dask-local[:N]` | a `distributed.LocalCluster` of N worker processes started here (N defaults to 2) |
| `dask://HOST:PORT` | the Dask scheduler at HOST:PORT and its workers, on any machines |

Layering: suites -> executors -> engines. An executor knows nothing of suites: it runs a function over
items. Scheduling (placement, a dead worker's unit handed to another) is the pool's or Dask's own.
"""

from ctxgauge.executors._base import EXECUTOR_HELP, Executor, Part, parse_executor, worker_name
from ctxgauge.executors._local import InlineExecutor, PoolExecutor

__all__ = ["EXECUTOR_HELP", "Executor", "InlineExecutor", "Part", "PoolExecutor", "open_executor",
           "parse_executor", "worker_name"]


def open_executor(spec: str = "local") -> Executor:
    """The executor a spec names, started (a context manager: leaving it stops what it started).

    UserError for a malformed spec, or when Dask is asked for and not installed."""
    kind, arg = parse_executor(spec)
    if kind == "local":
        return InlineExecutor() if arg == 1 else PoolExecutor(arg)
    from ctxgauge.executors._dask import DaskExecutor

    return DaskExecutor.local(arg) if kind == "dask-local" else DaskExecutor.remote(arg)
