"""The report as Markdown: the same model as the HTML page, figures as tables and text grids.

Bars become `value [low, high]` cells (bar glyphs misalign in proportional fonts); grids become one line
of symbols per system in a code block. Links to runs are relative to where the file is written.

Every string that comes from data (a commit subject, a path, an engine or run name, `--title`) is text, never
Markdown: `md_text` backslash-escapes every character that starts markup, so no `<img onerror=...>` or
`</script>` is raw HTML, no `![](http://remote)` an image, no `[x](javascript:...)` a link, and no `http\\://`
is turned into one by an autolinker; a grid label in a code block cannot close its fence (`_fence`). The
only live links are the ones ctxgauge builds to its run files, and their targets are percent-encoded
relative paths (`Links`), so a run named `javascript:x` is a path, not a scheme.
"""

from __future__ import annotations

import re
from pathlib import Path

from ctxgauge._output import MARK_LINE
from ctxgauge.report._common import fmt_interval, pval
from ctxgauge.report._html import Links
from ctxgauge.report._model import BarsFigure, Block, Cell, GridFigure, PairedFigure, Report, Table

GRID_SYMBOLS = {"hit": "█", "near": "▓", "miss": "·", "unscorable": "○", "failed": "x", "absent": " ",
                "pass": "█", "fail": "·", "adjudicate": "?", "infra": "!", "not-judged": "-", "skipped": " "}


_SPECIAL = frozenset("\\`*_[]<>!|&~$#")
"""The ASCII punctuation that can start Markdown (emphasis, code, links and images, raw HTML and autolinks,
entities, strikethrough, math, headings, table cells): each is escaped with a backslash (CommonMark's escape,
a literal character). The rest (`.`, `(`, `-`, `:`, ...) is left as typed, so `c.py (rank 2)` reads as itself
in the source too; the three autolinks GitHub makes of bare text are broken apart by `_AUTOLINKS`."""
_AUTOLINKS = re.compile(r"(?i)(?<=www)\.|:(?=//)|@(?=[\w.+-]*\.)")
"""`www.x`, `scheme://x` and `a@b.c` (GFM's extended autolinks): a backslash before the `.`, `:` or `@`."""
_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def md_text(text: str) -> str:
    """Data as Markdown text that renders as exactly those characters: the characters that start markup
    backslash-escaped (`_SPECIAL`, `_AUTOLINKS`), line breaks as
    spaces (a newline would end a table row or a heading), other control characters dropped."""
    out = []
    text = str(text)
    for i, c in enumerate(text):
        if c == "_" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            out.append(c)  # an underscore inside a word opens or closes nothing (`questions_scored` stays as is)
        elif c in _SPECIAL:
            out.append("\\" + c)
        elif c in _BREAKS:
            out.append(" ")
        elif c == "\t" or (ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F):
            out.append(c)
    return _AUTOLINKS.sub(lambda m: "\\" + m.group(0), "".join(out))


_esc = md_text


def _fence(lines: list[str]) -> str:
    # A code block's fence must be longer than any run of backticks inside it, or a label holding ``` ends
    # the block and what follows is Markdown again.
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def _code_line(text: str) -> str:
    return "".join(" " if c in _BREAKS else c for c in str(text) if c == "\t" or c in _BREAKS or ord(c) >= 0x20)


def _cell(c: Cell, links: Links) -> str:
    text = _esc(c.text)
    if c.style in ("bad", "warn"):
        text = f"**{text}**"
    href = links(c.run, c.file) if c.run else None
    return f"[{text}]({href})" if href else text


def _md_table(columns: list[str], rows: list[list[str]], numeric: list[bool]) -> list[str]:
    align = ["---:" if n else "---" for n in numeric]
    out = ["| " + " | ".join(_esc(c) for c in columns) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _table(t: Table, links: Links) -> list[str]:
    numeric = [bool(t.rows) and all(r[i].num for r in t.rows) for i in range(len(t.columns))]
    return _md_table(t.columns, [[_cell(c, links) for c in r] for r in t.rows], numeric)


def _bars(fig: BarsFigure, links: Links) -> list[str]:
    labels = list(dict.fromkeys(b.label for p in fig.panels for b in p.bars))
    runs = {b.label: b.run for p in fig.panels for b in p.bars}
    rows = []
    for label in labels:
        row = [_cell(Cell(label, run=runs.get(label)), links)]
        for p in fig.panels:
            bar = next((b for b in p.bars if b.label == label), None)
            if bar is None or bar.value is None:
                row.append("-")
                continue
            text = _esc(bar.text) if bar.text else f"{bar.value:.3f}"
            if bar.low is not None and bar.high is not None:
                text += " " + fmt_interval(bar.low, bar.high)
            row.append(text)
        rows.append(row)
    return _md_table(["system"] + [p.metric for p in fig.panels], rows, [False] + [True] * len(fig.panels))


def _paired(fig: PairedFigure) -> list[str]:
    rows = [[_esc(r.metric), f"{r.mean_a:.3f}", f"{r.mean_b:.3f}", f"{r.diff:+.3f} {fmt_interval(r.low, r.high, signed=True)}",
             pval(r.p_value), f"{r.wins} / {r.ties} / {r.losses}"] for r in fig.rows]
    return _md_table(["metric", fig.a, fig.b, "difference [95%]", "p", f"win / tie / loss ({fig.n})"], rows,
                     [False, True, True, True, True, True])


def _grid(fig: GridFigure) -> list[str]:
    labels = [_code_line(r.label) for r in fig.rows]
    width = max([len(label) for label in labels] + [4])
    body = [f"{label:<{width}}  " + "".join(GRID_SYMBOLS.get(c, "?") for c in r.cells) for label, r in zip(labels, fig.rows)]
    fence = _fence(body)
    lines = [fence, *body, fence]
    lines.append(" · ".join(f"`{GRID_SYMBOLS.get(s, '?')}` {_esc(d)}" for s, d in fig.legend.items()))
    return lines


def _block(block: Block, links: Links) -> list[str]:
    out = [f"### {_esc(block.title)}", ""]
    if isinstance(block, Table):
        out += _table(block, links)
    elif isinstance(block, BarsFigure):
        out += _bars(block, links)
    elif isinstance(block, PairedFigure):
        out += _paired(block)
    else:
        out += _grid(block)
    if block.caption:
        out += ["", f"_{_esc(block.caption)}_"]
    if block.sources:
        srcs = ", ".join(f"[{_esc(s)}]({h})" if (h := links(s)) else _esc(s) for s in block.sources)
        out += ["", f"From run{'s' if len(block.sources) > 1 else ''}: {srcs}"]
    return out + [""]


def render_markdown(report: Report, base: Path | None = None, *, details: bool = False) -> str:
    """The report as Markdown text; links relative to `base` (the directory the file will be written to);
    per-item tables (the misses) only with `details`."""
    links = Links(report, base)
    # The marker first: a later `report --md` onto this file knows ctxgauge wrote it (`_output`).
    out = [MARK_LINE, f"# {_esc(report.title)}", "", f"{len(report.runs)} runs. Every figure names the run it comes from.",
           ""]
    for sec in report.sections:
        out += [f"## {_esc(sec.title)}", ""]
        out += [f"- {_esc(n)}" for n in sec.notes] + ([""] if sec.notes else [])
        for block in sec.blocks:
            if details or not getattr(block, "detail", False):
                out += _block(block, links)
    # Figures first, the Runs table last, as in every view; a heading of its own level, not one more table
    # of the last suite's section.
    runs = _block(report.overview, links)
    out += [runs[0].removeprefix("#"), *runs[1:]]
    return "\n".join(out).rstrip("\n") + "\n"


def write_markdown(report: Report, path: str | Path, *, details: bool = False) -> Path:
    """Write the Markdown atomically to `path`, links relative to its directory; returns the path."""
    from ctxgauge._io import write_text_atomic

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, render_markdown(report, path.parent, details=details))
