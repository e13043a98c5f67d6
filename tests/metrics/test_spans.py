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


# -- block level ----------------------------------------------------------------------------------------
# m.py: C 3-9 (own lines 3, 4), m 5-9 (own 5, 6, 9), inner 7-8, f 11-12; lines 1, 2, 10, 13, 14 in none.
M_PY = (b"import os\n"              # 1
        b"\n"                       # 2
        b"class C:\n"               # 3
        b"    a = 1\n"              # 4
        b"    def m(self):\n"       # 5
        b"        x = 1\n"          # 6
        b"        def inner():\n"   # 7
        b"            return x\n"   # 8
        b"        return inner\n"   # 9
        b"\n"                       # 10
        b"def f():\n"               # 11
        b"    return 2\n"           # 12
        b"\n"                       # 13
        b"X = 3\n")                 # 14
# A.java: A 3-11 (own 3, 4, 11), run 5-7, B 8-10 (own 8, 10), b 9-9; lines 1, 2 in none.
A_JAVA = (b"package p;\n"           # 1
          b"\n"                     # 2
          b"class A {\n"            # 3
          b"    int x;\n"           # 4
          b"    void run() {\n"     # 5
          b"        go();\n"        # 6
          b"    }\n"                # 7
          b"    static class B {\n"  # 8
          b"        void b() {}\n"  # 9
          b"    }\n"                # 10
          b"}\n")                   # 11
BLOCK_FILES = {"m.py": M_PY, "A.java": A_JAVA, "README.md": b"# t\nsome words\nmore\n"}
# Gold lines: m.py 4 (C), 6 (m), 8 (inner), 14 (none); A.java 6 (run), 9 (b); README.md 2 (no grammar);
# z.py at file level only. Gold blocks: C, m, inner, run, b = 5; unassigned gold lines: 2 of 7.
BLOCK_GOLD = Gold.of(["m.py", "A.java", "README.md", "z.py"],
                     {"m.py": [(4, 4), (6, 6), (8, 8), (14, 14)], "A.java": [(6, 6), (9, 9)],
                      "README.md": [(2, 2)]})


def block_figures(names, hits, gold=BLOCK_GOLD):
    ctx = span_context(hits, BLOCK_FILES.__getitem__, Words())
    return {n: unit_value(p) for n, p in context_figures(names, ctx, gold).items()}


def test_block_level_nested_definitions_innermost_wins() -> None:
    from ctxgauge.syntax import definitions

    assert definitions("m.py", M_PY) == ((3, 9), (5, 9), (7, 8), (11, 12))
    assert definitions("A.java", A_JAVA) == ((3, 11), (5, 7), (8, 10), (9, 9))
    hits = [H("m.py", ((5, 6),)), H("README.md"), H("A.java", ((1, 4), (8, 10)))]
    names = [f"block_{m}@{k}" for k in (1, 2, 3) for m in ("coverage", "precision")]
    # @1: lines 5-6 are m's own: m is reached; C (which contains them) and inner (7-8) are not. B = {m}.
    # @2: README.md has no grammar: no block. @3: A.java 1-2 none, 3-4 A, 8 and 10 B, 9 b: B adds A, B, b.
    assert block_figures(names, hits) == {
        "block_coverage@1": 1 / 5, "block_precision@1": 1 / 1,
        "block_coverage@2": 1 / 5, "block_precision@2": 1 / 1,
        "block_coverage@3": 2 / 5, "block_precision@3": 2 / 4,
    }


def test_block_level_a_whole_file_reaches_every_block_of_it() -> None:
    f = block_figures(["block_coverage@1", "block_precision@1", "block_coverage@2", "block_precision@2"],
                      [H("A.java"), H("m.py")])
    # A.java whole: A, run, B, b (run and b gold). + m.py whole: C, m, inner, f (C, m, inner gold).
    assert f == {"block_coverage@1": 2 / 5, "block_precision@1": 2 / 4,
                 "block_coverage@2": 5 / 5, "block_precision@2": 5 / 8}


def test_block_level_under_a_budget_that_cuts_a_block() -> None:
    hits = [H("A.java", ((8, 10),)), H("m.py", ((5, 6),))]
    names = [f"block_{m}_tokens@{b}" for b in (7, 11, 20) for m in ("coverage", "precision")]
    # Words: a header is 2; A.java line 8 is 4 words + \n = 5, line 9 is 3 + 1 = 4, line 10 is 2;
    # m.py line 5 is 2 + 1 = 3, line 6 is 3 + 1 = 4.
    # 7 tokens: header + line 8: B only. 11: + line 9: B, b. 20: A.java 8-10 (13), m.py header + line 5 (18),
    # line 6 does not fit: B, b, m.
    assert block_figures(names, hits) == {
        "block_coverage_tokens@7": 0 / 5, "block_precision_tokens@7": 0 / 1,
        "block_coverage_tokens@11": 1 / 5, "block_precision_tokens@11": 1 / 2,
        "block_coverage_tokens@20": 2 / 5, "block_precision_tokens@20": 2 / 3,
    }


def test_gold_lines_outside_definitions_and_without_a_grammar_are_unassigned() -> None:
    f = block_figures(["block_unassigned_share", "block_unassigned_share_micro"], [H("m.py")])
    assert f == {"block_unassigned_share": 2 / 7, "block_unassigned_share_micro": 2 / 7}
    # A unit whose gold lines are all outside definitions: undefined at block level, defined at line level.
    outside = Gold.of(["m.py", "README.md"], {"m.py": [(1, 2), (14, 14)], "README.md": [(1, 3)]})
    g = block_figures(["block_coverage@1", "block_precision_tokens@100", "line_coverage@1",
                       "block_unassigned_share"], [H("m.py")], gold=outside)
    assert g == {"block_coverage@1": None, "block_precision_tokens@100": None, "line_coverage@1": 3 / 6,
                 "block_unassigned_share": 6 / 6}
    # No gold lines at all: the share is undefined too.
    assert block_figures(["block_unassigned_share"], [H("m.py")], gold=Gold.of(["m.py"], {})) == {
        "block_unassigned_share": None}


def test_block_micro_is_the_ratio_of_sums() -> None:
    ctx = span_context([H("m.py", ((5, 6),))], BLOCK_FILES.__getitem__)
    one = context_figures(["block_coverage@1", "block_coverage_micro@1"], ctx, BLOCK_GOLD)  # 1 of 5
    two = context_figures(["block_coverage@1", "block_coverage_micro@1"], ctx,
                          Gold.of(["m.py"], {"m.py": [(6, 6)]}))  # 1 of 1
    assert aggregate("block_coverage@1", [one["block_coverage@1"], two["block_coverage@1"]]) == (1 / 5 + 1) / 2
    assert aggregate("block_coverage_micro@1", [one["block_coverage_micro@1"], two["block_coverage_micro@1"]]) \
        == (1 + 1) / (5 + 1)


def test_gold_blocks_for_the_pipeline() -> None:
    from ctxgauge.metrics import gold_blocks

    lines = {"m.py": [(4, 4), (6, 6), (8, 8), (14, 14)], "A.java": [(6, 6), (9, 9)], "README.md": [(2, 2)],
             "gone.py": [(1, 3)], "m2.py": []}
    assert gold_blocks(BLOCK_FILES.__getitem__, lines) == {
        "A.java": ((5, 7), (9, 9)), "m.py": ((3, 9), (5, 9), (7, 8))}


def test_block_metrics_need_the_files_definitions() -> None:
    ctx = SpanContext((("m.py", frozenset({5})),))
    with pytest.raises(ValueError, match="definitions"):
        context_figures(["block_coverage@1"], ctx, BLOCK_GOLD)
