"""Ranking metrics for code retrieval: hit, recall, precision, MRR and nDCG over file paths.

A ranking is a sequence of unique file paths, best first; the relevant set is a collection of paths
(binary relevance). Spec strings name the metrics: ``hit@k``, ``recall@k``, ``precision@k``,
``precision_returned@k``, ``mrr`` / ``mrr@k`` and ``ndcg@k``.

Edge cases, defined once in `Metric.compute` for every metric:
  - no relevant file: None (undefined). `mean_over` leaves such units out of a mean.
  - empty ranking: 0.0.
  - a path listed twice: ValueError.

Agreement with ir_measures (checked in tests/metrics/test_ranking.py against its pytrec_eval and msmarco
providers, to 1e-9): hit@k = Success@k, recall@k = R@k, precision@k = P@k, mrr = RR, mrr@k = RR@k,
ndcg@k = nDCG@k (binary gains). Where we differ, on purpose:
  - A query with no relevant file: ir_measures (trec_eval) scores it 0 on every measure and counts it in
    the mean when it has judgments, and drops it when it has none. We return None and leave it out, so a
    suite's mean is not dragged down by questions no engine could answer; means over such suites are
    therefore higher than ir_measures' aggregate.
  - Order: ir_measures re-sorts a run by score (trec_eval breaks ties by document id); we score the list
    in the order given, which is the order an engine returned.
  - Duplicates: a pytrec_eval run is a dict, so a repeated path silently collapses; we raise.
``precision_returned@k`` has no ir_measures counterpart; its expected values are written as formulas.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence

from ctxgauge.metrics._registry import Metric, parse_metric, register_metric
from ctxgauge.metrics._validate import as_path_set, check_ranking

__all__ = ["Metric", "evaluate", "first_relevant_rank", "mean_over", "parse_metric"]


def first_relevant_rank(ranking: Sequence[str], relevant: Collection[str]) -> int | None:
    """The 1-based rank of the first relevant path in `ranking`, or None if none is relevant.

    Raises ValueError on a duplicated path, like every metric here.
    """
    rel = as_path_set(relevant)
    for rank, path in enumerate(check_ranking(ranking), start=1):
        if path in rel:
            return rank
    return None


def _found(ranking: tuple[str, ...], relevant: frozenset[str], k: int | None) -> int:
    """How many relevant paths are among the first k (all when k is None)."""
    return sum(1 for path in ranking[:k] if path in relevant)


@register_metric("hit", k="required", description="1 if any relevant file is in the {top}, else 0.",
                 formula="1 if |R ∩ top_k| > 0 else 0", ir_measures="Success@{k}", trec_eval="success_{k}")
def _hit(ranking: tuple[str, ...], relevant: frozenset[str], k: int | None) -> float:
    return 1.0 if _found(ranking, relevant, k) else 0.0


@register_metric(
    "recall", k="required", description="Share of the relevant files that appear in the {top}.",
    formula="|R ∩ top_k| / |R|", ir_measures="R@{k}", trec_eval="recall_{k}",
)
def _recall(ranking: tuple[str, ...], relevant: frozenset[str], k: int | None) -> float:
    return _found(ranking, relevant, k) / len(relevant)


@register_metric(
    "precision",
    k="required",
    description=(
        "Relevant files in the {top}, divided by k even when fewer were returned "
        "(as trec_eval's P@k), so a short list is not rewarded for its shortness."
    ),
    formula="|R ∩ top_k| / k", ir_measures="P@{k}", trec_eval="P_{k}",
)
def _precision(ranking: tuple[str, ...], relevant: frozenset[str], k: int | None) -> float:
    assert k is not None  # k="required" is enforced by Metric
    return _found(ranking, relevant, k) / k


@register_metric(
    "precision_returned",
    k="required",
    description=(
        "Relevant files in the {top}, divided by the number actually returned there, min(k, len(ranking)); "
        "0 when nothing was returned."
    ),
    formula="|R ∩ top_k| / min(k, n), 0 when n = 0 (n: paths returned)",
)
def _precision_returned(ranking: tuple[str, ...], relevant: frozenset[str], k: int | None) -> float:
    assert k is not None
    returned = min(k, len(ranking))
    return _found(ranking, relevant, k) / returned if returned else 0.0


@register_metric(
    "mrr",
    k="optional",
    # Plain `mrr` reads the whole ranking as queried: its depth is the k the engine was asked for.
    description="1 / rank of the first relevant file in the {top}, 0 if none is there.",
    formula="1 / min{i ≤ k : d_i ∈ R}, 0 if there is none (plain mrr: k = n, the whole ranking, as deep as "
            "the engine was asked by --depth)",
    ir_measures="RR@{k}", trec_eval="recip_rank",
)
def _mrr(ranking: tuple[str, ...], relevant: frozenset[str], k: int | None) -> float:
    for rank, path in enumerate(ranking[:k], start=1):
        if path in relevant:
            return 1.0 / rank
    return 0.0


@register_metric(
    "ndcg",
    k="required",
    description=(
        "Normalised discounted cumulative gain over the {top}: binary gains, 1/log2(rank+1) discount, "
        "ideal ranking = min(k, number of relevant files) relevant files first."
    ),
    formula="DCG_k / IDCG_k, DCG_k = Σ_{i ≤ k, d_i ∈ R} 1 / log2(i + 1), IDCG_k = Σ_{i ≤ min(k, |R|)} "
            "1 / log2(i + 1) (binary gain)",
    ir_measures="nDCG@{k}", trec_eval="ndcg_cut_{k}",
)
def _ndcg(ranking: tuple[str, ...], relevant: frozenset[str], k: int | None) -> float:
    assert k is not None
    dcg = sum(1.0 / math.log2(rank + 1) for rank, path in enumerate(ranking[:k], start=1) if path in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(relevant)) + 1))
    return dcg / ideal


def evaluate(
    metrics: Iterable[str | Metric], ranking: Sequence[str], relevant: Collection[str]
) -> dict[str, float | None]:
    """Score one ranking with several metrics: ``{canonical spec: score or None}``, in the order given.

    Specs are parsed (and checked) before anything is scored, so a typo fails before any work; a spec
    given twice, in any spelling, appears once. See `Metric.compute` for the edge cases.
    """
    parsed = [parse_metric(m) for m in metrics]
    ranked = check_ranking(ranking)
    rel = as_path_set(relevant)
    return {str(m): m.compute(ranked, rel) for m in parsed}


def mean_over(values: Iterable[float | None]) -> float | None:
    """Mean of the defined values, leaving out None (units where the metric is undefined).

    Returns None when no value is defined, never 0.0, so "nothing to measure" is not reported as
    "measured zero". Note this is where our mean departs from ir_measures' aggregate: see the module
    docstring.
    """
    defined = [float(v) for v in values if v is not None]
    if not defined:
        return None
    # math.fsum: the mean must not depend on the order units finished in (a resumed run reorders them).
    return math.fsum(defined) / len(defined)
