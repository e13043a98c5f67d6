"""Scoring a labelled request: any-of groups count once at their best member's rank, pack recall reads
its own set, means skip undefined values, pass lines hold in their metric's direction."""

from __future__ import annotations

import math

import pytest

from ctxgauge.errors import UserError
from ctxgauge.suites.cases import Labels, PassLine, compare, metric_names, score, summarise


def test_metric_names_in_report_order_each_once():
    assert metric_names([5], pack=True, extra=["MRR", "recall@5", "mrr@3"]) == [
        "hit@5", "recall@5", "precision@5", "ndcg@5", "pack_recall@5", "mrr", "mrr@3"]
    with pytest.raises(UserError):
        metric_names([5], extra=["recal@5"])


def test_plain_relevant_set():
    labels = Labels(frozenset({"a.py", "c.py"}))
    f = score(["a.py", "b.py", "c.py"], labels, ["hit@2", "recall@2", "precision@2", "ndcg@3", "mrr"])
    assert f["hit@2"] == 1.0 and f["recall@2"] == 1 / 2 and f["precision@2"] == 1 / 2 and f["mrr"] == 1.0
    assert f["ndcg@3"] == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)), abs=1e-12)


def test_an_any_of_group_is_one_item_found_at_its_best_member():
    labels = Labels(frozenset({"core.py"}), (frozenset({"docs/a.md", "docs/b.md"}),))
    ranking = ["x.py", "docs/b.md", "docs/a.md", "core.py"]
    f = score(ranking, labels, ["recall@2", "recall@4", "precision@4", "mrr", "ndcg@4"])
    assert f["recall@2"] == 1 / 2          # the group (rank 2) of {core.py, group}
    assert f["recall@4"] == 2 / 2
    assert f["precision@4"] == 2 / 4       # docs/a.md at rank 3 is a second member: not counted again
    assert f["mrr"] == 1 / 2
    assert f["ndcg@4"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))


def test_pack_recall_reads_the_pack():
    labels = Labels(frozenset({"a.py"}), pack=frozenset({"a.py", "tests/test_a.py", "b.py"}))
    f = score(["tests/test_a.py", "z.py", "a.py"], labels, ["recall@2", "pack_recall@2", "pack_recall@3"])
    assert f == {"recall@2": 0.0, "pack_recall@2": 1 / 3, "pack_recall@3": 2 / 3}


def test_nothing_relevant_is_undefined_and_left_out_of_means():
    f = score(["a.py"], Labels(frozenset()), ["recall@5", "mrr"])
    assert f == {"recall@5": None, "mrr": None}
    assert summarise([f, {"recall@5": 1.0, "mrr": 0.5}, {"recall@5": 0.0, "mrr": 1.0}], ["recall@5", "mrr"]) == {
        "recall@5": (1.0 + 0.0) / 2, "mrr": (0.5 + 1.0) / 2}
    assert summarise([], ["mrr"]) == {"mrr": None}
    assert score([], Labels(frozenset({"a.py"})), ["recall@5"]) == {"recall@5": 0.0}


def test_pass_lines_hold_in_their_direction_and_never_when_unmeasured():
    assert PassLine("recall@5", 0.5).holds(0.5) and not PassLine("recall@5", 0.5).holds(0.49)
    assert PassLine("latency", 2.0, higher_is_better=False).holds(1.0)
    assert not PassLine("recall@5", 0.0).holds(None)


def test_compare_drops_pairs_with_an_undefined_side():
    a = [{"mrr": 1.0}, {"mrr": None}, {"mrr": 0.0}]
    b = [{"mrr": 0.5}, {"mrr": 1.0}, {"mrr": 0.0}]
    out = compare(a, b, ["mrr"], seed=1)
    assert out["mrr"]["n"] == 2 and out["mrr"]["mean_diff"] == pytest.approx(0.25)
    assert compare([{"mrr": None}], [{"mrr": None}], ["mrr"], seed=1) == {}
