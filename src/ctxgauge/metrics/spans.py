"""Context metrics: what a ranking's spans cover of the gold files and lines, at k files or under a token
budget, registered in the one metric registry with `reads="context"`.

Inputs, per unit:
- `Gold`: the expected files (file level) and, for those that have them, their gold lines (line level: the
  pre-image lines of docs/replay.md; a file without lines counts at file level only);
- `SpanContext`: the ranking as handed over, each hit's path and the lines it gives (its spans, or every
  line of the file when it has none), and `packed(budget)`, the same ranking packed under a token budget
  (`metrics.packing.pack`: headers count, whole lines only).

Families (`@k`: the top k files, all their spans, no budget; `_tokens@B`: the context packed under B tokens):

| family | per unit | level's units |
| --- | --- | --- |
| `file_coverage@k`, `file_coverage_tokens@B` | gold files with a line in the context / gold files | a gold file |
| `file_precision@k`, `file_precision_tokens@B` | gold files in the context / files in the context | a gold file |
| `line_coverage@k`, `line_coverage_tokens@B` | gold lines in the context / gold lines | a gold line |
| `line_precision@k`, `line_precision_tokens@B` | gold lines in the context / lines in the context | a gold line |
| `gold_lines_per_1k_tokens@B` | gold lines in the context per 1,000 context tokens (ctxgauge's own) | a gold line |
| `line_coverage_auc` | area under line coverage over budgets 250·2^i, i = 0..7 (ctxgauge's own) | a gold line |

Each is macro-averaged under its plain name: the mean of per-unit values over the units with gold at its
level (a unit with none is undefined there, as `recall` is for a unit with nothing relevant). The
`_micro` family of each (`line_coverage_micro@10`, `line_coverage_tokens_micro@4000`, ...) is the ratio
of sums over those units: every gold line weighs the same, whichever unit it belongs to. An empty context
scores 0 (precision included), as an empty ranking does. At `@k` a file is in the context when it is
among the top k (its lines may be none: an empty file); under a budget when at least one of its lines is.

The area: line coverage c_i at B_i = 250·2^i tokens, i = 0..7 (250 to 32,000), the trapezoid rule on
log2 of the budget (equal steps of 1), divided by the 7 steps, so it lies in [0, 1] and a context that
covers every gold line at 250 tokens scores 1.

Departures from ContextBench: its span metrics score a context without a budget; here `@k` is that and
`_tokens@B` adds the budget. Block level (tree-sitter definitions) is not here yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from ctxgauge.metrics._registry import get_metric_kind, parse_metric, register_metric

AUC_BUDGETS = tuple(250 * 2 ** i for i in range(8))
"""The budgets the area under line coverage is taken over: 250 to 32,000 tokens."""
DEFAULT_BUDGETS = (1000, 4000, 16000)
"""The budgets a suite reports when none is given."""

Pair = tuple[float, float]
"""A unit's (numerator, denominator) of one context metric."""


@dataclass(frozen=True)
class Gold:
    """What one unit should find: files, and the gold lines of those that have them."""

    files: frozenset[str]
    """Gold files (file level)."""
    lines: Mapping[str, frozenset[int]] = field(default_factory=dict)
    """Gold lines by path; only files with at least one line (the others count at file level only)."""

    @classmethod
    def of(cls, files: Iterable[str], lines: Mapping[str, Iterable[tuple[int, int]]]) -> "Gold":
        """Gold from files and `{path: [(start, end), ...]}` (a path without spans: file level only)."""
        files = frozenset(files)
        by_path = {p: frozenset(x for s, e in spans for x in range(s, e + 1)) for p, spans in lines.items()
                   if p in files}
        return cls(files, {p: v for p, v in by_path.items() if v})

    @property
    def n_lines(self) -> int:
        return sum(len(v) for v in self.lines.values())


@dataclass(frozen=True)
class Packing:
    """A context packed under a budget, as the metrics read it."""

    lines: Mapping[str, frozenset[int]]
    """Lines in the context by path (files with at least one line)."""
    tokens: int
    """Tokens of the context."""


@dataclass(frozen=True)
class SpanContext:
    """One unit's retrieved context: the ranking with each hit's lines, and its packing under a budget."""

    ranked: tuple[tuple[str, frozenset[int]], ...]
    """Each hit in rank order: its path and every line it hands over (its spans, or the whole file)."""
    packed: Callable[[int], Packing] | None = None
    """budget -> the ranking packed under it; None when no tokenizer is at hand (`_tokens@B` then fails)."""

    def top(self, k: int) -> Packing:
        """The top k files with all their lines (tokens not counted: 0)."""
        out: dict[str, frozenset[int]] = {}
        for path, lines in self.ranked[:k]:
            out[path] = out.get(path, frozenset()) | lines
        return Packing(out, 0)

    def budget(self, b: int) -> Packing:
        if self.packed is None:
            raise ValueError("a _tokens@B metric needs the context's packing (SpanContext.packed)")
        return self.packed(b)


ContextFn = Callable[[SpanContext, Gold, "int | None"], "Pair | None"]
"""A context metric's implementation: (context, gold, k or budget) -> (numerator, denominator), or None when
the unit has no gold at the metric's level. A zero denominator scores 0."""


def _file_coverage(c: Packing, g: Gold, in_context: Callable[[str], bool]) -> Pair | None:
    if not g.files:
        return None
    return float(sum(1 for p in g.files if in_context(p))), float(len(g.files))


def _file_precision(c: Packing, g: Gold, files: Sequence[str]) -> Pair | None:
    if not g.files:
        return None
    return float(sum(1 for p in files if p in g.files)), float(len(files))


def _covered(c: Packing, g: Gold) -> int:
    return sum(len(c.lines.get(p, frozenset()) & gl) for p, gl in g.lines.items())


def _line_coverage(c: Packing, g: Gold) -> Pair | None:
    return (float(_covered(c, g)), float(g.n_lines)) if g.lines else None


def _line_precision(c: Packing, g: Gold) -> Pair | None:
    return (float(_covered(c, g)), float(sum(len(v) for v in c.lines.values()))) if g.lines else None


def _register(name: str, description: str, fn: ContextFn, *, k: str = "required", micro: bool = True,
              formula: str = "", ir_measures: str | None = None) -> None:
    register_metric(name, k=k, description=description, reads="context", formula=formula,
                    ir_measures=ir_measures)(fn)
    if micro:
        num, den = formula.split(" / ", 1)
        register_metric(f"{name}_micro", k=k, description=description + " Micro: ratio of sums over units.",
                        reads="context", aggregate="ratio", formula=f"Σ_units {num} / Σ_units {den}")(fn)


def _at_k(ctx: SpanContext, k: int | None) -> Packing:
    return ctx.top(k or len(ctx.ranked))


_register("file_coverage", "Share of the gold files among the {top} files.",
          lambda ctx, g, k: _file_coverage(_at_k(ctx, k), g, _at_k(ctx, k).lines.__contains__),
          formula="|G_files ∩ top_k| / |G_files|", ir_measures="R@{k}")
_register("file_precision", "Share of the {top} files that are gold files.",
          lambda ctx, g, k: _file_precision(_at_k(ctx, k), g, list(_at_k(ctx, k).lines)),
          formula="|G_files ∩ top_k| / |top_k|")
_register("line_coverage", "Share of the gold lines in the spans of the {top} files.",
          lambda ctx, g, k: _line_coverage(_at_k(ctx, k), g), formula="|G_lines ∩ L(top_k)| / |G_lines|")
_register("line_precision", "Share of the lines in the spans of the {top} files that are gold lines.",
          lambda ctx, g, k: _line_precision(_at_k(ctx, k), g), formula="|G_lines ∩ L(top_k)| / |L(top_k)|")
_register("file_coverage_tokens", "Share of the gold files with a line in the context packed under the budget.",
          lambda ctx, g, b: _file_coverage(ctx.budget(b), g, ctx.budget(b).lines.__contains__),
          formula="|G_files ∩ files(pack_B)| / |G_files|")
_register("file_precision_tokens", "Share of the files in the context packed under the budget that are gold files.",
          lambda ctx, g, b: _file_precision(ctx.budget(b), g, list(ctx.budget(b).lines)),
          formula="|G_files ∩ files(pack_B)| / |files(pack_B)|")
_register("line_coverage_tokens", "Share of the gold lines in the context packed under the budget.",
          lambda ctx, g, b: _line_coverage(ctx.budget(b), g), formula="|G_lines ∩ L(pack_B)| / |G_lines|")
_register("line_precision_tokens", "Share of the lines in the context packed under the budget that are gold lines.",
          lambda ctx, g, b: _line_precision(ctx.budget(b), g), formula="|G_lines ∩ L(pack_B)| / |L(pack_B)|")


def _per_1k(ctx: SpanContext, g: Gold, b: int | None) -> Pair | None:
    if not g.lines:
        return None
    packed = ctx.budget(b or 0)
    return float(_covered(packed, g)), packed.tokens / 1000.0


_register("gold_lines_per_1k_tokens", "Gold lines per 1,000 tokens of the context packed under the budget "
          "(ctxgauge's own measure).", _per_1k, formula="|G_lines ∩ L(pack_B)| / (tokens(pack_B) / 1000)")


def line_coverage_auc(ctx: SpanContext, g: Gold) -> float | None:
    """Area under line coverage over `AUC_BUDGETS` (trapezoid on log2 tokens), normalised to [0, 1]."""
    if not g.lines:
        return None
    cs = [_covered(ctx.budget(b), g) / g.n_lines for b in AUC_BUDGETS]
    return sum((a + b) / 2 for a, b in zip(cs, cs[1:])) / (len(cs) - 1)


def _auc(ctx: SpanContext, g: Gold, k: int | None) -> Pair | None:
    area = line_coverage_auc(ctx, g)
    return None if area is None else (area, 1.0)


_register("line_coverage_auc", "Area under line coverage over the budgets 250·2^i tokens, i = 0..7, trapezoid "
          "on log2 tokens, in [0, 1] (ctxgauge's own measure).", _auc, k="none", micro=False,
          formula="Σ_{i=0..6} (c_i + c_{i+1}) / 2 / 7, c_i = line_coverage_tokens@(250·2^i)")


def context_figures(names: Sequence[str], ctx: SpanContext, gold: Gold) -> dict[str, Pair | None]:
    """Each context metric of `names` for one unit as (numerator, denominator), None where undefined."""
    out: dict[str, Pair | None] = {}
    for name in names:
        m = parse_metric(name)
        kind = get_metric_kind(m.name)
        if kind.reads != "context":
            raise ValueError(f"{m} scores a ranking, not a context")
        out[str(m)] = kind.compute(ctx, gold, m.k)
    return out


def unit_value(pair: Pair | None) -> float | None:
    """A unit's value of one context metric: numerator / denominator, 0 over an empty context."""
    if pair is None:
        return None
    num, den = pair
    return num / den if den else 0.0


def aggregate(name: str, pairs: Iterable[Pair | None]) -> float | None:
    """The figure over units: the mean of unit values (macro) or the ratio of sums (`_micro`), over the
    units where the metric is defined; None when it is defined nowhere."""
    kept = [p for p in pairs if p is not None]
    if not kept:
        return None
    if get_metric_kind(parse_metric(name).name).aggregate == "ratio":
        den = sum(d for _, d in kept)
        return sum(n for n, _ in kept) / den if den else 0.0
    return sum(unit_value(p) for p in kept) / len(kept)  # type: ignore[misc]


def span_context(hits: Sequence, read_file: Callable[[str], bytes], tokenizer=None) -> SpanContext:
    """The context of `hits` (objects with `path` and `spans`, rank order): each hit's lines (its spans, or
    the whole file), and, given a tokenizer, its packing under any budget (`metrics.packing.pack`, each
    budget packed once)."""
    from ctxgauge.metrics._lines import line_count
    from ctxgauge.metrics.packing import pack

    ranked = []
    for h in hits:
        spans = tuple(getattr(h, "spans", ()) or ())
        if not spans:
            n = line_count(read_file(h.path))
            spans = ((1, n),) if n else ()
        ranked.append((h.path, frozenset(x for s, e in spans for x in range(s, e + 1))))
    if tokenizer is None:
        return SpanContext(tuple(ranked))
    done: dict[int, Packing] = {}

    def packed(budget: int) -> Packing:
        if budget not in done:
            p = pack(hits, read_file, budget, tokenizer)
            done[budget] = Packing(p.lines(), p.tokens)
        return done[budget]

    return SpanContext(tuple(ranked), packed)
