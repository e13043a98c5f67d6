"""Query Stability: T trials of every query on one build; is the ranked list the same every time?

Per query, over its T trials (ctxgauge.metrics.stability, ContextBenchmark's definitions):
exact match rate (share of trials equal to the first), mean pairwise Jaccard@k (1 when both lists are
empty) and mean pairwise Kendall tau-a over the shared files in the first list's order (1 when fewer than
two are shared). The family's figures are the means over queries, kept exact (the level compares them
with its thresholds unrounded):

    queries, trials       how many of each
    exact_match_rate      mean EMR (of the ranked files)
    span_exact_match_rate mean EMR of the answers with their spans (the same files handing over the same
                          lines): CTL 3 needs it at 1.0 beside the artifacts
    mean_jaccard          mean of the per-query mean pairwise Jaccard@k
    mean_kendall_tau      mean of the per-query mean pairwise tau
    empty_results         queries whose first trial returned nothing
    unstable_queries      queries with EMR below 1
    unstable_spans        queries whose files were stable but whose spans were not
    per_query             [{query, exact_match_rate, span_exact_match_rate, jaccard, tau, results}] in
                          query order
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxgauge.errors import EngineError
from ctxgauge.metrics import exact_match_rate, mean_pairwise_jaccard, mean_pairwise_tau

from ._work import FAILED, NOT_MEASURED, OK, Answer, FamilyResult, Workspace, mean

__all__ = ["run_query"]


def run_query(ws: Workspace, engine: Any, out_dir: Path,
              trials: int) -> tuple[FamilyResult, dict[str, list[str]], dict[str, Answer]]:
    """Run the family on the build in `out_dir`; return its result, each query's first-trial ranking and
    its first-trial answer with spans.

    The first trials are the base rankings the fingerprint, the degenerate check and drift compare with.
    """
    if not ws.queries:
        return FamilyResult("query", NOT_MEASURED, "no queries to run"), {}, {}
    per_query: list[dict[str, Any]] = []
    first: dict[str, list[str]] = {}
    first_answers: dict[str, Answer] = {}
    try:
        for query in ws.queries:
            answers = []
            for _ in range(trials):
                answers.append(ws.answer(engine, out_dir, query))
                ws.progress(f"{ws.spec}: query trials", 1)
            runs = [[path for path, _ in a] for a in answers]
            first[query], first_answers[query] = runs[0], answers[0]
            per_query.append({
                "query": query,
                "exact_match_rate": exact_match_rate(runs),
                "span_exact_match_rate": sum(1 for a in answers if a == answers[0]) / len(answers),
                "jaccard": mean_pairwise_jaccard(runs, ws.k),
                "tau": mean_pairwise_tau(runs),
                "results": len(runs[0]),
            })
    except EngineError as exc:
        return FamilyResult("query", FAILED, str(exc), {"queries_done": len(per_query)}), first, first_answers
    return FamilyResult("query", OK, None, {
        "queries": len(per_query),
        "trials": trials,
        "exact_match_rate": mean([q["exact_match_rate"] for q in per_query]),
        "span_exact_match_rate": mean([q["span_exact_match_rate"] for q in per_query]),
        "mean_jaccard": mean([q["jaccard"] for q in per_query]),
        "mean_kendall_tau": mean([q["tau"] for q in per_query]),
        "empty_results": sum(1 for q in per_query if q["results"] == 0),
        "unstable_queries": sum(1 for q in per_query if q["exact_match_rate"] < 1.0),
        "unstable_spans": sum(1 for q in per_query if q["exact_match_rate"] == 1.0 and q["span_exact_match_rate"] < 1.0),
        "per_query": per_query,
    }), first, first_answers
