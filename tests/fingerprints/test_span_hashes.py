"""`ctxgauge.spanHashes`: each query's answer with its spans, hashed beside the file-only `queryHashes`,
and compared by `compare` when both sides hold them (issue 37 item 2)."""

from __future__ import annotations

import hashlib

from ctxgauge.fingerprints import SPAN_HASHES, compare, query_hash, span_hash

from .conftest import ENV_B, make


def test_span_hash_is_the_compact_json_of_paths_with_their_spans() -> None:
    expected = hashlib.sha256(b'[["a.py",[[1,4],[9,12]]],["b.md",[]]]').hexdigest()
    assert span_hash([("a.py", ((1, 4), (9, 12))), ("b.md", ())]) == expected
    assert span_hash([]) == hashlib.sha256(b"[]").hexdigest()
    # the spans are part of it; the file-only hash is ContextBenchmark's and knows none
    assert span_hash([("a.py", ((1, 4),))]) != span_hash([("a.py", ((1, 5),))])
    assert query_hash(["a.py", "b.md"]) == hashlib.sha256(b'["a.py","b.md"]').hexdigest()


def _with(spans: dict[str, str] | None, **over):
    extra = {"ctxgauge": {"version": "x", SPAN_HASHES: spans}} if spans is not None else {}
    return make(extra=extra, **over)


def test_same_files_other_lines_fail() -> None:
    a = _with({"q1": "s1", "q2": "s2"})
    b = _with({"q1": "s1", "q2": "other"}, env=ENV_B)
    c = compare(a, b)
    assert c.verdict.label == "FAIL"
    assert c.differing == ("q2",)
    assert "1 of them ranked the same files but handed over different lines (spans)" in c.reasons
    row = c.to_json()["queries"][1]
    assert (row["hashA"], row["hashB"], row["spanHashA"], row["spanHashB"]) == ("bbb", "bbb", "s2", "other")


def test_same_spans_pass() -> None:
    c = compare(_with({"q1": "s1", "q2": "s2"}), _with({"q1": "s1", "q2": "s2"}, env=ENV_B))
    assert c.verdict.label == "PASS"


def test_one_side_without_span_hashes_compares_files_only_and_says_so() -> None:
    c = compare(_with({"q1": "s1", "q2": "s2"}), _with(None, env=ENV_B))
    assert c.verdict.label == "PASS"
    assert "spans not compared: B records no span hashes" in c.reasons
    assert "spanHashA" not in c.to_json()["queries"][0]
