"""The one progress protocol of every long-running pipeline (replay, cases, determinism, qa, the demo).

A pipeline calls `progress(done, total, label)` after each item: `done` items of `total` are finished and
`label` names the one just done or now running (a short sha, a case name, a determinism step). A caller
that wants no progress passes nothing; the command line shows it with one display (cli/_progress.py).
"""

from __future__ import annotations

from typing import Callable

Progress = Callable[[int, int, str], None]
"""`progress(done, total, label)`: `done` of `total` items are finished; `label` says which, or what runs."""


def silent(done: int, total: int, label: str) -> None:
    """The progress of a caller that asked for none."""


class Steps:
    """Counts steps for a pipeline that reports "one more step done" (determinism's families) and
    forwards the running count to a `Progress`."""

    def __init__(self, progress: Progress | None, total: int = 0, prefix: str = ""):
        self._progress, self.total, self.done, self._prefix = progress or silent, total, 0, prefix

    def step(self, label: str, advance: int = 1) -> None:
        """`advance` more steps are done (0: only the label changes)."""
        self.done += advance
        self._progress(self.done, self.total, self._prefix + label)
