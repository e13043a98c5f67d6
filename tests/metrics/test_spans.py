"""Context metrics, each definition pinned by a hand-computed case (expected values written as formulas)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ctxgauge.metrics import Metric, get_metric_kind, parse_metric
from ctxgauge.metrics.spans import (
    AUC_BUDGETS, Gold, Packing, SpanContext, aggregate, context_figures, span_context, unit_value,
)


class Words:
    """One token per word and one per `\\n`: a header `a.py:5-8\\n` is 2, a line `x\\n` is 2."""

    def count(self, text: str) -> int:
        return len(text.split()) + text.count("\n")


@dataclass
class H:
    path: str
    spans: tuple = ()


FILES = {"a.py": b"x\n" * 10, "b.py": b"x\n" * 4, "c.py": b"x\n" * 6}
# Gold: a.py lines 3-6, d.py lines 1-2 (not retrieved), b.py at file level only (no lines).
GOLD = Gold.of(["a.py", "b.py", "d.py"], {"a.py": [(3, 6)], "d.py": [(1, 2)], "b.py": []})
HITS = [H("c.py"), H("a.py", ((5, 8),)), H("b.py")]


def figures(names, hits=HITS, gold=GOLD):
    ctx = span_context(hits, FILES.__getitem__, Words())
    return {n: unit_value(p) for n, p in context_figures(names, ctx, gold).items()}


def test_gold_keeps_lines_only_where_there_are_some() -> None:
    assert GOLD.files == {"a.py", "b.py", "d.py"} and set(GOLD.lines) == {"a.py", "d.py"} and GOLD.n_lines == 6


def test_at_k_all_spans_of_the_top_k_files() -> None:
    f = figures([f"{m}@{k}" for k in (1, 2, 3) for m in
                 ("file_coverage", "file_precision", "line_coverage", "line_precision")])
    # @1: c.py (6 lines, none gold). @2: + a.py 5-8 (gold 5, 6). @3: + b.py whole (4 lines, a gold file).
    assert f == {
        "file_coverage@1": 0 / 3, "file_precision@1": 0 / 1, "line_coverage@1": 0 / 6, "line_precision@1": 0 / 6,
        "file_coverage@2": 1 / 3, "file_precision@2": 1 / 2, "line_coverage@2": 2 / 6, "line_precision@2": 2 / 10,
        "file_coverage@3": 2 / 3, "file_precision@3": 2 / 3, "line_coverage@3": 2 / 6, "line_precision@3": 2 / 14,
    }


def test_under_a_budget_the_packed_context() -> None:
    names = ["file_coverage_tokens@20", "file_precision_tokens@20", "line_coverage_tokens@20",
             "line_precision_tokens@20", "gold_lines_per_1k_tokens@20", "line_coverage_tokens@10",
             "line_precision_tokens@10", "gold_lines_per_1k_tokens@10"]
    f = figures(names)
    # 20 tokens: c.py whole (header 2 + 6 lines x 2 = 14), then a.py:5-6 (2 + 2 x 2 = 6), stop.
    # 10 tokens: c.py:1-4 (2 + 4 x 2).
    assert f == {
        "file_coverage_tokens@20": 1 / 3, "file_precision_tokens@20": 1 / 2, "line_coverage_tokens@20": 2 / 6,
        "line_precision_tokens@20": 2 / 8, "gold_lines_per_1k_tokens@20": 2 / (20 / 1000),
        "line_coverage_tokens@10": 0 / 6, "line_precision_tokens@10": 0 / 4, "gold_lines_per_1k_tokens@10": 0.0,
    }


def test_a_unit_without_gold_lines_is_undefined_at_line_level_only() -> None:
    gold = Gold.of(["b.py"], {})
    f = figures(["file_coverage@3", "line_coverage@3", "line_coverage_tokens@20", "line_coverage_auc"], gold=gold)
    assert f == {"file_coverage@3": 1.0, "line_coverage@3": None, "line_coverage_tokens@20": None,
                 "line_coverage_auc": None}


def test_empty_context_scores_zero() -> None:
    f = figures(["file_precision@5", "line_precision@5", "line_coverage@5"], hits=[])
    assert f == {"file_precision@5": 0.0, "line_precision@5": 0.0, "line_coverage@5": 0.0}


def test_macro_is_the_mean_of_units_and_micro_the_ratio_of_sums() -> None:
    one = context_figures(["line_coverage@2", "line_coverage_micro@2"], span_context(HITS, FILES.__getitem__), GOLD)
    two_gold = Gold.of(["a.py"], {"a.py": [(5, 6)]})
    two = context_figures(["line_coverage@2", "line_coverage_micro@2"], span_context(HITS, FILES.__getitem__),
                          two_gold)
    none = context_figures(["line_coverage@2", "line_coverage_micro@2"], span_context(HITS, FILES.__getitem__),
                           Gold.of(["b.py"], {}))
    units = [one, two, none]
    assert aggregate("line_coverage@2", [u["line_coverage@2"] for u in units]) == pytest.approx((2 / 6 + 2 / 2) / 2)
    assert aggregate("line_coverage_micro@2", [u["line_coverage_micro@2"] for u in units]) == (2 + 2) / (6 + 2)
    assert aggregate("line_coverage@2", [None, None]) is None


def test_area_under_line_coverage_over_eight_budgets() -> None:
    assert AUC_BUDGETS == (250, 500, 1000, 2000, 4000, 8000, 16000, 32000)
    gold = Gold.of(["a.py"], {"a.py": [(1, 4)]})
    covered = dict(zip(AUC_BUDGETS, [0, 0, 1, 2, 2, 4, 4, 4]))  # gold lines in the context at each budget
    ctx = SpanContext((), lambda b: Packing({"a.py": frozenset(range(1, covered[b] + 1))}, b))
    c = [0, 0, .25, .5, .5, 1, 1, 1]
    expected = sum((x + y) / 2 for x, y in zip(c, c[1:])) / 7
    assert unit_value(context_figures(["line_coverage_auc"], ctx, gold)["line_coverage_auc"]) == pytest.approx(expected)
    assert expected == pytest.approx(3.75 / 7)
    full = SpanContext((), lambda b: Packing({"a.py": frozenset({1, 2, 3, 4})}, b))
    assert unit_value(context_figures(["line_coverage_auc"], full, gold)["line_coverage_auc"]) == 1.0


def test_context_metrics_live_in_the_one_registry() -> None:
    for name in ("line_coverage", "line_coverage_tokens", "file_precision_tokens_micro", "line_coverage_auc"):
        assert get_metric_kind(name).reads == "context"
    assert get_metric_kind("line_coverage_micro").aggregate == "ratio"
    assert str(parse_metric("Line_Coverage_Tokens @ 4000")) == "line_coverage_tokens@4000"
    with pytest.raises(TypeError, match="scores a context"):
        Metric("line_coverage", 10).compute(["a.py"], {"a.py"})
    with pytest.raises(ValueError, match="scores a ranking"):
        context_figures(["recall@10"], SpanContext(()), GOLD)
