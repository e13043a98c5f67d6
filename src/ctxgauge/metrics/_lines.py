"""Lines of a file as spans count them: split on `\\n`, a final line without `\\n` counted, 1-based.

Shared by the span metrics, the packer and the engine contract's span rules (which import it from here,
the lower layer), so a file's line count has one definition.
"""

from __future__ import annotations

from typing import Iterable

Span = tuple[int, int]
"""`(start_line, end_line)`, 1-based and inclusive."""


def line_count(data: bytes) -> int:
    """Lines of a file split on `\\n`, a final line without `\\n` counted; 0 for an empty file."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def split_lines(data: bytes) -> list[bytes]:
    """The file's lines, each with its `\\n` (the last one without, when the file has none at its end)."""
    # Not bytes.splitlines: it also breaks on a lone \r, and lines here are split on \n only.
    parts = data.split(b"\n")
    out = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def span_lines(spans: Iterable[Span]) -> frozenset[int]:
    """Every line the spans cover."""
    return frozenset(line for s, e in spans for line in range(s, e + 1))


def whole(n_lines: int) -> tuple[Span, ...]:
    """The one span of a whole file of `n_lines` lines (none for an empty file)."""
    return ((1, n_lines),) if n_lines > 0 else ()


def runs(lines: Iterable[int]) -> list[Span]:
    """Line numbers as sorted `(start, end)` runs of consecutive lines."""
    out: list[list[int]] = []
    for line in sorted(set(lines)):
        if out and line == out[-1][1] + 1:
            out[-1][1] = line
        else:
            out.append([line, line])
    return [(s, e) for s, e in out]
