"""The one console every command prints through: Rich's, with data made harmless to the terminal.

A commit subject, a path, a run directory's name or an engine's message may hold escape sequences (OSC 52
writes the clipboard, OSC 0 the window title, `ESC[2J` clears the screen) or bidirectional controls that
reorder what is shown. Escaping them where each string is formatted would need every call site to remember;
here they are escaped at the last step, in the text of every segment Rich writes, whichever table, panel or
line it came from (`_text.terminal_text`). Rich's own segments (styles, cursor moves, a live bar's redraw)
carry their escapes in the style or as control segments, which pass unchanged: ctxgauge's markup still colours,
data never does.

Its width, for stdout: a terminal's width when stdout is one; `COLUMNS` when it is set (the width a user or a
script declares); and otherwise (a pipe, a file, a CI log) no width at all, so no line is ever wrapped or cut
and every table is drawn at its natural width (`report._fit`). Rich alone assumes 80 columns there, or takes
the width of whatever terminal stdin or stderr happens to be.
"""

from __future__ import annotations

from typing import Iterable

from rich.console import Console, ConsoleDimensions
from rich.segment import Segment

from ctxgauge.cli._text import terminal_text


UNBOUNDED = 100_000
"""The width stdout lays out for without a terminal and without COLUMNS: no limit in practice."""


class SafeConsole(Console):
    """A Rich console whose data text is passed through `terminal_text` just before it is written, and whose
    stdout has no width limit without a terminal and without COLUMNS (the module docstring)."""

    @property
    def size(self) -> ConsoleDimensions:
        dims = super().size
        isatty = getattr(self.file, "isatty", None)
        if (not self.stderr and self._width is None and not self._environ.get("COLUMNS", "").isdigit()
                and not (isatty and isatty())):
            return ConsoleDimensions(UNBOUNDED, dims.height)
        return dims

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # Rich's one funnel from segments to the characters written (print, log, Live and progress all pass
        # here); a segment's text is data, its style and control codes are Rich's own.
        return super()._render_buffer(
            seg if seg.control else Segment(terminal_text(seg.text), seg.style, seg.control) for seg in buffer)
