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
| `block_coverage@k`, `block_coverage_tokens@B` | gold blocks in the context / gold blocks | a gold block |
| `block_precision@k`, `block_precision_tokens@B` | gold blocks in the context / blocks in the context | a gold block |
| `block_unassigned_share` | gold lines in no block / gold lines (a property of the gold) | a gold line |
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

Block level. A file's definitions are `ctxgauge.syntax.definitions(path, data)`: tree-sitter with the
grammars ctxgauge ships (Python, JavaScript, TypeScript/TSX, Go, Java, Rust), the node types of
`syntax.DEFINITION_NODES` (functions, methods, classes, types...), nested ones included, a decorated Python
definition from its first decorator; the same parser the graph engine chooses its spans with. A line's
*block* is the innermost definition containing it (the shortest). Gold blocks are the blocks of the gold
lines; the blocks *in a context* are the blocks of the lines in it, over every file in it, gold or not: a
definition is in the context when one of its own lines is (a line whose innermost definition it is).
Coverage is |G_blocks ∩ B(context)| / |G_blocks|, precision |G_blocks ∩ B(context)| / |B(context)|. A
unit without a gold block is undefined at block level. Gold lines outside every definition (imports,
module code) and in files without a grammar count at file and line level only; `block_unassigned_share`
reports their share of the unit's gold lines. "Own lines" rather than "any of its lines" keeps what is
found a subset of what is handed over: a context of exactly one method reaches that method and counts no
enclosing class, so it scores precision 1, not 1/2; a nested function's lines alone do not reach the
function around it. `SpanContext.definitions` reads the files (`span_context` sets it from its
`read_file`; a file it does not hold has no definitions), and `gold_blocks(read_file, gold_lines)` gives
the gold blocks by path for a record.

Departures from ContextBench: its span metrics score a context without a budget; here `@k` is that and
`_tokens@B` adds the budget. Its symbol level is set-based over the tree-sitter definitions a byte span
touches (per its documentation: its evaluator could not be read for this module); here lines, innermost
definitions only, six grammars (no C or C++), and lines outside definitions in no block.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from ctxgauge.metrics._lines import Span
from ctxgauge.metrics._registry import Departure, get_metric_kind, parse_metric, register_metric

AUC_BUDGETS = tuple(250 * 2 ** i for i in range(8))
"""The budgets the area under line coverage is taken over: 250 to 32,000 tokens."""
DEFAULT_BUDGETS = (1000, 4000, 16000)
"""The budgets a suite reports when none is given."""


def middle_budget(budgets: Iterable[int] | None) -> int | None:
    """The budget a one-figure view shows (the middle one of the sorted budgets; 4,000 of the defaults);
    None without budgets (a run recorded before them)."""
    ordered = sorted(int(b) for b in budgets or ())
    return ordered[len(ordered) // 2] if ordered else None

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
    definitions: Callable[[str], Sequence[Span]] | None = None
    """path -> the file's definitions at the corpus revision (`ctxgauge.syntax.definitions`), gold files and
    context files alike; None when the files cannot be read (`block_` metrics then fail)."""
    _line_blocks: dict = field(default_factory=dict, repr=False, compare=False)

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

    def line_blocks(self, path: str) -> Mapping[int, Span]:
        """Each line of `path` that a definition contains -> its innermost definition (computed once)."""
        if self.definitions is None:
            raise ValueError("a block_ metric needs the files' definitions (SpanContext.definitions)")
        found = self._line_blocks.get(path)
        if found is None:
            from ctxgauge.syntax import line_blocks

            found = self._line_blocks[path] = line_blocks(self.definitions(path))
        return found


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
              formula: str = "", ir_measures: str | None = None, higher_is_better: bool = True,
              departures: tuple[Departure, ...] = ()) -> None:
    register_metric(name, k=k, description=description, reads="context", formula=formula,
                    ir_measures=ir_measures, higher_is_better=higher_is_better, departures=departures)(fn)
    if micro:
        num, den = formula.split(" / ", 1)
        register_metric(f"{name}_micro", k=k, description=description + " Micro: ratio of sums over units.",
                        reads="context", aggregate="ratio", formula=f"Σ_units {num} / Σ_units {den}",
                        higher_is_better=higher_is_better)(fn)


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


def _blocks_of(by_line: Mapping[int, Span], lines: Iterable[int]) -> tuple[set[Span], int]:
    """The innermost definitions of `lines` (`by_line`: line -> its block), and how many lines are in none."""
    found: set[Span] = set()
    outside = 0
    for line in lines:
        block = by_line.get(line)
        if block is None:
            outside += 1
        else:
            found.add(block)
    return found, outside


def _gold_blocks(ctx: SpanContext, g: Gold) -> tuple[frozenset[tuple[str, Span]], int]:
    """The unit's gold blocks as (path, block), and its gold lines in no block (no definition, no grammar)."""
    out: set[tuple[str, Span]] = set()
    outside = 0
    for path in sorted(g.lines):
        blocks, n = _blocks_of(ctx.line_blocks(path), g.lines[path])
        out.update((path, b) for b in blocks)
        outside += n
    return frozenset(out), outside


def _context_blocks(ctx: SpanContext, c: Packing) -> frozenset[tuple[str, Span]]:
    """Blocks in a context: for each line in it, the innermost definition of its file containing the line."""
    return frozenset((path, b) for path in sorted(c.lines)
                     for b in _blocks_of(ctx.line_blocks(path), c.lines[path])[0])


def _block_coverage(ctx: SpanContext, g: Gold, c: Packing) -> Pair | None:
    gold = _gold_blocks(ctx, g)[0] if g.lines else frozenset()
    if not gold:
        return None
    return float(len(gold & _context_blocks(ctx, c))), float(len(gold))


def _block_precision(ctx: SpanContext, g: Gold, c: Packing) -> Pair | None:
    gold = _gold_blocks(ctx, g)[0] if g.lines else frozenset()
    if not gold:
        return None
    got = _context_blocks(ctx, c)
    return float(len(gold & got)), float(len(got))


_BLOCK_DEPARTURE = (Departure(
    "ContextBench's symbol level is set-based over tree-sitter definitions that a gold or viewed byte span "
    "touches (per its documentation; its evaluator was not read for this definition). Here lines, not bytes; a "
    "line belongs to its innermost definition only, so a method's lines do not also count its class; the "
    "grammars are ctxgauge's six (no C or C++: their lines are unassigned); a line outside every definition "
    "(imports, module code) is in no block.",
    "tests/metrics/test_spans.py::test_block_level_nested_definitions_innermost_wins"),)
_register("block_coverage", "Share of the gold blocks (the innermost definition of each gold line) reached by "
          "a line in the spans of the {top} files.",
          lambda ctx, g, k: _block_coverage(ctx, g, _at_k(ctx, k)), formula="|G_blocks ∩ B(top_k)| / |G_blocks|",
          departures=_BLOCK_DEPARTURE)
_register("block_precision", "Share of the blocks in the spans of the {top} files that are gold blocks.",
          lambda ctx, g, k: _block_precision(ctx, g, _at_k(ctx, k)), formula="|G_blocks ∩ B(top_k)| / |B(top_k)|",
          departures=_BLOCK_DEPARTURE)
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
_register("block_coverage_tokens", "Share of the gold blocks reached by a line of the context packed under the "
          "budget.", lambda ctx, g, b: _block_coverage(ctx, g, ctx.budget(b)),
          formula="|G_blocks ∩ B(pack_B)| / |G_blocks|")
_register("block_precision_tokens", "Share of the blocks in the context packed under the budget that are gold "
          "blocks.", lambda ctx, g, b: _block_precision(ctx, g, ctx.budget(b)),
          formula="|G_blocks ∩ B(pack_B)| / |B(pack_B)|")


def _unassigned(ctx: SpanContext, g: Gold, k: int | None) -> Pair | None:
    if not g.lines:
        return None
    return float(_gold_blocks(ctx, g)[1]), float(g.n_lines)


_register("block_unassigned_share", "Share of the gold lines in no block: outside every definition, or in a file "
          "without a grammar. They count at file and line level only; a property of the unit's gold, the same "
          "for every engine.", _unassigned, k="none", higher_is_better=False,
          formula="|G_lines outside every definition| / |G_lines|")


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


def file_definitions(read_file: Callable[[str], bytes]) -> Callable[[str], tuple[Span, ...]]:
    """path -> its definitions (`ctxgauge.syntax.definitions`) read with `read_file`; a path `read_file`
    does not hold (KeyError, FileNotFoundError) has none, so its gold lines are unassigned."""
    from ctxgauge.syntax import definitions

    def defs(path: str) -> tuple[Span, ...]:
        try:
            data = read_file(path)
        except (KeyError, FileNotFoundError):
            return ()
        return definitions(path, data)

    return defs


def gold_blocks(read_file: Callable[[str], bytes],
                gold_lines: Mapping[str, Iterable[tuple[int, int]]]) -> dict[str, tuple[Span, ...]]:
    """The gold blocks of a unit by path, sorted: the innermost definition (`ctxgauge.syntax`) of each gold
    line, `gold_lines` being `{path: [(start, end), ...]}` at the corpus revision and `read_file(path) ->
    bytes` reading files there. A path without a block (no grammar, every gold line outside definitions, a
    file `read_file` does not hold) is left out. The block metrics compute the same from `SpanContext`."""
    from ctxgauge.syntax import line_blocks

    defs = file_definitions(read_file)
    out: dict[str, tuple[Span, ...]] = {}
    for path in sorted(gold_lines):
        lines = {x for s, e in gold_lines[path] for x in range(s, e + 1)}
        if not lines:
            continue
        blocks = _blocks_of(line_blocks(defs(path)), lines)[0]
        if blocks:
            out[path] = tuple(sorted(blocks))
    return out


def span_context(hits: Sequence, read_file: Callable[[str], bytes], tokenizer=None) -> SpanContext:
    """The context of `hits` (objects with `path` and `spans`, rank order): each hit's lines (its spans, or
    the whole file), its files' definitions (`file_definitions(read_file)`, parsed only for the files a
    `block_` metric reads), and, given a tokenizer, its packing under any budget (`metrics.packing.pack`,
    each budget packed once). `read_file` reads the corpus revision the gold lines are at, gold files too."""
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
        return SpanContext(tuple(ranked), definitions=file_definitions(read_file))
    done: dict[int, Packing] = {}

    def packed(budget: int) -> Packing:
        if budget not in done:
            p = pack(hits, read_file, budget, tokenizer)
            done[budget] = Packing(p.lines(), p.tokens)
        return done[budget]

    return SpanContext(tuple(ranked), packed, file_definitions(read_file))
