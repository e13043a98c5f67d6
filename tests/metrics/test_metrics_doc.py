"""docs/metrics.md is the metric registry, byte for byte; every ir_measures name it gives computes the same
value to 1e-12 on seeded random rankings; every departure it lists is shown by the test it names (those
tests are here, each against ir_measures itself)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ctxgauge.metrics import metric_kinds, parse_metric
from ctxgauge.metrics._registry import DEPARTURES
from ctxgauge.metrics.doc import render
from ctxgauge.metrics.ranking import mean_over
from ctxgauge.metrics.spans import Gold, SpanContext, aggregate, context_figures

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "metrics.md"
CUTOFFS = (1, 2, 3, 5, 10, 20)
PROVIDERS = ("pytrec_eval", "msmarco")


def test_docs_metrics_md_is_regenerated_byte_for_byte(tmp_path):
    assert DOC.read_bytes() == render().encode("utf-8")
    # The entry point writes the same bytes, and --check agrees with the file in the tree.
    out = tmp_path / "metrics.md"
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "ctxgauge.metrics.doc", str(out)], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == DOC.read_bytes()
    check = subprocess.run([sys.executable, "-m", "ctxgauge.metrics.doc", "--check", str(DOC)], env=env)
    assert check.returncode == 0
    out.write_bytes(DOC.read_bytes().replace(b"Success@k", b"Success@q"))
    stale = subprocess.run([sys.executable, "-m", "ctxgauge.metrics.doc", "--check", str(out)], env=env,
                           capture_output=True, text=True)
    assert stale.returncode == 1 and "differs from the metric registry" in stale.stderr


def test_every_built_in_family_is_documented_with_a_formula():
    text = DOC.read_text(encoding="utf-8")
    for kind in metric_kinds():
        assert f"### {kind.name}\n" in text
        assert kind.formula, kind.name
    for word in ("hit", "recall", "nDCG", "MRR", "pack_recall", "precision_returned"):
        assert word.lower() in text.lower()


def _departures():
    return [*DEPARTURES, *(d for k in metric_kinds() for d in k.departures)]


@pytest.mark.parametrize("departure", _departures(), ids=lambda d: d.test.rsplit("::", 1)[-1])
def test_every_departure_names_a_test_that_exists(departure):
    path, name = departure.test.split("::")
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    assert name in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, departure.test
    assert departure.test in DOC.read_text(encoding="utf-8")


# ---------------------------------------------------------------- both ways, to 1e-12

def _queries(seed: int = 39) -> dict[str, tuple[list[str], set[str]]]:
    """40 seeded random requests: a ranking (0 to 30 paths) and 1 to 10 relevant files."""
    rng = np.random.default_rng(seed)
    corpus = [f"pkg{i % 5}/m{i:03d}.py" for i in range(60)]
    out = {}
    for q in range(40):
        depth = 0 if q % 13 == 4 else int(rng.integers(1, 31))
        ranking = [str(p) for p in rng.choice(corpus, size=depth, replace=False)]
        relevant = {str(p) for p in rng.choice(corpus, size=int(rng.integers(1, 11)), replace=False)}
        if q % 6 == 0 and ranking:
            relevant.add(ranking[0])
        out[f"q{q:02d}"] = (ranking, relevant)
    return out


def _with_ir_measures() -> list[tuple[str, str]]:
    out = []
    for kind in metric_kinds():
        if kind.ir_measures is None:
            continue
        ks = ([None] if kind.k != "required" else []) + (list(CUTOFFS) if kind.k != "none" else [])
        out += [(str(parse_metric(kind.name if k is None else f"{kind.name}@{k}")), kind.ir_measures_name(k))
                for k in ks]
    return out


def _ours(spec: str, queries) -> dict[str, float | None]:
    metric = parse_metric(spec)
    kind = next(k for k in metric_kinds() if k.name == metric.name)
    if kind.reads == "ranking":
        return {q: metric.compute(r, rel) for q, (r, rel) in queries.items()}
    out = {}
    for q, (r, rel) in queries.items():
        ctx = SpanContext(tuple((p, frozenset()) for p in r))
        pair = context_figures([spec], ctx, Gold.of(rel, {}))[spec]
        out[q] = aggregate(spec, [pair])
    return out


def test_the_registry_names_ir_measures_for_the_usual_metrics():
    names = dict(_with_ir_measures())
    assert names["hit@5"] == "Success@5" and names["recall@10"] == "R@10" and names["ndcg@5"] == "nDCG@5"
    assert names["mrr"] == "RR" and names["mrr@10"] == "RR@10" and names["file_coverage@3"] == "R@3"


@pytest.mark.parametrize(("spec", "name"), _with_ir_measures())
def test_every_ir_measures_name_computes_the_same_to_1e_12(spec, name):
    irm = pytest.importorskip("ir_measures")
    measure = irm.parse_measure(name)
    queries = _queries()
    qrels = [irm.Qrel(q, p, 1) for q, (_, rel) in queries.items() for p in sorted(rel)]
    run = [irm.ScoredDoc(q, p, float(len(r) - i)) for q, (r, _) in queries.items() for i, p in enumerate(r)]
    ours = _ours(spec, queries)
    checked = []
    for provider_name in PROVIDERS:
        provider = irm.providers.registry[provider_name]
        if not (provider.is_available() and provider.supports(measure)):
            continue
        evaluator = provider.evaluator([measure], qrels)
        theirs = {m.query_id: m.value for m in evaluator.iter_calc(run)}
        for q, value in ours.items():
            assert abs(value - theirs.get(q, 0.0)) <= 1e-12, (spec, provider_name, q, value, theirs.get(q))
        assert abs(mean_over(ours.values()) - evaluator.calc_aggregate(run)[measure]) <= 1e-12
        checked.append(provider_name)
    assert checked, f"no provider computes {name}"


# ---------------------------------------------------------------- the departures, each shown

def test_departure_no_relevant_file_is_left_out():
    irm = pytest.importorskip("ir_measures")
    qrels = [irm.Qrel("answerable", "a.py", 1), irm.Qrel("unanswerable", "b.py", 0)]
    run = [irm.ScoredDoc(q, p, float(2 - i)) for q in ("answerable", "unanswerable") for i, p in
           enumerate(["a.py", "b.py"])]
    theirs = irm.calc_aggregate([irm.R @ 5], qrels, run)[irm.R @ 5]
    ours = [parse_metric("recall@5").compute(["a.py", "b.py"], rel) for rel in ({"a.py"}, set())]
    assert ours == [1.0, None]
    assert mean_over(ours) == 1.0 and theirs == pytest.approx(0.5)


def test_departure_order_is_the_engines_not_the_scores():
    irm = pytest.importorskip("ir_measures")
    # The engine returned a.py first; at equal scores trec_eval breaks the tie by document id (descending),
    # which puts z.py, the relevant one, first.
    qrels = [irm.Qrel("q", "z.py", 1)]
    run = [irm.ScoredDoc("q", "a.py", 1.0), irm.ScoredDoc("q", "z.py", 1.0)]
    theirs = irm.calc_aggregate([irm.RR], qrels, run)[irm.RR]
    assert parse_metric("mrr").compute(["a.py", "z.py"], {"z.py"}) == 0.5
    assert theirs == 1.0


def test_departure_duplicate_paths_are_refused():
    irm = pytest.importorskip("ir_measures")
    qrels = [irm.Qrel("q", "a.py", 1)]
    run = [irm.ScoredDoc("q", "b.py", 3.0), irm.ScoredDoc("q", "a.py", 2.0), irm.ScoredDoc("q", "b.py", 1.0)]
    theirs = irm.calc_aggregate([irm.P @ 3], qrels, run)[irm.P @ 3]
    assert theirs == pytest.approx(1 / 3)  # scored, the repeat collapsed without a word
    with pytest.raises(ValueError, match="b.py"):
        parse_metric("precision@3").compute(["b.py", "a.py", "b.py"], {"a.py"})
