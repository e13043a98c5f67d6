"""Progress of long per-chunk work on stderr: done, total, rate and time left.

Engines cannot reach the command line's progress bars (an engine never knows which suite or command calls
it), so long embedding work reports here: on a terminal one line rewritten in place, otherwise a line every
15 seconds; nothing at all for work that finishes within its first two seconds (tests, small updates).

While the command line shows its own progress bar on a terminal (`cli._progress`), it takes these lines
through `shown_by(sink)` and shows them as a second bar: written to stderr under a live bar, each rewrite left a
line of its own above it (the demo's minilm replay scrolled some 200 `minilm: embedding: ...` lines).
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator

QUIET_SECONDS = 2.0  # work shorter than this prints nothing
TTY_EVERY, LOG_EVERY = 0.5, 15.0  # seconds between lines on a terminal / in a log

_sink: Callable[[str, int, int], None] | None = None


@contextmanager
def shown_by(sink: Callable[[str, int, int], None]) -> Iterator[None]:
    """Within the block, progress goes to `sink(label, done, total)` instead of stderr; `sink("", 0, 0)`
    when the work ends."""
    global _sink
    before, _sink = _sink, sink
    try:
        yield
    finally:
        _sink = before


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Throughput:
    """`advance(n)` as units finish; `total` may be revised as it becomes known (`set_total`)."""

    def __init__(self, label: str, total: int, unit: str = "chunks"):
        self.label, self.total, self.unit = label, int(total), unit
        self.done = 0
        self._start = time.monotonic()
        self._last = self._start
        self._shown = False
        self._tty = sys.stderr.isatty()

    def set_total(self, total: int) -> None:
        self.total = max(int(total), self.done)

    def advance(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if now - self._start < QUIET_SECONDS or now - self._last < (TTY_EVERY if self._tty else LOG_EVERY):
            return
        self._last = now
        self._show(now)

    def _show(self, now: float, end: str = "") -> None:
        rate = self.done / max(now - self._start, 1e-9)
        left = (self.total - self.done) / rate if rate > 0 and self.total > self.done else 0.0
        line = (f"{self.label}: {self.done}/{self.total} {self.unit}, {rate:.1f} {self.unit}/s, "
                f"{_clock(left)} left")
        self._shown = True
        if _sink is not None:
            _sink(self.label, self.done, self.total)
            return
        sys.stderr.write(("\r\033[K" + line + end) if self._tty else line + "\n")
        sys.stderr.flush()
        self._shown = True

    def close(self) -> None:
        """A final line (only when progress was shown at all)."""
        if self._shown and _sink is not None:
            _sink("", 0, 0)
        elif self._shown:
            now = time.monotonic()
            rate = self.done / max(now - self._start, 1e-9)
            line = f"{self.label}: {self.done} {self.unit} in {_clock(now - self._start)}, {rate:.1f} {self.unit}/s"
            sys.stderr.write(("\r\033[K" + line + "\n") if self._tty else line + "\n")
            sys.stderr.flush()
