"""Determinism covers spans: built-in engines with spans stay CTL 3, and a fingerprint holds file-only
`queryHashes` (ContextBenchmark's) beside `ctxgauge.spanHashes` (issue 37 item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgauge.corpus import open_corpus
from ctxgauge.engines import get_engine
from ctxgauge.fingerprints import query_hash, read_fingerprint, span_hash
from ctxgauge.suites.determinism import DeterminismConfig, run_determinism


@pytest.mark.parametrize("spec", ["grep", "bm25"])  # spans on: the default
def test_a_built_in_engine_with_spans_is_ctl3_and_its_fingerprint_hashes_both(spec: str, library_repo: Path,
                                                                              tmp_path: Path) -> None:
    result = run_determinism(DeterminismConfig(source=library_repo, out=tmp_path / "run", engines=(spec,),
                                               rebuilds=2, trials=3, k=5))
    e = result.engines[spec]
    q = e.families["query"].figures
    assert q["span_exact_match_rate"] == 1.0 and q["unstable_spans"] == 0
    assert e.families["update"].figures["identical"] is True
    assert e.grade.level == 3
    fp = read_fingerprint(tmp_path / "run" / e.fingerprint_record)
    corpus = open_corpus(library_repo)
    engine = get_engine(spec)
    engine.build(corpus, tmp_path / "index")
    spanned = 0
    for query in result.queries:
        hits = engine.query(tmp_path / "index", query, 5)
        assert fp.query_hashes[query] == query_hash([h.path for h in hits])  # files only, as ContextBenchmark
        assert fp.ctxgauge["spanHashes"][query] == span_hash([(h.path, h.spans) for h in hits])
        spanned += sum(1 for h in hits if h.spans)
    assert spanned > 0


BUILT_IN = ("grep", "bm25", "graph", "history", "fusion")
"""Every built-in engine but minilm and hybrid (a model to load: the slow tier's)."""


@pytest.mark.parametrize("spec", BUILT_IN)
def test_every_built_in_engine_is_ctl3_with_its_default_spans_on_the_sample(spec: str, sample_repo: Path,
                                                                          tmp_path: Path) -> None:
    from ctxgauge.records import read_run
    from ctxgauge.suites.determinism import SUITE_VERSION

    result = run_determinism(DeterminismConfig(source=sample_repo, out=tmp_path / "run", engines=(spec,),
                                               rebuilds=2, trials=2, k=5, query_count=3,
                                               families=("rebuild", "query", "update")))
    assert read_run(tmp_path / "run").suite_version == SUITE_VERSION == 2  # CTL 3 now needs spans too
    e = result.engines[spec]
    q = e.families["query"].figures
    assert q["exact_match_rate"] == q["span_exact_match_rate"] == 1.0
    assert e.families["update"].figures["identical"] is True
    assert e.grade.level == 3, e.grade.reasons
