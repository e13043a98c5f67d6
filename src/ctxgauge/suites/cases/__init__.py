"""Labelled cases: hand-written requests with expected files, scored against pass lines.

    from ctxgauge.suites.cases import CasesConfig, load_cases, run_cases
    result = run_cases(load_cases("cases.yaml"), CasesConfig(engine="bm25"))
    result.passed, result.results.summary["recall@5"]

A case file (YAML or JSON, see `_model`) lists cases (name, query, corpus as a directory or REPO@REV,
expected files, optional expected-any-of groups, `known_gap`) and pass lines per metric. Importers make
cases from SWE-bench-style instances and from TREC qrels (`_importers`), and from ContextBench's gold
(`_contextbench`); `score_external` scores a ranking
produced elsewhere against TREC qrels without any engine. Scoring (`ctxgauge.metrics.scoring`) is shared with replay, whose
commits are cases the repository labelled itself.
"""

from ctxgauge.suites.cases._contextbench import is_contextbench, load_contextbench
from ctxgauge.suites.cases._importers import (
    is_swebench,
    load_qrels_cases,
    load_swebench,
    patch_files,
    read_queries,
    read_rankings,
)
from ctxgauge.suites.cases._model import (
    Case,
    CaseFile,
    case_to_dict,
    cases_from_dict,
    load_cases,
    parse_pass_lines,
    split_corpus,
)
from ctxgauge.suites.cases._run import SUITE, SUITE_VERSION, CasesConfig, CasesResult, run_cases, score_external
from ctxgauge.metrics.scoring import (
    PACK_RECALL,
    Labels,
    PassLine,
    compare,
    higher_is_better,
    metric_names,
    score,
    summarise,
)

__all__ = [
    "PACK_RECALL", "SUITE", "SUITE_VERSION", "Case", "CaseFile", "CasesConfig", "CasesResult", "Labels",
    "PassLine", "case_to_dict", "cases_from_dict", "compare", "higher_is_better", "is_contextbench",
    "is_swebench", "load_cases", "load_contextbench", "load_qrels_cases", "load_swebench", "metric_names",
    "parse_pass_lines", "patch_files", "read_queries", "read_rankings", "run_cases", "score", "score_external",
    "split_corpus", "summarise",
]
