"""Spans: the lines of a file a hit hands over, and the rules a hit's spans keep.

A span is `(start_line, end_line)`, 1-based and inclusive, in the file at the corpus revision. Lines are
split on `\\n`; a final line without `\\n` counts; an empty file has no lines and can only be returned
whole. A hit's spans are in the engine's order of preference; no spans means the whole file.

The rules, each named in the failure it gives (never mended: a measurement exists to find them):
- `span-shape`: each span is a pair of integers;
- `span-start`: start is at least 1;
- `span-order`: end is not before start;
- `span-range`: end is not past the file's last line (known only against a corpus);
- `span-overlap`: no two spans of one hit share a line;
- `span-count`: at most `MAX_SPANS` spans per hit.
"""

from __future__ import annotations

from typing import Any, Sequence

from ctxgauge.errors import EngineError
from ctxgauge.metrics._lines import Span, line_count, span_lines, whole

MAX_SPANS = 50
"""The most spans one hit may carry."""

__all__ = ["MAX_SPANS", "SPAN_RULES", "Span", "check_spans", "line_count", "span_lines", "spans_from_wire",
           "spans_json", "whole"]

SPAN_RULES = ("span-shape", "span-start", "span-order", "span-range", "span-overlap", "span-count")
"""Every rule a hit's spans keep, by the name its failure carries."""


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_spans(spans: Any, where: str, n_lines: int | None = None) -> tuple[Span, ...]:
    """`spans` as a tuple of `(start, end)` pairs if they keep every rule above, else EngineError naming
    the rule and `where` (the engine and hit it came from). `n_lines` is the file's line count when known;
    without it the range rule is not checked."""
    if isinstance(spans, (str, bytes)) or not isinstance(spans, (list, tuple)):
        raise EngineError(f"{where}: span-shape: spans must be a list of (start, end), got {str(spans)[:200]!r}")
    if len(spans) > MAX_SPANS:
        raise EngineError(f"{where}: span-count: {len(spans)} spans (at most {MAX_SPANS} per hit)")
    out: list[Span] = []
    for i, s in enumerate(spans):
        if not isinstance(s, (list, tuple)) or len(s) != 2 or not (_is_int(s[0]) and _is_int(s[1])):
            raise EngineError(f"{where}: span-shape: span {i} is not a pair of integers: {str(s)[:200]!r}")
        start, end = int(s[0]), int(s[1])
        if start < 1:
            raise EngineError(f"{where}: span-start: span {i} starts at line {start} (lines count from 1)")
        if end < start:
            raise EngineError(f"{where}: span-order: span {i} ends at line {end}, before its start {start}")
        if n_lines is not None and end > n_lines:
            raise EngineError(f"{where}: span-range: span {i} ({start}-{end}) ends past the file's "
                              f"{n_lines} lines")
        out.append((start, end))
    ordered = sorted(out)
    for a, b in zip(ordered, ordered[1:]):
        if b[0] <= a[1]:
            raise EngineError(f"{where}: span-overlap: spans {a[0]}-{a[1]} and {b[0]}-{b[1]} share lines")
    return tuple(out)


def spans_from_wire(raw: Any, where: str) -> tuple[Span, ...]:
    """A command engine's `"spans": [{"start": N, "end": M}, ...]` as checked pairs (range unchecked: the
    corpus checks it). Absent or null is no spans (the whole file)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise EngineError(f"{where}: span-shape: spans must be a list of {{start, end}}, got {str(raw)[:200]!r}")
    pairs = []
    for i, s in enumerate(raw):
        if not isinstance(s, dict) or set(s) != {"start", "end"}:
            raise EngineError(f"{where}: span-shape: span {i} must be {{\"start\": N, \"end\": M}}, "
                              f"got {str(s)[:200]!r}")
        pairs.append((s["start"], s["end"]))
    return check_spans(pairs, where)


def spans_json(spans: Sequence[Span]) -> list[list[int]]:
    """Spans as ctxgauge's JSON writes them: `[[s, e], ...]` in the engine's order."""
    return [[s, e] for s, e in spans]
