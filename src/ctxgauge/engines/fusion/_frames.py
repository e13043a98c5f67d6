"""Stack-trace frames a request quotes, mapped to the repository's files, the innermost weighted most.

An issue text that pastes a traceback names the files the failure went through, in order. The frame
where the program failed inside the project (the innermost project frame) is most often the file to
change; frames further out called it. Forms read (one frame per match, each with its path and, where the
form has one, the function):

- Python: `File "path/x.py", line 12, in func`; IPython's `File ~/path/x.py:12, in func(...)` and,
  before IPython 7, `path/x.py in func(...)` at the start of a line;
  pytest's `path/x.py:12: in func` and `path/x.py:12: ErrorType`; a bare `path/x.py:12` (logging
  records, `SKIPPED [1] path:12: reason`). Innermost last.
- JavaScript / TypeScript: `at func (path/x.js:12:5)`, `at path/x.js:12:5`. Innermost first.
- Rust: `at ./src/x.rs:12:5` (backtraces), `panicked at src/x.rs:12:5`. Innermost first.
- Go: `\tpath/x.go:12 +0x1d` (goroutine dumps). Innermost first.

A frame's path (absolute, `~`-relative, Windows, inside site-packages or an egg) is mapped to corpus
paths by its longest suffix of at least two components (`.../site-packages/pkg/mod.py` finds
`src/pkg/mod.py`); a frame of one component only by a corpus path equal to it. So frames in the standard
library and in other packages match nothing and drop out (`/usr/lib/python3.8/pathlib.py` is not the
project's `src/pkg/pathlib.py`: `lib/pathlib.py` is no suffix of it), and so does a frame under a
standard-library directory (`lib/pythonX.Y/` outside `site-packages`) whatever its suffix.

Frames are grouped into traces (a `Traceback (most recent call last):` header or a gap of more than
`GAP` lines starts a new one); within a trace the project frames are counted from the innermost, the
n-th (from 0) weighing `DECAY ** n`; a file takes its best frame's weight over all traces, divided by the
number of corpus files its frame path matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ctxgauge.engines.fusion._request import PathIndex

DECAY = 0.7
"""Weight of each frame further out than the previous project frame of its trace (the innermost: 1)."""
GAP = 30
"""Lines between two frames beyond which they belong to different traces."""

_SRC = r"[\w.\-]+\.(?:py|pyx|pyi|js|jsx|mjs|cjs|ts|tsx|rs|go)"
_PATH = r"(?P<path>(?:[A-Za-z]:)?[\w.\-~/\\+@]*?" + _SRC + r")"
_FUNC = r"(?P<func>[\w<>.$\[\]]+)"
# (regex, innermost first?) in the order tried on a line; the first form that matches a line reads it.
_FORMS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (re.compile(r'File "' + _PATH + r'", line \d+(?:, in ' + _FUNC + ")?"), False),  # Python
    (re.compile(r"File " + _PATH + r":\d+(?:, in " + _FUNC + ")?"), False),  # IPython
    (re.compile(r"^\s*" + _PATH + r" in " + _FUNC + r"\("), False),  # IPython before 7: `path in f(args)`
    (re.compile(r"\bat (?:(?:async )?" + _FUNC + r" )?\(?" + _PATH + r":\d+:\d+\)?"), True),  # JS, Rust
    (re.compile(r"^\s+" + _PATH + r":\d+ \+0x[0-9a-f]+"), True),  # Go
    (re.compile(r"(?<![\w/\\.\-])" + _PATH + r":\d+(?::\d+)?(?:: in " + _FUNC + ")?"), False),  # pytest, bare
)
_HEADER = re.compile(r"Traceback \(most recent call last\)")
_STDLIB = re.compile(r"(?:^|/)lib(?:64)?/python\d(?:\.\d+)?/(?!.*(?:site|dist)-packages/)", re.I)


@dataclass(frozen=True)
class Frame:
    """One stack frame read from a request: its path as written, the function if the form names it, the
    trace it belongs to (0, 1, ... in text order) and whether its trace lists the innermost frame first."""

    path: str
    function: str | None
    trace: int
    innermost_first: bool


def frames(text: str) -> list[Frame]:
    """Every frame the request quotes, in text order (module docstring for the forms and the traces)."""
    out: list[Frame] = []
    trace, last_line = -1, None
    for lineno, line in enumerate(text.splitlines()):
        if _HEADER.search(line):
            trace, last_line = trace + 1, lineno
            continue
        for rx, inner_first in _FORMS:
            found = list(rx.finditer(line))
            if not found:
                continue
            if last_line is None or lineno - last_line > GAP:
                trace += 1
            last_line = lineno
            for m in found:
                out.append(Frame(m.group("path"), m.groupdict().get("func"), max(trace, 0), inner_first))
            break
    return out


def _parts(path: str) -> list[str]:
    return [p for p in path.replace("\\", "/").split("/") if p and p not in (".", "..", "~")]


def frame_files(path: str, index: PathIndex) -> list[str]:
    """Corpus paths a frame's path names: the longest suffix of two components or more that matches, or,
    for a one-component frame, the corpus path equal to it; none for a standard-library frame."""
    norm = path.replace("\\", "/")
    if _STDLIB.search(norm):
        return []
    parts = _parts(norm)
    if len(parts) == 1:
        return index.exact(parts[0])
    for i in range(len(parts) - 1):
        hit = index.exact_suffix("/".join(parts[i:]))
        if hit:
            return hit
    return []


def frame_scores(text: str, index: PathIndex) -> dict[str, float]:
    """path -> weight of the best project frame naming it (`DECAY ** n` for the n-th project frame from
    the innermost of its trace, over the number of files the frame's path matched)."""
    by_trace: dict[int, list[tuple[Frame, list[str]]]] = {}
    for fr in frames(text):
        files = frame_files(fr.path, index)
        if files:
            by_trace.setdefault(fr.trace, []).append((fr, files))
    out: dict[str, float] = {}
    for _, rows in sorted(by_trace.items()):
        ordered: Sequence = rows if rows[0][0].innermost_first else rows[::-1]
        # Consecutive frames in one file are one step out of the code: recursion and helpers in a file
        # should not push the next file's frame down.
        n, prev = -1, None
        for fr, files in ordered:
            if files != prev:
                n, prev = n + 1, files
            w = DECAY ** n / len(files)
            for f in files:
                out[f] = max(out.get(f, 0.0), w)
    return dict(sorted(out.items()))


def frame_names(text: str, index: PathIndex) -> list[str]:
    """The functions the request's project frames name, each as its last dotted segment, lowercased, in
    text order without repeats (`in Plot._plot` -> `_plot`): what a trace says the failure went through."""
    names: dict[str, None] = {}
    for fr in frames(text):
        if fr.function and not fr.function.startswith("<") and frame_files(fr.path, index):
            names.setdefault(fr.function.rsplit(".", 1)[-1].lower(), None)
    return list(names)
