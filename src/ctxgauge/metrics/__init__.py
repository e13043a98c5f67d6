"""ctxgauge.metrics: what is measured about a retrieval engine, and the statistics to compare engines.

This module is the public API; the code lives in `ranking`, `stability`, `stats`, `scoring` and private modules.

Ranking quality (one ranking of unique paths against a set of relevant paths):
    `Metric`, `parse_metric`, `evaluate`, `mean_over`, `first_relevant_rank`; the one registry:
    `register_metric`, `metric_kinds`, `get_metric_kind`, `MetricKind`, `MetricSpecError`.
    Specs: hit@k, recall@k, precision@k, precision_returned@k, mrr, mrr@k, ndcg@k.
Context (spans, gold lines, token budgets; `spans`, `packing`, `tokens`):
    `Gold`, `SpanContext`, `span_context`, `context_figures`, `aggregate`, `gold_blocks`; specs file_/block_/
    line_ coverage and precision @k and _tokens@B (each with a `_micro` family), block_unassigned_share,
    gold_lines_per_1k_tokens@B, line_coverage_auc.
Stability across trials (ContextBenchmark's definitions):
    `exact_match`, `exact_match_rate`, `jaccard_at_k`, `kendall_tau_a`, `mean_pairwise_jaccard`,
    `mean_pairwise_tau`.
Scoring a ranking against labels (`scoring`, shared by the replay and cases suites):
    `Labels`, `PassLine`, `PACK_RECALL`, `metric_names`, `higher_is_better`, and `scoring.score`,
    `scoring.summarise`, `scoring.compare` (one request; the mean over many; engine A against B).
Paired statistics (every one seeded, no global RNG):
    `bootstrap_ci`, `paired_randomization_test`, `win_tie_loss`, `paired_comparison`, `PairedComparison`,
    `cohens_d` (effect size of paired scores).
Tied systems (`groups`): `tied_groups`, `TiedGroups`: rank groups by Holm-adjusted paired sign-flip tests
    against each group's best.
"""

from ctxgauge.metrics._registry import (
    ComputeFn,
    KRule,
    Metric,
    MetricKind,
    MetricSpecError,
    get_metric_kind,
    metric_kinds,
    parse_metric,
    register_metric,
)
from ctxgauge.metrics.ranking import evaluate, first_relevant_rank, mean_over
from ctxgauge.metrics.spans import Gold, SpanContext, aggregate, context_figures, gold_blocks, span_context
from ctxgauge.metrics.stability import (
    exact_match,
    exact_match_rate,
    jaccard_at_k,
    kendall_tau_a,
    mean_pairwise_jaccard,
    mean_pairwise_tau,
)
from ctxgauge.metrics.scoring import PACK_RECALL, Labels, PassLine, higher_is_better, metric_names
from ctxgauge.metrics.groups import TiedGroups, tied_groups
from ctxgauge.metrics.stats import (
    PairedComparison,
    bootstrap_ci,
    cohens_d,
    paired_comparison,
    paired_randomization_test,
    win_tie_loss,
)

__all__ = [
    "ComputeFn",
    "Gold",
    "SpanContext",
    "TiedGroups",
    "aggregate",
    "context_figures",
    "gold_blocks",
    "span_context",
    "KRule",
    "Labels",
    "Metric",
    "MetricKind",
    "MetricSpecError",
    "PACK_RECALL",
    "PairedComparison",
    "PassLine",
    "bootstrap_ci",
    "cohens_d",
    "evaluate",
    "exact_match",
    "exact_match_rate",
    "first_relevant_rank",
    "get_metric_kind",
    "higher_is_better",
    "jaccard_at_k",
    "kendall_tau_a",
    "mean_over",
    "mean_pairwise_jaccard",
    "mean_pairwise_tau",
    "metric_names",
    "metric_kinds",
    "paired_comparison",
    "paired_randomization_test",
    "parse_metric",
    "register_metric",
    "tied_groups",
    "win_tie_loss",
]
