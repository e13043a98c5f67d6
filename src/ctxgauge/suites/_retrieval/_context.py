"""Context metrics in the retrieval pipeline: each unit's ranking, as the context a model reads, scored
against its gold files and lines at each k and under each token budget (`ctxgauge.metrics.spans`).

Per unit and engine (on the worker, beside the ranking metrics), `score_context` reads the ranked files at
the corpus revision, packs the hits (from `--depth`, in rank order, each hit's spans or the whole file)
under every budget of the run and of the area's curve (`metrics.packing.pack_budgets`: `pack`, the one
packing function, for many budgets in one walk), and
returns an engine part's `context`:

    figures   macro families, one value per unit (`line_coverage@10`, `line_coverage_tokens@4000`,
              `gold_lines_per_1k_tokens@4000`, `line_coverage_auc`, ...); None where the unit has no gold at
              that level. They join the unit's `figures`.
    pairs     `_micro` family -> [numerator, denominator] of this unit: the suite's micro average is the
              ratio of their sums, and `--vs` resamples units and recomputes that ratio.
    packed    budget -> {tokens, ran_out}: the packed context's tokens, and whether the ranking ran out
              before the budget (a shorter context).
    curve     line coverage at each budget of `metrics.spans.AUC_BUDGETS` (None without gold lines): the
              report's budget curve, averaged with a bootstrap interval by `budget_curve`.
    gold_blocks  {path: [[start, end], ...]}: the unit's gold blocks (`metrics.spans.gold_blocks`, the
              innermost definition of each gold line); the same for every engine, so the pipeline keeps it
              once, on the unit, beside `gold_lines`.

Block level (`block_coverage@k`, `block_precision_tokens@B`, ...): definitions are read from the same files
at the corpus revision, the one the gold lines refer to (replay: the commit's parent), parsed once per blob
(`ctxgauge.syntax.definitions` caches by content). `block_unassigned_share` (gold lines in no definition,
or in a file without a grammar) is a property of the gold: summarised, never compared (`compared_names`).

Gold: the unit's labelled files the corpus indexes (file level) and their gold lines (line level; a file
without lines counts at file level only). Any-of groups count in the ranking metrics only.

Cost: file bytes are cached by blob id and read in batches (`_Blobs`), token counts are cached per line
text (`_Counter`), both for the whole process, so a replay pays git and the tokenizer only for the blobs
and lines it has not met in an earlier commit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from ctxgauge.errors import UserError
from ctxgauge.metrics.spans import (
    AUC_BUDGETS, DEFAULT_BUDGETS, Gold, Packing, SpanContext, context_figures, file_definitions, gold_blocks,
    unit_value,
)

__all__ = ["ContextSpec", "DEFAULT_BUDGETS", "GOLD_ONLY", "budget_curve", "check_budgets", "compared_names",
           "context_summary", "gold_of", "is_context", "macro_names", "micro_names", "score_context",
           "with_metrics"]


@dataclass(frozen=True)
class ContextSpec:
    """What a run scores contexts at (picklable: it travels in each task)."""

    ks: tuple[int, ...]
    """Cutoffs of the `@k` families (all spans of the top k files, no budget)."""
    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    """Token budgets of the `_tokens@B` families."""


def check_budgets(budgets: Sequence[int]) -> None:
    """`--budget`: at least one, each a whole number of tokens of at least 1 (UserError otherwise)."""
    if not budgets or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in budgets):
        raise UserError("--budget must be at least 1 token (e.g. --budget 1000 --budget 4000)")


_AT_K = ("file_coverage", "file_precision", "line_coverage", "line_precision", "block_coverage",
         "block_precision")
_AT_B = ("file_coverage_tokens", "file_precision_tokens", "line_coverage_tokens", "line_precision_tokens",
         "block_coverage_tokens", "block_precision_tokens")
GOLD_ONLY = "block_unassigned_share"
"""A property of a unit's gold (its gold lines in no definition), the same for every engine: summarised,
never compared."""


def macro_names(spec: ContextSpec) -> list[str]:
    """The macro context metrics of a run, in report order: per k the `@k` families, per budget the
    `_tokens@B` families and gold lines per 1,000 tokens, then the area and the gold's unassigned share."""
    out = [f"{n}@{k}" for k in spec.ks for n in _AT_K]
    out += [f"{n}@{b}" for b in spec.budgets for n in (*_AT_B, "gold_lines_per_1k_tokens")]
    out += ["line_coverage_auc", GOLD_ONLY]
    return out


def micro_names(spec: ContextSpec) -> list[str]:
    """The `_micro` families of a run, in report order (a ratio of sums over units)."""
    out = [f"{n}_micro@{k}" for k in spec.ks for n in _AT_K]
    out += [f"{n}_micro@{b}" for b in spec.budgets for n in (*_AT_B, "gold_lines_per_1k_tokens")]
    out.append(f"{GOLD_ONLY}_micro")
    return out


def compared_names(spec: ContextSpec) -> tuple[list[str], list[str]]:
    """(macro, micro) context metrics a `--vs` comparison holds: all but the gold's own `GOLD_ONLY`."""
    return ([n for n in macro_names(spec) if not n.startswith(GOLD_ONLY)],
            [n for n in micro_names(spec) if not n.startswith(GOLD_ONLY)])


def is_context(name: str) -> bool:
    """Whether a metric name is a context metric (scored from the packed spans, not the ranking)."""
    from ctxgauge.metrics import get_metric_kind, parse_metric

    return get_metric_kind(parse_metric(name).name).reads == "context"


def with_metrics(spec: ContextSpec, names: Iterable[str]) -> ContextSpec:
    """`spec` grown to score every context metric of `names` (a pass line's): its k joins the cutoffs of
    an `@k` family, its B the budgets of a `_tokens@B` one."""
    from ctxgauge.metrics import parse_metric

    ks, budgets = set(spec.ks), set(spec.budgets)
    for name in names:
        if not is_context(name):
            continue
        m = parse_metric(name)
        if m.k is None:
            continue
        (budgets if m.name.removesuffix("_micro").endswith("_tokens") else ks).add(int(m.k))
    return ContextSpec(tuple(sorted(ks)), tuple(sorted(budgets)))


def gold_of(files: Iterable[str], lines: Mapping[str, Sequence[Sequence[int]]]) -> Gold:
    """A unit's gold: `files` (those the corpus indexes) and the gold lines of those among them."""
    return Gold.of(files, {p: [(int(s), int(e)) for s, e in spans] for p, spans in lines.items()})


class _Counter:
    """A tokenizer whose counts are cached by text: a line met in an earlier commit (the same blob, or the
    same line in a changed one) is not encoded again. Bounded: cleared when it holds `LIMIT` texts."""

    LIMIT = 1 << 20

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        self.cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        n = self.cache.get(text)
        if n is None:
            if len(self.cache) >= self.LIMIT:
                self.cache.clear()
            n = self.cache[text] = self.tokenizer.count(text)
        return n


_COUNTERS: dict[int, _Counter] = {}


def _counter(tokenizer: Any) -> _Counter:
    got = _COUNTERS.get(id(tokenizer))
    if got is None or got.tokenizer is not tokenizer:
        got = _COUNTERS[id(tokenizer)] = _Counter(tokenizer)
    return got


@dataclass(frozen=True)
class _Hit:
    path: str
    spans: tuple[tuple[int, int], ...]


class _Blobs:
    """File bytes by blob id, kept across units (bounded by `LIMIT` bytes, oldest dropped first): a replay's
    next commit reads only the blobs that changed. Missing blobs are read in batches of `BATCH` hits, in
    rank order from the one asked for (one `git cat-file --batch` round trip, not one per file)."""

    LIMIT = 64 << 20
    BATCH = 16

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.size = 0

    def put(self, blob: str, data: bytes) -> None:
        if blob in self.data:
            return
        self.data[blob] = data
        self.size += len(data)
        while self.size > self.LIMIT and len(self.data) > 1:
            old = next(iter(self.data))
            self.size -= len(self.data.pop(old))

    def reader(self, corpus: Any, paths: Sequence[str]) -> Callable[[str], bytes]:
        """`read(path)` for the ranked `paths` of one unit on `corpus`."""
        rank = {p: i for i, p in enumerate(paths)}

        def read(path: str) -> bytes:
            f = corpus.get(path)
            if f is None:
                return corpus.read(path)  # KeyError: not indexed (a checked hit always is)
            got = self.data.get(f.blob)
            if got is not None:
                return got
            want = [f]
            for p in paths[rank.get(path, len(paths)) + 1:]:
                if len(want) >= self.BATCH:
                    break
                g = corpus.get(p)
                if g is not None and g.blob not in self.data and g not in want:
                    want.append(g)
            for g, data in corpus.iter_bytes(want):
                self.put(g.blob, data)
                if g.blob == f.blob:
                    got = data
            return got if got is not None else corpus.read(path)

        return read


_BLOBS = _Blobs()


def score_context(ranking: Sequence[Mapping], gold: Gold, corpus: Any, spec: ContextSpec,
                  tokenizer: Any) -> dict:
    """One engine's context on one unit (the module's `context` dict): `ranking` the checked hits
    (`{path, score, spans?}`, rank order, to the run's depth), `corpus` the corpus they rank (files read at
    its revision), `tokenizer` with `count(text)` (`metrics.tokens.default_tokenizer`)."""
    from ctxgauge.metrics._lines import line_count
    from ctxgauge.metrics.packing import pack_budgets

    hits = [_Hit(h["path"], tuple((int(s), int(e)) for s, e in h.get("spans") or ())) for h in ranking]
    read_once = _BLOBS.reader(corpus, [h.path for h in hits])

    top = max(spec.ks) if spec.ks else 0
    ranked = []
    for h in hits[:top]:  # the `@k` families read the top max(k) files only
        spans = h.spans
        if not spans:
            n = line_count(read_once(h.path))
            spans = ((1, n),) if n else ()
        ranked.append((h.path, frozenset(x for s, e in spans for x in range(s, e + 1))))
    count = _counter(tokenizer)
    done: dict[int, tuple[Packing, bool]] = {}

    def packed(budget: int) -> Packing:
        if budget not in done:  # every budget of the run and of the curve in one walk (`pack_budgets`)
            wanted = sorted({*spec.budgets, *AUC_BUDGETS, budget} - set(done))
            for b, p in pack_budgets(hits, read_once, wanted, count).items():
                done[b] = (Packing(p.lines(), p.tokens), p.ran_out)
        return done[budget][0]

    ctx = SpanContext(tuple(ranked), packed, file_definitions(read_once))
    pairs = context_figures(macro_names(spec), ctx, gold)
    figures = {name: unit_value(pair) for name, pair in pairs.items()}
    micro = {}
    for name in micro_names(spec):
        family, at, k = name.partition("@")
        pair = pairs[family.removesuffix("_micro") + at + k]
        if pair is not None:
            micro[name] = [pair[0], pair[1]]
    curve = [None if not gold.lines else
             sum(len(packed(b).lines.get(p, frozenset()) & g) for p, g in gold.lines.items()) / gold.n_lines
             for b in AUC_BUDGETS]
    for b in spec.budgets:
        packed(b)
    blocks = gold_blocks(read_once, {p: [(x, x) for x in sorted(v)] for p, v in gold.lines.items()})
    return {"figures": figures, "pairs": micro,
            "packed": {str(b): {"tokens": done[b][0].tokens, "ran_out": done[b][1]} for b in spec.budgets},
            "curve": curve, "gold_blocks": {p: [list(b) for b in v] for p, v in blocks.items()}}


def context_summary(rows: Sequence[tuple[Mapping[str, float | None], Mapping[str, Sequence[float]]]],
                    spec: ContextSpec) -> dict[str, float | None]:
    """The context figures over units, from each unit's (figures, pairs): macro families the mean over the
    units where they are defined, `_micro` families the ratio of sums (both `math.fsum`); None where no
    unit defines one."""
    out: dict[str, float | None] = {}
    for name in macro_names(spec):
        values = [float(f[name]) for f, _ in rows if f.get(name) is not None]
        out[name] = math.fsum(values) / len(values) if values else None
    for name in micro_names(spec):
        kept = [p[name] for _, p in rows if name in p]
        if not kept:
            out[name] = None
            continue
        den = math.fsum(float(d) for _, d in kept)
        out[name] = math.fsum(float(n) for n, _ in kept) / den if den else 0.0
    return out


def budget_curve(curves: Sequence[Sequence[float | None] | None], seed: int) -> list[dict]:
    """Line coverage against tokens over the units: for each budget of `AUC_BUDGETS`, `{budget, mean, low,
    high}`, the mean over the units with gold lines and its 95% percentile bootstrap interval (seeded,
    `metrics.stats.bootstrap_ci`). Empty when no unit has gold lines."""
    from ctxgauge.metrics.stats import bootstrap_ci

    kept = [c for c in curves if c is not None and len(c) == len(AUC_BUDGETS) and c[0] is not None]
    if not kept:
        return []
    out = []
    for i, budget in enumerate(AUC_BUDGETS):
        mean, low, high = bootstrap_ci([float(c[i]) for c in kept], seed)
        out.append({"budget": budget, "mean": mean, "low": low, "high": high})
    return out
