"""Tables laid out for the width they have: no id, path, number or interval split or cut, at any width.

Rich's own table layout squeezes every column in proportion once the wrappable ones cannot give more, and
folds or cuts what no longer fits: `identi cal`, `finge rprin t`, a run id broken over three lines, an
interval cut to `0.750–0.9…`, a header `win/tie/lo…`. Here every column says what its cells are, and the
width of each column is decided before Rich sees the table:

- `WHOLE`: one token per cell (an id, a path, a time, a number, an interval): never wrapped, never cut.
- `WORDS`: tokens separated by spaces (a list of engines, a status with its reason): wrapped between words,
  never inside one.
  With a `Col.sep` (`", "`), the words are the pieces between separators: a figure `recall@5 0.912` in
  `hit@5 0.925, recall@5 0.912` is one word, never split from its value.
- `FREE`: free text (a commit subject, an engine's message): wrapped between words, and the only cells that
  may end in `…` when a word is longer than the column (`--json` holds them whole).

A header wraps between its words, never inside one. When the table cannot fit even with every column at its
narrowest, columns are left out in their declared order (`Col.drop`: 1 first; a column without one is
never left out), and a dim line under the table names them. When it still cannot fit (a matrix of many
systems), its columns are shown in several tables side by side in turn, each repeating the first column
(and the narrowest column that tells rows apart when first cells repeat: `Fitted.keys`);
and when not even two columns fit, each row is printed as `header: value` lines: nothing is ever cut.

The width is the one Rich gives at render time (`options.max_width`): a console on a terminal gives the
terminal's, `COLUMNS` gives its own, and ctxgauge's stdout console without a terminal gives no limit
(`cli._common`), so a pipe or a CI log gets every table at its natural width.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table as RichTable
from rich.text import Text

WHOLE, WORDS, FREE = "whole", "words", "free"
FREE_FLOOR = 12
"""The narrowest a free-text column is made before columns are left out (its words then end in `…`)."""


@dataclass(frozen=True)
class Col:
    """One column: its header, what its cells are (`WHOLE`, `WORDS`, `FREE`), alignment and drop rank."""

    header: str
    kind: str = WORDS
    right: bool = False
    drop: int | None = None
    """Rank in the order a too-narrow terminal leaves columns out (1 first, columns of one rank together);
    None: never left out."""
    sep: str | None = None
    """For `WORDS`: the separator between the column's words (`", "`: each `name value` piece is one word,
    wrapped after the separator, never inside a piece); None: words are separated by spaces."""


def _text(cell: Text | str) -> Text:
    # A str is Rich markup written by ctxgauge (user text inside it already escaped by the caller).
    return cell if isinstance(cell, Text) else Text.from_markup(cell)


_WORD = re.compile(r"\[[^\]\s]*, [^\]\s]*\]|\S+")
"""A word, an interval `[0.250, 1.000]` counting as one (a column is never made narrower than one)."""


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in _WORD.findall(text)), default=0)


def _pieces(text: str, sep: str) -> list[str]:
    """`text`'s words when `sep` separates them: each but the last keeps the separator's mark (`a 1,`)."""
    parts = text.split(sep)
    return [p + sep.rstrip() for p in parts[:-1]] + parts[-1:]


def _least(text: str, col: Col) -> int:
    if col.sep:
        return max((cell_len(p) for p in _pieces(text, col.sep)), default=0)
    return _longest_word(text)


def _wrap_pieces(cell: Text, sep: str, width: int) -> Text:
    """`cell` broken into lines of at most `width` cells after separators only (Rich would break at any
    space, splitting `recall@5` from its value), styles kept."""
    text, mark, gap = cell.plain, sep.rstrip(), sep[len(sep.rstrip()):]
    out, line, start = Text(), 0, 0
    for n, part in enumerate(text.split(sep)):
        end = start + len(part) + (len(mark) if n < text.count(sep) else 0)
        piece = cell[start:end]
        size = cell_len(piece.plain)
        if line and line + cell_len(gap) + size > width:
            out.append("\n")
            line = 0
        elif line:
            out.append(gap)
            line += cell_len(gap)
        out.append(piece)
        line += size
        start += len(part) + len(sep)
    return out


def _longest_line(text: str) -> int:
    return max((cell_len(line) for line in text.split("\n")), default=0)


def widths(cols: Sequence[Col], rows: Sequence[Sequence[Text]], available: int, *,
           squeeze: bool = True) -> list[int] | None:
    """Each column's content width for a table at most `available` cells wide (Rich's default box and
    padding: 3 cells a column and 1), or None when even the narrowest layout is wider (without `squeeze`:
    when the natural layout is)."""
    need, natural = [], []
    for i, col in enumerate(cols):
        cells = [r[i].plain for r in rows]
        head = _longest_word(col.header)
        longest = max((_longest_line(c) for c in cells), default=0)
        if col.kind == WHOLE:
            least = max(longest, head)
        elif col.kind == WORDS:
            least = max(max((_least(c, col) for c in cells), default=0), head)
        else:
            least = max(head, min(longest, FREE_FLOOR))
        need.append(max(least, 1))
        natural.append(max(longest, _longest_line(col.header), least))
    overhead = 3 * len(cols) + 1
    if sum(need if squeeze else natural) + overhead > available:
        return None
    out = list(natural)
    excess = sum(out) + overhead - available
    while excess > 0:  # narrow the widest column that can give, one cell at a time
        i = max((j for j in range(len(out)) if out[j] > need[j]), key=lambda j: (out[j], -j))
        out[i] -= 1
        excess -= 1
    return out


class Fitted:
    """A table that lays itself out for the width it is rendered at (the module docstring)."""

    def __init__(self, cols: Sequence[Col], rows: Iterable[Sequence[Text | str]], *, title: str | Text = "",
                 ends: Sequence[bool] = (), header_style: str = "bold dim", title_style: str = "bold") -> None:
        self.cols = list(cols)
        self.rows = [[_text(c) for c in r] for r in rows]
        self.title = title if isinstance(title, Text) else Text.from_markup(title, style=title_style)
        self.ends = list(ends)
        self.header_style = header_style

    def shown(self, available: int) -> tuple[list[int], list[int] | None]:
        """The columns shown at `available` cells and their widths (None: not even the kept ones fit)."""
        keep = list(range(len(self.cols)))
        while True:
            got = widths([self.cols[i] for i in keep], [[r[i] for i in keep] for r in self.rows], available)
            droppable = [i for i in keep if self.cols[i].drop is not None]
            if got is not None or not droppable:
                return keep, got
            rank = min(self.cols[i].drop for i in droppable)  # columns of one rank go together (two means)
            keep = [i for i in keep if self.cols[i].drop != rank]

    def _fits(self, keep: list[int], available: int, squeeze: bool = True) -> list[int] | None:
        return widths([self.cols[i] for i in keep], [[r[i] for i in keep] for r in self.rows], available,
                      squeeze=squeeze)

    def keys(self, keep: list[int]) -> list[int]:
        """The columns every side-by-side table repeats: the first, and when its cells repeat (a commit
        missed by two engines), the narrowest kept column that tells those rows apart. Without it the
        misses at 80 columns read `c809995ec9 │ add tinygo test case` twice, with no engine to say whose."""
        first = keep[0]

        def distinct(cols: list[int]) -> bool:
            seen = [tuple(r[i].plain for i in cols) for r in self.rows]
            return len(set(seen)) == len(seen)

        if distinct([first]):
            return [first]
        narrow = sorted(keep[1:], key=lambda i: (max((cell_len(r[i].plain) for r in self.rows), default=0), i))
        return next(([first, i] for i in narrow if distinct([first, i])), [first])

    def groups(self, keep: list[int], available: int) -> list[tuple[list[int], list[int]]] | None:
        """The kept columns in side-by-side tables, each repeating the key columns (`keys`: the first,
        for a matrix of many systems), or None when not even the keys and one other column fit."""
        keys = self.keys(keep)
        out, group = [], list(keys)
        for i in [i for i in keep if i not in keys]:
            # A column joins a table while the table fits as drawn at its natural width; squeezed only alone.
            if self._fits(sorted(group + [i]), available, squeeze=len(group) == len(keys)) is not None:
                group.append(i)
                continue
            if len(group) == len(keys):
                return None
            out.append(sorted(group))
            group = [*keys, i]
            if self._fits(sorted(group), available) is None:
                return None
        out.append(sorted(group))
        return [(g, self._fits(g, available) or []) for g in out]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        available = options.max_width
        keep, got = self.shown(available)
        if self.title.plain:
            yield self.title
        tables = [(keep, got)] if got is not None else (self.groups(keep, available) if len(keep) > 1 else None)
        if tables is None:
            yield from self._stacked(list(range(len(self.cols))))  # every column: nothing is left out
            return
        for cols, got in tables:
            yield self._rich(cols, got)
        left_out = [self.cols[i].header for i in range(len(self.cols)) if i not in keep and self.cols[i].header]
        if left_out:
            # Short enough to fit 80 columns itself with one column named (`engines` at 80: `identity`).
            them = "it" if len(left_out) == 1 else "them"
            yield Text(f"left out at {available} columns: {', '.join(left_out)} (a wider terminal or --json "
                       f"shows {them})", style="dim")

    def _rich(self, keep: list[int], got: list[int]) -> RichTable:
        table = RichTable(header_style=self.header_style)
        for i, w in zip(keep, got):
            col = self.cols[i]
            table.add_column(Text(col.header, no_wrap=False, overflow="fold"), width=w,
                             justify="right" if col.right else "left", no_wrap=col.kind == WHOLE,
                             overflow="ellipsis" if col.kind == FREE else "fold")
        for n, row in enumerate(self.rows):
            cells = [_wrap_pieces(row[i], self.cols[i].sep, w) if self.cols[i].sep else row[i]
                     for i, w in zip(keep, got)]
            table.add_row(*cells, end_section=n < len(self.ends) and self.ends[n])
        return table

    def _stacked(self, keep: list[int]) -> RenderResult:
        # Not even the columns that are never left out fit side by side: one row after another instead.
        for row in self.rows:
            first, *rest = keep
            yield row[first]
            for i in rest:
                yield Text.assemble(("  " + (self.cols[i].header or "-") + ": ", self.header_style), row[i])
