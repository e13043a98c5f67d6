"""The one progress display of the command line: a bar on stderr (stdout stays clean for --json and the
report), shown only on a terminal, removed when the work ends.

It is a `progress(done, total, label)` callback (suites/_progress.py). A new phase (the total changes or the
count goes back) restarts the bar's rate and time left; the elapsed clock counts from the display's start
and moves on its own (Rich refreshes it), so a long phase never looks stalled.
"""

from __future__ import annotations

import io
import time
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeRemainingColumn
from rich.console import Console
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


class ProgressDisplay:
    """`with ProgressDisplay("replay") as progress: replay(config, progress=progress)`."""

    def __init__(self, title: str, console: Any = None):
        self._title, self._console = title, console or err_console
        self._total: int | None = None
        self._done = 0

    def __enter__(self) -> "ProgressDisplay":
        # markup=False: the label is user text (a case id, an engine spec, a commit subject); read as markup,
        # `a[/b]` would raise MarkupError in the refresh thread and `[bold]` would vanish.
        self._bar = Progress(TextColumn(f"{self._title} {{task.description}}", markup=False), BarColumn(),
                             MofNCompleteColumn(),
                             _Rate(), TextColumn("left"), TimeRemainingColumn(), _Elapsed(time.monotonic()),
                             console=self._console, transient=True, disable=not self._console.is_terminal)
        self._bar.__enter__()
        self._task = self._bar.add_task("", total=None)
        return self

    def __call__(self, done: int, total: int, label: str) -> None:
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
        self._bar.__exit__(*exc)  # type: ignore[arg-type]
