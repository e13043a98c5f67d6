"""The one progress display of the command line: a bar on stderr (stdout stays clean for --json and the
report) on a terminal, removed when the work ends; without a terminal (CI logs, pipes), one plain line on
stderr every 10 seconds and one at the end, e.g. `replay: 120/400 commits, 3.1/s, ~1m30s left (a1b2c3d4e5)`
(a run shorter than one interval prints none: its result follows at once). `CTXGAUGE_PROGRESS_INTERVAL`
(seconds) sets the interval.

It is a `progress(done, total, label)` callback (suites/_progress.py). A new phase (the total changes or the
count goes back) restarts the bar's rate and time left; the elapsed clock counts from the display's start
and moves on its own (Rich refreshes it), so a long phase never looks stalled.
"""

from __future__ import annotations

import io
import os
import threading
import time
from typing import Any, Callable

from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeRemainingColumn
from rich.console import Console
from rich.table import Column
from rich.text import Text

from ctxgauge.cli._common import err_console


class _Rate(ProgressColumn):
    """Items per second of the current phase (Rich's own speed estimate)."""

    def render(self, task: Any) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:.1f}/s" if speed >= 0.1 else f"{60 * speed:.1f}/min",
                    style="progress.data.speed")


class _Elapsed(ProgressColumn):
    """Time since the display started (not since the phase: a demo's clock runs through every phase)."""

    def __init__(self, start: float):
        super().__init__()
        self._start = start

    def render(self, task: Any) -> Text:
        s = int(time.monotonic() - self._start)
        return Text(f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}", style="progress.elapsed")


_BAR = 10
"""The bar's width: the count beside it says as much, so it is kept short and the label gets the room."""
_FIGURES = len("1234.5/s") + len("left") + len("0:00:00") + len("10:00:00") + 6
"""The rate, `left`, time left and elapsed columns at their widest, and the six spaces between columns."""

ENV_INTERVAL = "CTXGAUGE_PROGRESS_INTERVAL"
"""Seconds between two progress lines without a terminal (default 10)."""
DEFAULT_INTERVAL = 10.0


def interval() -> float:
    """The non-terminal line interval: CTXGAUGE_PROGRESS_INTERVAL, else 10 s (a bad value: the default)."""
    try:
        value = float(os.environ.get(ENV_INTERVAL, "") or DEFAULT_INTERVAL)
    except ValueError:
        return DEFAULT_INTERVAL
    return value if value > 0 else DEFAULT_INTERVAL


def duration(seconds: float) -> str:
    """`45s`, `1m30s`, `2h05m`: a time a reader takes in at a glance."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s // 60 % 60:02d}m"


class _Lines:
    """Progress as plain lines, for a stderr that is not a terminal: a thread writes the state every
    `every` seconds (so a long phase with no call still shows a line), and `close` writes the last."""

    def __init__(self, title: str, unit: str, console: Any, every: float):
        self._title, self._unit, self._console, self._every = title, unit, console, every
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._start = time.monotonic()
        self._phase: tuple[float, int] = (self._start, 0)
        self._state: tuple[int, int, str] | None = None
        self._written = 0
        self._thread = threading.Thread(target=self._loop, name="ctxgauge-progress", daemon=True)
        self._thread.start()

    def update(self, done: int, total: int, label: str, new_phase: bool) -> None:
        with self._lock:
            if new_phase:
                self._phase = (time.monotonic(), done)
            self._state = (done, total, label)

    def line(self, *, final: bool = False) -> str:
        now = time.monotonic()
        with self._lock:
            state, (since, base) = self._state, self._phase
        if state is None:
            return f"{self._title}: starting, {duration(now - self._start)} elapsed"
        done, total, label = state
        word = self._unit(label) if callable(self._unit) else self._unit
        unit = f" {word}" if word else ""
        text = f"{self._title}: {done}/{total}{unit}"
        rate = (done - base) / (now - since) if now > since and done > base else None
        if final:
            text += f", {duration(now - self._start)} in all"
        elif rate:
            text += (f", {rate:.1f}/s" if rate >= 0.1 else f", {60 * rate:.1f}/min") + \
                f", ~{duration(max(total - done, 0) / rate)} left"
        else:
            text += f", {duration(now - self._start)} elapsed"
        return f"{text} ({label})" if label else text

    def _write(self, text: str) -> None:
        # soft_wrap: one line however narrow the log's reader is; markup off: the label is user text.
        self._console.print(text, markup=False, highlight=False, soft_wrap=True)
        self._written += 1

    def _loop(self) -> None:
        while not self._stop.wait(self._every):
            self._write(self.line())

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        if self._written:  # a run shorter than one interval: its result follows at once, no line needed
            self._write(self.line(final=True))


class ProgressDisplay:
    """`with ProgressDisplay("replay", unit="commits") as progress: replay(config, progress=progress)`.

    `unit` names what a line counts (`replay: 120/400 commits`): a word, or a function of the label for a
    pipeline whose phases count different things (`ctxgauge.demo.phase_unit`)."""

    def __init__(self, title: str, console: Any = None, *, unit: "str | Callable[[str], str]" = ""):
        self._title, self._console, self._unit = title, console or err_console, unit
        self._total: int | None = None
        self._done = 0
        self._lines: _Lines | None = None

    def __enter__(self) -> "ProgressDisplay":
        # markup=False: the label is user text (a case id, an engine spec, a commit subject); read as markup,
        # `a[/b]` would raise MarkupError in the refresh thread and `[bold]` would vanish.
        # The label is the one column that gives way (`_fit_label`): left to Rich, a long label at 80
        # columns squeezed the count and the clocks to `118/…` and `0:00…`.
        self._label = TextColumn(f"{self._title} {{task.description}}", markup=False,
                                 table_column=Column(no_wrap=True, overflow="ellipsis"))
        self._bar = Progress(self._label, BarColumn(bar_width=_BAR), MofNCompleteColumn(),
                             _Rate(), TextColumn("left"), TimeRemainingColumn(), _Elapsed(time.monotonic()),
                             console=self._console, transient=True, disable=not self._console.is_terminal)
        self._bar.__enter__()
        self._task = self._bar.add_task("", total=None)
        self._engine_task = None
        self._engine_lines = None
        if self._console.is_terminal:
            # An engine's own progress line (minilm's embedding) is shown in this bar, not written under it.
            from ctxgauge.engines.minilm._progress import shown_by
            self._engine_lines = shown_by(self._show_detail)
            self._engine_lines.__enter__()
        if not self._console.is_terminal:
            self._lines = _Lines(self._title, self._unit, self._console, interval())
        return self

    def _fit_label(self, total: int) -> None:
        # Every other column at its widest (count `T/T`, rate, `left`, two clocks, one space between
        # columns): the label takes what remains, and ends in `…` when longer.
        figures = _BAR + 2 * len(str(max(total, 1))) + 1 + _FIGURES
        self._label.get_table_column().max_width = max(12, self._console.width - figures)

    def _show_detail(self, label: str, done: int, total: int) -> None:
        # A second line under the bar while an engine's long work lasts (`minilm: embedding 13/177`).
        if not label:
            if self._engine_task is not None:
                self._bar.remove_task(self._engine_task)
            self._engine_task = None
        elif self._engine_task is None:
            self._engine_task = self._bar.add_task(f"· {label}", total=max(total, 1), completed=done)
        else:
            self._bar.update(self._engine_task, total=max(total, 1), completed=done)

    def __call__(self, done: int, total: int, label: str) -> None:
        self._fit_label(total)
        if self._lines is not None:
            self._lines.update(done, total, label, total != self._total or done < self._done)
        if total != self._total or done < self._done:
            # A new phase: its rate and time left start afresh (Rich also freezes a task that once
            # reached its total, so the task is reset, never left finished).
            self._bar.reset(self._task, total=max(total, 1), completed=done, description=label)
        else:
            self._bar.update(self._task, completed=done, description=label)
        self._total, self._done = total, done

    def line(self) -> str:
        """The bar's line as it shows now (plain text; empty when not on a terminal)."""
        if self._bar.disable:
            return ""
        plain = Console(file=io.StringIO(), width=self._console.width, color_system=None)
        plain.print(self._bar.make_tasks_table(self._bar.tasks))
        return plain.file.getvalue().strip()

    def __exit__(self, *exc: object) -> None:
        if self._engine_lines is not None:
            self._engine_lines.__exit__(None, None, None)
        if self._lines is not None:
            self._lines.close()
        self._bar.__exit__(*exc)  # type: ignore[arg-type]
