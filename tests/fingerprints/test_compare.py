"""compare(): the published files, the reference's own verdict matrix, and where we depart from it."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from ctxgauge.fingerprints import (
    EXIT_CODES,
    CorpusRef,
    ExitCode,
    Fingerprint,
    QueryStatus,
    SystemIdentity,
    Verdict,
    compare,
    read_fingerprint,
    write_fingerprint,
)

from .conftest import BM25_LINUX, BM25_WIN, DATA, ENV_B, MINILM_WIN, SPIDERBRAIN_WIN, make

# ── the published files ──────────────────────────────────────────────────────────────────────────────────────


def test_bm25_windows_vs_linux_is_pass(interop: Path) -> None:
    # ContextBenchmark's own compare of these two files says PASS, artifact identical, 10/10 queries.
    result = compare(interop / BM25_WIN, interop / BM25_LINUX)
    assert result.verdict is Verdict.PASS and result.exit_code == 0 and result.verified
    assert result.artifact_match and len(result.matched) == 10 and len(result.queries) == 10
    assert "query results: 10/10 identical" in result.reasons
    # ContextBenchmark's files name no run, and these two differ only in env: a copy of one with env.os edited
    # would read exactly the same (F22), so PASS comes with that one warning.
    assert len(result.warnings) == 1 and "differ only in env, and A and B name no run" in result.warnings[0]


def test_bm25_vs_minilm_is_not_comparable(interop: Path) -> None:
    result = compare(interop / BM25_WIN, interop / MINILM_WIN)
    assert result.verdict is Verdict.NOT_COMPARABLE and result.exit_code == ExitCode.NOT_COMPARABLE == 4
    assert [b.split(" ")[0] for b in result.blockers] == ["adapter", "system"]


def test_interop_file_with_itself_is_refused(interop: Path, tmp_path: Path) -> None:
    assert compare(interop / BM25_WIN, interop / BM25_WIN).verdict is Verdict.REFUSED
    copy = shutil.copy(interop / BM25_WIN, tmp_path / "copy.json")
    result = compare(interop / BM25_WIN, copy)
    assert result.verdict is Verdict.REFUSED and result.exit_code == 5 and "byte-identical" in result.reasons[0]


def test_spiderbrain_pass_warns_that_every_result_was_empty(interop: Path, tmp_path: Path) -> None:
    # A copy on "another machine": only env differs, so it passes, with the warning the reference never gave.
    fp = read_fingerprint(interop / SPIDERBRAIN_WIN)
    other = write_fingerprint(replace(fp, env={**fp.env, "os": "linux 6.8"}), tmp_path / "b.json")
    result = compare(interop / SPIDERBRAIN_WIN, other)
    assert result.verdict is Verdict.PASS
    assert "10 of 10 queries returned no results on both sides" in result.warnings


# ── the reference's verdict matrix (test/compare.test.mjs), with our exit codes ─────────────────────────────

V1 = dict(format=1, benchmark_version=None, adapter="spiderbrain", system=None, corpus=CorpusRef("micro-app", None))


@pytest.mark.parametrize(("a", "b", "verdict"), [
    (make(), make(env=ENV_B), Verdict.PASS),
    (make(), make(env=ENV_B, artifact_hash="art2"), Verdict.FAIL),
    (make(), make(system=SystemIdentity("sha256:def", "content-hash"), artifact_hash="art2"), Verdict.NOT_COMPARABLE),
    (make(), make(corpus=CorpusRef("micro-app", "dec0de")), Verdict.NOT_COMPARABLE),
    (make(), make(benchmark_version="0.2.0"), Verdict.NOT_COMPARABLE),
    (make(**V1), make(**V1, artifact_hash="art2"), Verdict.INCONCLUSIVE),  # the motivating case of format 2
    (make(**V1), make(**V1, env=ENV_B), Verdict.PASS_UNVERIFIED),
    (make(**{**V1, "adapter": "bm25"}), make(env=ENV_B), Verdict.PASS_UNVERIFIED),
    (make(), make(adapter="emb-minilm"), Verdict.NOT_COMPARABLE),
    (make(), make(env=ENV_B, query_hashes={"q1": "aaa", "q2": "CHANGED"}), Verdict.FAIL),
])
def test_reference_matrix(a: Fingerprint, b: Fingerprint, verdict: Verdict) -> None:
    assert compare(a, b).verdict is verdict
    assert compare(b, a).verdict is verdict


def test_partial_overlap_counts_matches() -> None:
    result = compare(make(), make(env=ENV_B, query_hashes={"q1": "aaa", "q2": "CHANGED"}))
    assert result.matched == ("q1",) and result.differing == ("q2",)
    assert "query results: 1/2 identical" in result.reasons


def test_format_1_files_compare_as_unverified(tmp_path: Path) -> None:
    v1 = DATA / "contextbenchmark-v1.bm25.fingerprint.json"
    fp = read_fingerprint(v1)
    other = replace(fp, env=ENV_B | {"os": "linux 6.8"})
    result = compare(v1, other)
    assert result.verdict is Verdict.PASS_UNVERIFIED and result.exit_code == 0
    assert set(result.unknowns) == {"corpus content", "benchmark version", "system identity"}


# ── where we depart from the reference ───────────────────────────────────────────────────────────────────────


def test_k_differing_is_not_comparable() -> None:
    result = compare(make(k=10), make(k=5, env=ENV_B, query_hashes={"q1": "x", "q2": "y"}))
    assert result.verdict is Verdict.NOT_COMPARABLE and result.blockers == ("k (10 vs 5)",)


def test_the_corpus_is_its_content_and_the_name_a_label() -> None:
    # The same clone under another folder name: same content hash, another name.
    result = compare(make(), make(env=ENV_B, corpus=CorpusRef("memos-clone", "c0ffee")))
    assert result.verdict is Verdict.PASS and result.blockers == ()
    assert any("corpus names differ (micro-app vs memos-clone)" in r for r in result.reasons)
    # Other content under the same name still blocks; a name with no hash to back it still blocks.
    assert compare(make(), make(env=ENV_B, corpus=CorpusRef("micro-app", "dec0de"))).verdict is Verdict.NOT_COMPARABLE
    nameless = compare(make(corpus=CorpusRef("a", None)), make(env=ENV_B, corpus=CorpusRef("b", None)))
    assert nameless.verdict is Verdict.NOT_COMPARABLE and "corpus (a vs b)" in nameless.blockers


def test_undeclared_system_passes_unverified_and_differences_are_inconclusive() -> None:
    assert compare(make(system=None), make(system=None, env=ENV_B)).verdict is Verdict.PASS_UNVERIFIED
    assert compare(make(), make(system=None, env=ENV_B)).verdict is Verdict.PASS_UNVERIFIED
    differs = compare(make(system=None), make(system=None, env=ENV_B, artifact_hash="art2"))
    assert differs.verdict is Verdict.INCONCLUSIVE and differs.exit_code == 3
    assert "unattributable: system identity not recorded in A and B" in differs.reasons


@pytest.mark.parametrize(("a_queries", "b_queries"), [
    ({"q1": "aaa", "q2": "bbb"}, {"q1": "aaa", "q2": "bbb", "q3": "ccc"}),  # a query only in B
    ({"q1": "aaa", "q2": "bbb"}, {"q1": "aaa"}),  # a query only in A
])
def test_query_set_difference_is_seen_from_both_sides(a_queries: dict[str, str], b_queries: dict[str, str]) -> None:
    # The reference walks A's queries only: compare(a, b) would PASS where compare(b, a) FAILs.
    ab = compare(make(query_hashes=a_queries), make(env=ENV_B, query_hashes=b_queries))
    ba = compare(make(env=ENV_B, query_hashes=b_queries), make(query_hashes=a_queries))
    assert ab.verdict is ba.verdict is Verdict.INCONCLUSIVE
    assert set(ab.only_in_a + ab.only_in_b) == set(ba.only_in_a + ba.only_in_b) != set()
    assert ab.only_in_a == ba.only_in_b


def test_query_only_in_b_with_a_real_difference_is_fail() -> None:
    a = make(query_hashes={"q1": "aaa"})
    b = make(env=ENV_B, query_hashes={"q1": "zzz", "q3": "ccc"})
    assert compare(a, b).verdict is compare(b, a).verdict is Verdict.FAIL
    detail = {d.query: d.status for d in compare(a, b).queries}
    assert detail == {"q1": QueryStatus.DIFFER, "q3": QueryStatus.ONLY_B}


SCENARIOS = [
    make(env=ENV_B),
    make(env=ENV_B, artifact_hash="art2"),
    make(env=ENV_B, system=None),
    make(env=ENV_B, system=None, artifact_hash="art2"),
    make(env=ENV_B, query_hashes={"q1": "aaa"}),
    make(env=ENV_B, query_hashes={"q1": "aaa", "q2": "bbb", "q9": "new"}),
    make(env=ENV_B, query_hashes={}),
    make(env=ENV_B, k=3),
    make(env=ENV_B, corpus=CorpusRef("micro-app", None)),
    make(env=ENV_B, adapter="grep"),
]


@pytest.mark.parametrize("b", SCENARIOS)
def test_verdict_is_symmetric(b: Fingerprint) -> None:
    assert compare(make(), b).verdict is compare(b, make()).verdict


def test_self_compare_is_refused(tmp_path: Path) -> None:
    path = write_fingerprint(make(), tmp_path / "a.json")
    assert compare(path, path).verdict is Verdict.REFUSED
    assert compare(path, tmp_path / "." / "a.json").verdict is Verdict.REFUSED
    assert compare(make(), make()).verdict is Verdict.REFUSED  # in memory: identical content
    assert compare(path, make()).verdict is Verdict.REFUSED  # a file and the same content in memory
    changed = replace(read_fingerprint(path), env=ENV_B)  # a modified copy no longer claims the file
    assert changed.path is None and compare(path, changed).verdict is Verdict.PASS


def test_same_env_different_content_is_compared_with_a_warning() -> None:
    result = compare(make(), make(artifact_hash="art2"))
    assert result.verdict is Verdict.FAIL
    assert any("same environment" in w for w in result.warnings)


def test_no_queries_passes_on_the_artifact_with_a_warning() -> None:
    result = compare(make(query_hashes={}), make(query_hashes={}, env=ENV_B))
    assert result.verdict is Verdict.PASS and "query results: 0/0 identical" in result.reasons
    assert any("no query results" in w for w in result.warnings)


def test_exit_codes() -> None:
    assert {v.label: int(c) for v, c in EXIT_CODES.items()} == {
        "PASS": 0, "PASS (UNVERIFIED)": 0, "FAIL": 1, "INCONCLUSIVE": 3, "NOT COMPARABLE": 4, "REFUSED": 5,
    }
    assert ExitCode.USAGE == 2 and set(EXIT_CODES) == set(Verdict)


def test_to_json() -> None:
    data = compare(make(), make(env=ENV_B, query_hashes={"q1": "aaa", "q2": "x"})).to_json()
    assert (data["verdict"], data["exitCode"], data["verified"], data["artifactMatch"]) == ("FAIL", 1, True, True)
    assert data["queries"][1] == {"query": "q2", "status": "differ", "hashA": "bbb", "hashB": "x"}
