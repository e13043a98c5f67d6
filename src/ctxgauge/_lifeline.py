"""No orphans: every process ctxgauge starts dies with it, even when ctxgauge itself is killed with SIGKILL
(no `finally`, no atexit, no signal handler runs then).

Two mechanisms, one per kind of child:
- `pool_initializer` runs first in each worker of a local pool (and a Dask worker): a daemon thread polls the
  worker's parent and ends the worker (`os._exit`) when the parent is gone, i.e. when the worker has been
  reparented. Polling the parent, not PR_SET_PDEATHSIG, because that signal fires when the *thread* that
  started the worker exits, and a pool may start workers from any thread.
- `die_with_parent` is the `preexec_fn` of an engine's program (`command` engines, MCP servers): on Linux it
  asks the kernel (prctl PR_SET_PDEATHSIG) to SIGKILL the program when the process that started it (the
  ctxgauge process, or the pool worker running the unit) dies. The program may be in any language, so only the
  kernel can watch for it. Engine programs are started from the thread that runs the unit, which outlives them.

Dask's local cluster (`--executor dask-local:N`) needs nothing of ours either: its nannies live in the main
process, and each worker they spawn runs distributed's own parent-pipe watchdog (`os._exit` when the pipe
from the nanny closes, which a SIGKILL of the main process does); an engine program a worker starts dies with
that worker through `die_with_parent`. `tests/test__lifeline.py` pins both with real processes.

The multiprocessing resource tracker needs nothing: it exits when the last process holding its pipe (the
main process and the workers it started) is gone.

Before this (F19), a SIGKILL of `replay --executor local:2` left both workers and the resource tracker alive,
reparented to init, 90 s later.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

POLL_SECONDS = 0.25
"""How often a worker's watchdog looks at its parent: a worker outlives a killed ctxgauge by at most this."""
PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal the kernel sends this process when its parent (thread) dies."""

_prctl = None


def _load_prctl():
    """libc's prctl, loaded once in the parent (loading a library in a forked child before exec is unsafe)."""
    global _prctl
    if _prctl is None and sys.platform.startswith("linux"):
        try:
            import ctypes

            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            _prctl = False
    return _prctl or None


def _watch(parent: int) -> None:
    import time

    while True:
        if os.getppid() != parent:
            os._exit(70)  # the parent is gone (killed): nothing would ever collect this worker's work
        time.sleep(POLL_SECONDS)


def pool_initializer(parent: int) -> None:
    """The initializer of a pool worker: start the watchdog that ends this worker when `parent` (the pid of the
    process that made the pool, passed in because by the time this runs it may already be gone) is gone."""
    if os.getppid() != parent:
        os._exit(70)
    threading.Thread(target=_watch, args=(parent,), name="ctxgauge-parent-watch", daemon=True).start()


def die_with_parent():
    """A `preexec_fn` for an engine's program: SIGKILL it when its parent dies (Linux); None elsewhere, where
    the program is still ended by ctxgauge's own cleanup on every exit but a SIGKILL."""
    prctl = _load_prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died between fork and prctl: the signal will never come
            os._exit(70)

    return preexec


__all__ = ["POLL_SECONDS", "die_with_parent", "pool_initializer"]
