"""Unit functions the executor tests hand to workers (module level, so a worker imports them by name)."""

from __future__ import annotations

import os
import time


def parts(item: tuple[int, float]):
    """Yield three parts of item `n` after sleeping `delay` seconds (later items finish first)."""
    n, delay = item
    time.sleep(delay)
    for j in range(3):
        yield (n, j, os.getpid())


def boom(item: int):
    if item == 1:
        raise ValueError("unit 1 failed")
    yield item


def mark(path: str):
    """Write a file at `path` (the unit ran), then yield its name."""
    with open(path, "w") as fh:
        fh.write("ran")
    yield path
