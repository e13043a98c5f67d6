"""Tests for ctxgauge.metrics.ranking and the metric registry.

Expected values are written as the formulas they come from. The oracle test at the end checks every
metric that has an ir_measures counterpart against ir_measures' own backends, query by query, to 1e-9.
"""

from __future__ import annotations

from math import log2

import numpy as np
import pytest

from ctxgauge.errors import UserError
from ctxgauge.metrics import (
    Metric,
    MetricSpecError,
    evaluate,
    first_relevant_rank,
    get_metric_kind,
    mean_over,
    metric_kinds,
    parse_metric,
    register_metric,
)
from ctxgauge.metrics import _registry

# Relevant at ranks 2 and 4; z.py is relevant but never retrieved.
RANKING = ["a.py", "b.py", "c.py", "d.py", "e.py"]
RELEVANT = {"b.py", "d.py", "z.py"}


def _score(spec: str, ranking=RANKING, relevant=RELEVANT) -> float | None:
    return parse_metric(spec).compute(ranking, relevant)


def _example_specs(context: bool = False) -> list[str]:
    """Two specs per registered family (with and without cutoff where allowed); ranking metrics only
    unless `context` (context metrics score spans: tests/metrics/test_spans.py)."""
    specs = []
    for kind in metric_kinds():
        if kind.reads != "ranking" and not context:
            continue
        if kind.k in ("required", "optional"):
            specs += [f"{kind.name}@1", f"{kind.name}@10"]
        if kind.k in ("optional", "none"):
            specs.append(kind.name)
    return specs


# ---------------------------------------------------------------- specs and the registry


def test_registry_holds_the_documented_metrics():
    assert [kind.name for kind in metric_kinds() if kind.reads == "ranking"] == [
        "hit", "recall", "precision", "precision_returned", "mrr", "ndcg",
    ]


@pytest.mark.parametrize("spec", _example_specs(context=True))
def test_every_registered_spec_parses_back_to_itself(spec):
    metric = parse_metric(spec)
    assert str(metric) == spec == metric.spec
    assert parse_metric(str(metric)) == metric
    assert metric.description and metric.higher_is_better is get_metric_kind(metric.name).higher_is_better


@pytest.mark.parametrize(
    ("text", "canonical"),
    [(" Recall@10 ", "recall@10"), ("RECALL @ 10", "recall@10"), ("nDCG@5", "ndcg@5"), ("MRR", "mrr"),
     ("mrr @3", "mrr@3"), ("hit@010", "hit@10"), ("Precision_Returned@7", "precision_returned@7")],
)
def test_parse_is_tolerant_and_canonical_form_is_lowercase(text, canonical):
    assert str(parse_metric(text)) == canonical


@pytest.mark.parametrize(
    "text",
    ["", "recall", "ndcg", "recall@0", "recall@-1", "recall@x", "recall@10@2", "recall@1.5", "nope@3",
     "mrr@", "@10", "recall 10", "recall@10x"],
)
def test_parse_rejects_malformed_specs_as_user_errors(text):
    with pytest.raises(MetricSpecError) as info:
        parse_metric(text)
    # One exception type, catchable both ways: the CLI's UserError and a plain ValueError.
    assert isinstance(info.value, UserError) and isinstance(info.value, ValueError)


def test_parse_rejects_non_strings():
    with pytest.raises(MetricSpecError):
        parse_metric(10)  # type: ignore[arg-type]


def test_metric_constructor_is_strict_and_equal_to_parsed():
    assert Metric("recall", 10) == parse_metric("Recall@10")
    assert len({Metric("recall", 10), parse_metric("recall@10"), Metric("recall", 5)}) == 2
    assert parse_metric(Metric("mrr")) == Metric("mrr")
    for name, k in [("Recall", 10), ("recall", None), ("recall", 0), ("recall", True), ("recall", 2.0)]:
        with pytest.raises(MetricSpecError):
            Metric(name, k)  # type: ignore[arg-type]


def test_metric_metadata_comes_from_the_registry():
    metric = Metric("recall", 10)
    assert metric.higher_is_better is True
    assert "top 10" in metric.description
    assert "whole ranking" in Metric("mrr").description
    with pytest.raises(TypeError):  # direction is the registry's, not a per-instance choice
        Metric("recall", 10, higher_is_better=False)  # type: ignore[call-arg]


def test_a_plugin_registers_and_computes_like_a_built_in(monkeypatch):
    # A private copy of the registry, so this plugin does not leak into other tests' sweeps.
    monkeypatch.setattr(_registry, "_REGISTRY", dict(_registry._REGISTRY))

    @register_metric("misses", k="required", description="Relevant files missing from the {top}.",
                     higher_is_better=False)
    def _misses(ranking, relevant, k):
        return float(len(relevant - set(ranking[:k])))

    metric = parse_metric("MISSES@2")
    assert str(metric) == "misses@2" and metric.higher_is_better is False
    assert metric.compute(RANKING, RELEVANT) == 3 - 1
    assert metric.compute([], RELEVANT) == 0.0  # the shared edge cases apply to plugins too
    assert metric.compute(RANKING, set()) is None
    with pytest.raises(ValueError, match="already registered"):
        register_metric("misses", k="required", description="again")(_misses)


@pytest.mark.parametrize("name", ["Bad", "1hit", "hit@3", "", "has space"])
def test_register_rejects_names_that_would_not_parse_back(name):
    with pytest.raises(ValueError):
        register_metric(name, k="none", description="x")


def test_register_rejects_unknown_k_rule():
    with pytest.raises(ValueError):
        register_metric("whatever", k="sometimes", description="x")  # type: ignore[arg-type]


# ---------------------------------------------------------------- hand-computed values


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("hit@1", 0.0),
        ("hit@2", 1.0),
        ("recall@2", 1 / 3),
        ("recall@5", 2 / 3),
        ("recall@100", 2 / 3),
        ("precision@2", 1 / 2),
        ("precision@4", 2 / 4),
        ("precision@10", 2 / 10),  # divides by k although only 5 paths were returned
        ("precision_returned@2", 1 / 2),
        ("precision_returned@10", 2 / 5),  # divides by min(k, len(ranking)) = 5
        ("mrr", 1 / 2),
        ("mrr@1", 0.0),
        ("mrr@2", 1 / 2),
        ("ndcg@1", 0.0),
        ("ndcg@2", (1 / log2(3)) / (1 / log2(2) + 1 / log2(3))),
        ("ndcg@5", (1 / log2(3) + 1 / log2(5)) / (1 / log2(2) + 1 / log2(3) + 1 / log2(4))),
        # ideal = min(k, |relevant|) = 3 ones even at k = 10
        ("ndcg@10", (1 / log2(3) + 1 / log2(5)) / (1 / log2(2) + 1 / log2(3) + 1 / log2(4))),
    ],
)
def test_hand_computed_values(spec, expected):
    assert _score(spec) == pytest.approx(expected, abs=1e-12)


def test_ndcg_formula_from_the_brief():
    ranking = ["r1", "n1", "r2"]
    assert _score("ndcg@3", ranking, {"r1", "r2"}) == pytest.approx(
        (1 / log2(2) + 1 / log2(4)) / (1 / log2(2) + 1 / log2(3))
    )


def test_ndcg_is_one_for_a_perfect_ranking_cut_below_the_relevant_count():
    relevant = {f"r{i}" for i in range(5)}
    assert _score("ndcg@3", ["r0", "r1", "r2", "x"], relevant) == pytest.approx(1.0)
    assert _score("recall@3", ["r0", "r1", "r2", "x"], relevant) == pytest.approx(3 / 5)


def test_mrr_without_cutoff_reads_the_whole_ranking():
    ranking = [f"n{i}.py" for i in range(30)] + ["hit.py"]
    assert _score("mrr", ranking, {"hit.py"}) == pytest.approx(1 / 31)
    assert _score("mrr@30", ranking, {"hit.py"}) == 0.0


def test_order_is_taken_as_given_not_re_sorted():
    assert _score("mrr", ["x", "y", "rel"], {"rel"}) == pytest.approx(1 / 3)
    assert _score("mrr", ["rel", "x", "y"], {"rel"}) == 1.0


def test_first_relevant_rank():
    assert first_relevant_rank(RANKING, RELEVANT) == 2
    assert first_relevant_rank(RANKING, {"a.py"}) == 1
    assert first_relevant_rank(RANKING, {"nowhere.py"}) is None
    assert first_relevant_rank([], RELEVANT) is None
    with pytest.raises(ValueError):
        first_relevant_rank(["a", "a"], {"a"})


def test_any_sequence_and_collection_are_accepted():
    as_tuple = _score("recall@5", tuple(RANKING), list(RELEVANT))
    as_keys = _score("recall@5", RANKING, dict.fromkeys(RELEVANT).keys())
    assert as_tuple == as_keys == pytest.approx(2 / 3)


# ---------------------------------------------------------------- edge cases


@pytest.mark.parametrize("spec", _example_specs())
def test_empty_ranking_scores_zero(spec):
    assert _score(spec, [], RELEVANT) == 0.0


@pytest.mark.parametrize("spec", _example_specs())
def test_no_relevant_file_is_undefined(spec):
    assert _score(spec, RANKING, set()) is None
    assert _score(spec, [], set()) is None  # undefined wins over empty


@pytest.mark.parametrize("spec", _example_specs())
def test_scores_lie_in_the_unit_interval(spec):
    value = _score(spec)
    assert value is not None and 0.0 <= value <= 1.0


def test_duplicated_path_is_refused():
    with pytest.raises(ValueError, match="b.py"):
        _score("recall@5", ["a.py", "b.py", "b.py"], {"b.py"})
    with pytest.raises(ValueError):
        evaluate(["hit@1"], ["a", "a"], {"a"})


@pytest.mark.parametrize(
    ("ranking", "relevant"),
    [("a.py", {"a.py"}), (["a.py"], "a.py"), ([("a.py", 0.9)], {"a.py"}), ([1, 2], {"a"}), (["a"], {1})],
)
def test_wrong_input_types_are_refused(ranking, relevant):
    with pytest.raises(TypeError):
        _score("hit@1", ranking, relevant)


# ---------------------------------------------------------------- evaluate and mean_over


def test_evaluate_keys_are_canonical_specs_in_the_order_given():
    result = evaluate(["NDCG@5", Metric("mrr"), "recall@2", "ndcg @ 5"], RANKING, RELEVANT)
    assert list(result) == ["ndcg@5", "mrr", "recall@2"]
    assert result["mrr"] == pytest.approx(1 / 2)
    assert result["recall@2"] == pytest.approx(1 / 3)
    assert evaluate(["mrr", "hit@3"], RANKING, set()) == {"mrr": None, "hit@3": None}


def test_evaluate_checks_every_spec_before_scoring():
    with pytest.raises(MetricSpecError):
        evaluate(["hit@1", "nope@1"], ["a", "a"], {"a"})


def test_mean_over_leaves_undefined_units_out():
    assert mean_over([1.0, None, 0.5]) == pytest.approx((1.0 + 0.5) / 2)
    assert mean_over(v for v in [0.0, 1.0, None, 1.0]) == pytest.approx(2 / 3)
    assert mean_over([]) is None
    assert mean_over([None, None]) is None
    assert mean_over([0.0]) == 0.0


# ---------------------------------------------------------------- oracle: ir_measures

# Our family -> the ir_measures measure for a cutoff. This table lives in the tests on purpose: the
# package's definitions must not depend on the backend that checks them.
IR_MEASURES_EQUIVALENT = {
    "hit": lambda irm, k: irm.Success @ k,
    "recall": lambda irm, k: irm.R @ k,
    "precision": lambda irm, k: irm.P @ k,
    "mrr": lambda irm, k: irm.RR if k is None else irm.RR @ k,
    "ndcg": lambda irm, k: irm.nDCG @ k,
}
NO_IR_MEASURES_EQUIVALENT = {"precision_returned"}  # checked by formula above
# pytrec_eval (C trec_eval) serves hit/recall/precision/RR/nDCG; msmarco (pure Python, in ir_measures)
# serves RR and RR@k. Both are tried wherever they support a measure.
ORACLE_PROVIDERS = ("pytrec_eval", "msmarco")
CUTOFFS = (1, 2, 3, 5, 10, 20)
N_QUERIES = 30


def _oracle_queries() -> dict[str, tuple[list[str], set[str], set[str]]]:
    """30 seeded queries: qid -> (ranking, relevant, judged non-relevant)."""
    rng = np.random.default_rng(20240611)
    corpus = [f"src/pkg{i % 4}/mod_{i:02d}.py" for i in range(40)]
    queries = {}
    for q in range(N_QUERIES):
        depth = 0 if q % 10 == 3 else int(rng.integers(1, 26))  # every tenth query returns nothing
        ranking = [str(p) for p in rng.choice(corpus, size=depth, replace=False)]
        relevant = {str(p) for p in rng.choice(corpus, size=int(rng.integers(1, 9)), replace=False)}
        if q % 7 == 0 and ranking:
            relevant.add(ranking[0])  # make sure some queries hit at rank 1
        judged_out = {p for p in ranking[: int(rng.integers(0, 4))] if p not in relevant}
        queries[f"q{q:02d}"] = (ranking, relevant, judged_out)
    return queries


def test_oracle_fixture_covers_the_cases_that_matter():
    queries = _oracle_queries()
    assert len(queries) == N_QUERIES
    assert list(queries)[0] == "q00" and list(queries)[-1] == f"q{N_QUERIES - 1:02d}"
    ranks = [first_relevant_rank(r, rel) for r, rel, _ in queries.values()]
    assert sum(not r for r, _, _ in queries.values()) >= 3  # empty rankings
    assert ranks.count(1) >= 3  # hits at rank 1
    assert ranks.count(None) >= 5  # nothing relevant retrieved
    assert sum(r is not None and r > 5 for r in ranks) >= 3  # first hit deep in the ranking
    assert sum(bool(j) for _, _, j in queries.values()) >= 5  # non-relevant judgments present
    assert queries == _oracle_queries()  # seeded: the same every run


def _oracle_specs() -> list[str]:
    specs = []
    for kind in metric_kinds():
        if kind.name in NO_IR_MEASURES_EQUIVALENT or kind.reads != "ranking":
            continue
        if kind.k != "required":
            specs.append(kind.name)
        if kind.k != "none":
            specs += [f"{kind.name}@{k}" for k in CUTOFFS]
    return specs


def test_every_metric_has_an_oracle_or_is_listed_without_one():
    names = {kind.name for kind in metric_kinds() if kind.reads == "ranking"}  # context: tests/metrics/test_spans.py
    assert names == set(IR_MEASURES_EQUIVALENT) | NO_IR_MEASURES_EQUIVALENT
    assert not set(IR_MEASURES_EQUIVALENT) & NO_IR_MEASURES_EQUIVALENT


def _ir_measures_inputs(irm, queries):
    qrels = [irm.Qrel(qid, p, 1) for qid, (_, rel, _) in queries.items() for p in sorted(rel)]
    qrels += [irm.Qrel(qid, p, 0) for qid, (_, _, out) in queries.items() for p in sorted(out)]
    # Strictly decreasing scores, so ir_measures' sort by score keeps our order exactly.
    run = [irm.ScoredDoc(qid, p, float(len(r) - i)) for qid, (r, _, _) in queries.items() for i, p in enumerate(r)]
    return qrels, run


@pytest.mark.parametrize("spec", _oracle_specs())
def test_metric_equals_ir_measures(spec):
    irm = pytest.importorskip("ir_measures")
    metric = parse_metric(spec)
    measure = IR_MEASURES_EQUIVALENT[metric.name](irm, metric.k)
    queries = _oracle_queries()
    qrels, run = _ir_measures_inputs(irm, queries)
    ours = {qid: metric.compute(r, rel) for qid, (r, rel, _) in queries.items()}
    checked = []
    for name in ORACLE_PROVIDERS:
        provider = irm.providers.registry[name]
        if not (provider.is_available() and provider.supports(measure)):
            continue
        evaluator = provider.evaluator([measure], qrels)
        theirs = {m.query_id: m.value for m in evaluator.iter_calc(run)}
        assert theirs.keys() == ours.keys(), f"{name} scored a different set of queries"
        for qid, value in ours.items():
            assert value == pytest.approx(theirs[qid], abs=1e-9), f"{spec} vs {name} {measure} on {qid}"
        aggregate = evaluator.calc_aggregate(run)[measure]
        assert mean_over(ours.values()) == pytest.approx(aggregate, abs=1e-9)
        checked.append(name)
    # A measure no provider could compute is a gap in the oracle, never a silent pass.
    assert checked, f"no ir_measures provider among {ORACLE_PROVIDERS} computes {measure}"


def test_no_relevant_file_differs_from_ir_measures_as_documented():
    irm = pytest.importorskip("ir_measures")
    ranking = ["a.py", "b.py"]
    # Judged, nothing relevant: ir_measures scores 0 and counts the query; we return None.
    qrels = [irm.Qrel("answerable", "a.py", 1), irm.Qrel("unanswerable", "b.py", 0)]
    run = [irm.ScoredDoc(q, p, float(2 - i)) for q in ("answerable", "unanswerable") for i, p in enumerate(ranking)]
    for spec, measure in [("recall@5", irm.R @ 5), ("mrr", irm.RR), ("ndcg@5", irm.nDCG @ 5)]:
        theirs = {m.query_id: m.value for m in irm.iter_calc([measure], qrels, run)}
        assert theirs == {"answerable": 1.0, "unanswerable": 0.0}
        ours = [parse_metric(spec).compute(ranking, {"a.py"}), parse_metric(spec).compute(ranking, set())]
        assert ours == [1.0, None]
        assert mean_over(ours) == 1.0
        assert irm.calc_aggregate([measure], qrels, run)[measure] == pytest.approx((1.0 + 0.0) / 2)
