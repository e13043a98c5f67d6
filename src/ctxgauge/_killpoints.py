"""Kill points: a test hook that SIGKILLs this process at a named point of a record's write.

Resume is only as good as the worst moment a process can die at, so the writers of records call
`checkpoint(name)` before and after each fsync and rename, and the kill/resume tests pick the moment:

    CTXGAUGE_KILL_AT=NAME@N      SIGKILL this process the N-th time (from 1) it reaches NAME
    CTXGAUGE_KILL_ONCE=FILE      ...but only if FILE does not exist yet (it is created first), so of many
                                 processes (Dask workers, a resumed run) exactly one dies
    CTXGAUGE_KILL_TRACE=FILE     append every NAME reached, one a line (how a test enumerates the points)

Names are `<stage>/<file name>`, e.g. `fsync-before/units.jsonl`, `rename-after/run.json`,
`unit-before/replay-slice`. With none of the variables set a checkpoint is one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

_seen: dict[str, int] = {}


def checkpoint(name: str) -> None:
    """Count a pass through `name`; die here if the environment asks for this pass."""
    env = os.environ
    if "CTXGAUGE_KILL_AT" not in env and "CTXGAUGE_KILL_TRACE" not in env:
        return
    n = _seen[name] = _seen.get(name, 0) + 1
    trace = env.get("CTXGAUGE_KILL_TRACE")
    if trace:
        with open(trace, "a", encoding="utf-8") as fh:
            fh.write(name + "\n")
    target, _, count = env.get("CTXGAUGE_KILL_AT", "").rpartition("@")
    if target != name or count != str(n):
        return
    once = env.get("CTXGAUGE_KILL_ONCE")
    if once:
        try:
            os.close(os.open(once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
    os.kill(os.getpid(), signal.SIGKILL)
