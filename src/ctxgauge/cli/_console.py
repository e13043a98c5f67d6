"""The one console every command prints through: Rich's, with data made harmless to the terminal.

A commit subject, a path, a run directory's name or an engine's message may hold escape sequences (OSC 52
writes the clipboard, OSC 0 the window title, `ESC[2J` clears the screen) or bidirectional controls that
reorder what is shown. Escaping them where each string is formatted would need every call site to remember;
here they are escaped at the last step, in the text of every segment Rich writes, whichever table, panel or
line it came from (`_text.terminal_text`). Rich's own segments (styles, cursor moves, a live bar's redraw)
carry their escapes in the style or as control segments, which pass unchanged: ctxgauge's markup still colours,
data never does.
"""

from __future__ import annotations

from typing import Iterable

from rich.console import Console
from rich.segment import Segment

from ctxgauge.cli._text import terminal_text


class SafeConsole(Console):
    """A Rich console whose data text is passed through `terminal_text` just before it is written."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # Rich's one funnel from segments to the characters written (print, log, Live and progress all pass
        # here); a segment's text is data, its style and control codes are Rich's own.
        return super()._render_buffer(
            seg if seg.control else Segment(terminal_text(seg.text), seg.style, seg.control) for seg in buffer)
