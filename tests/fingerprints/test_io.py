"""Reading formats 1 and 2 tolerantly, refusing what is newer or broken, writing byte-for-byte like the reference."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ctxgauge.errors import UserError
from ctxgauge.fingerprints import (
    CorpusRef,
    Fingerprint,
    SystemIdentity,
    make_fingerprint,
    parse_fingerprint,
    read_fingerprint,
    write_fingerprint,
)

from .conftest import BM25_WIN, DATA, INTEROP_FILES, MINILM_WIN, SPIDERBRAIN_WIN, make


def _write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _ours() -> Fingerprint:
    return make_fingerprint(
        adapter="bm25",
        system={"id": "sha256:0123456789abcdef", "source": "content-hash", "note": "ünïcode note"},
        corpus_name="micro-app",
        corpus_hash="d" * 64,
        k=10,
        artifact_hash="a" * 64,
        # "42" is an array-index key: JSON.stringify moves it first, and so must a round trip.
        query_results={"where is é handled?": ["src/é.ts", "src/b.ts"], "42": [], "tab\there": ["x"]},
        extra={"suite": "determinism", "seed": 7},
    )


def test_round_trip_is_byte_identical(tmp_path: Path) -> None:
    first = write_fingerprint(_ours(), tmp_path / "one.fingerprint.json")
    again = write_fingerprint(read_fingerprint(first), tmp_path / "two.fingerprint.json")
    assert first.read_bytes() == again.read_bytes()
    assert read_fingerprint(first) == read_fingerprint(again) == _ours()


def test_written_layout_matches_the_reference_writer(tmp_path: Path) -> None:
    text = write_fingerprint(_ours(), tmp_path / "fp.json").read_text(encoding="utf-8")
    assert text.startswith('{\n "contextbenchmarkFingerprint": 2,\n "benchmarkVersion": "0.1.0",\n "adapter": "bm25",')
    assert not text.endswith("\n")  # JSON.stringify(fp, null, 1) written with no newline
    assert "ünïcode" in text and "\\u" not in text
    assert list(json.loads(text)) == [
        "contextbenchmarkFingerprint", "benchmarkVersion", "adapter", "system", "corpus", "k", "env",
        "artifactHash", "queryHashes", "ctxgauge",
    ]
    assert list(json.loads(text)["queryHashes"]) == ["42", "where is é handled?", "tab\there"]


@pytest.mark.parametrize("name", INTEROP_FILES)
def test_interop_file_reads_and_rewrites_byte_identical(interop: Path, tmp_path: Path, name: str) -> None:
    fp = read_fingerprint(interop / name)
    assert fp.format == 2 and fp.benchmark_version == "0.1.0" and fp.k == 10
    assert fp.corpus == CorpusRef("micro-app", "d157a88a7646781d5584ccc860de15083b0682276a249ee2d2e5255e707a0851")
    assert len(fp.query_hashes) == 10 and fp.extra == {} and fp.ctxgauge == {}
    assert write_fingerprint(fp, tmp_path / name).read_bytes() == (interop / name).read_bytes()


def test_interop_identities(interop: Path) -> None:
    assert read_fingerprint(interop / BM25_WIN).system == SystemIdentity("sha256:8685c22bb69f6eb9", "content-hash")
    minilm = read_fingerprint(interop / MINILM_WIN).system
    assert minilm is not None and minilm.source == "declared" and minilm.note and "not by revision" in minilm.note
    assert read_fingerprint(interop / SPIDERBRAIN_WIN).env["os"] == "win32 10.0.19045"


def test_reads_format_1_after_the_rename() -> None:
    fp = read_fingerprint(DATA / "contextbenchmark-v1.bm25.fingerprint.json")
    assert (fp.format, fp.adapter, fp.corpus, fp.system, fp.benchmark_version, fp.k) == (
        1, "bm25", CorpusRef("micro-app", None), None, None, 10)
    assert len(fp.query_hashes) == 10 and fp.extra == {}


def test_reads_format_1_before_the_rename() -> None:
    fp = read_fingerprint(DATA / "detbench-v1.spiderbrain.fingerprint.json")
    assert (fp.format, fp.adapter, fp.corpus.name) == (1, "spiderbrain", "micro-app")
    assert "detbenchFingerprint" not in fp.extra  # consumed as the format marker


def test_format_1_is_upgraded_with_nulls_on_write(tmp_path: Path) -> None:
    fp = read_fingerprint(DATA / "contextbenchmark-v1.bm25.fingerprint.json")
    data = json.loads(write_fingerprint(fp, tmp_path / "up.json").read_text(encoding="utf-8"))
    assert data["contextbenchmarkFingerprint"] == 2
    assert (data["benchmarkVersion"], data["system"]) == (None, None)
    assert data["corpus"] == {"name": "micro-app", "hash": None}


def test_missing_format_key_reads_as_1_like_the_reference(tmp_path: Path) -> None:
    fp = read_fingerprint(_write_json(tmp_path / "f.json", {"adapter": "x", "corpus": "c", "artifactHash": "h"}))
    assert fp.format == 1 and fp.query_hashes == {} and fp.env == {}


def test_tolerates_bom_string_system_and_null_fields(tmp_path: Path) -> None:
    doc = {"contextbenchmarkFingerprint": 2, "adapter": "x", "system": "my-api@v3", "corpus": {"name": "c"},
           "k": None, "artifactHash": "h", "queryHashes": None}
    path = tmp_path / "f.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(doc).encode())
    fp = read_fingerprint(path)
    assert fp.system == SystemIdentity("my-api@v3", "declared") and fp.corpus.hash is None and fp.k is None


def test_unknown_keys_are_kept_in_order(tmp_path: Path) -> None:
    doc = make().to_json() | {"zeta": 1, "ctxgauge": {"version": "9"}, "alpha": [1]}
    doc["system"]["signedBy"] = "someone"
    doc["corpus"]["files"] = 11
    fp = read_fingerprint(_write_json(tmp_path / "in.json", doc))
    assert list(fp.extra) == ["zeta", "ctxgauge", "alpha"] and fp.ctxgauge == {"version": "9"}
    out = json.loads(write_fingerprint(fp, tmp_path / "out.json").read_text(encoding="utf-8"))
    assert out == doc


def test_newer_format_is_refused_clearly(tmp_path: Path) -> None:
    path = _write_json(tmp_path / "future.json", make().to_json() | {"contextbenchmarkFingerprint": 3})
    with pytest.raises(UserError, match=r"future\.json.*format 3 is newer.*formats 1 to 2"):
        read_fingerprint(path)


@pytest.mark.parametrize(("change", "message"), [
    ({"contextbenchmarkFingerprint": "2"}, "'contextbenchmarkFingerprint' must be an integer"),
    ({"contextbenchmarkFingerprint": True}, "'contextbenchmarkFingerprint' must be an integer"),
    ({"contextbenchmarkFingerprint": 0}, "'contextbenchmarkFingerprint' must be 1 or 2, got 0"),
    ({"adapter": None}, "'adapter' must be a non-empty string"),
    ({"adapter": ""}, "'adapter' must be a non-empty string"),
    ({"system": ["id"]}, "'system' must be an object or null, got array"),
    ({"system": {"source": "declared"}}, "missing system.'id'"),
    ({"system": {"id": "x", "source": 3}}, "system.'source' must be a non-empty string"),
    ({"system": {"id": "x", "source": "declared", "note": 1}}, "system.'note' must be a string or null"),
    ({"corpus": 5}, "'corpus' must be an object"),
    ({"corpus": {"hash": "h"}}, "missing corpus.'name'"),
    ({"corpus": {"name": "c", "hash": 1}}, "corpus.'hash' must be a string or null"),
    ({"k": "10"}, "'k' must be a positive integer"),
    ({"k": 0}, "'k' must be a positive integer"),
    ({"env": "linux"}, "'env' must be an object"),
    ({"artifactHash": None}, "'artifactHash' must be a non-empty string"),
    ({"queryHashes": ["h"]}, "'queryHashes' must be an object"),
    ({"queryHashes": {"q": None}}, r"'queryHashes'\['q'\] must be a string"),
    ({"benchmarkVersion": 1}, "'benchmarkVersion' must be a string or null"),
])
def test_malformed_field_names_file_and_field(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    path = _write_json(tmp_path / "bad.fingerprint.json", make().to_json() | change)
    with pytest.raises(UserError, match=r"malformed fingerprint .*bad\.fingerprint\.json: " + message):
        read_fingerprint(path)


def test_missing_required_field(tmp_path: Path) -> None:
    doc = make().to_json()
    del doc["artifactHash"]
    with pytest.raises(UserError, match=r"bad\.json: missing 'artifactHash'"):
        read_fingerprint(_write_json(tmp_path / "bad.json", doc))


@pytest.mark.parametrize(("content", "message"), [
    (b"{not json", "not valid JSON"),
    (b'{"contextbenchmarkFingerprint": NaN}', "not valid JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[1, 2]", "top level must be a JSON object, got array"),
    (b'{"name": "package.json"}', "not a ContextBenchmark fingerprint"),
])
def test_malformed_file(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    with pytest.raises(UserError, match=r"broken\.json.*" + message):
        read_fingerprint(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"cannot read fingerprint .*absent\.json"):
        read_fingerprint(tmp_path / "absent.json")


def test_parse_fingerprint_names_its_source() -> None:
    with pytest.raises(UserError, match="malformed fingerprint from-suite: missing 'adapter'"):
        parse_fingerprint({"contextbenchmarkFingerprint": 2}, "from-suite")


def test_write_is_atomic_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "fp.json"
    target.write_text("old", encoding="utf-8")
    write_fingerprint(make(), target)
    assert read_fingerprint(target) == make()
    assert os.listdir(tmp_path) == ["fp.json"]  # no temporary file left behind


def test_failed_write_keeps_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "fp.json"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(TypeError):
        write_fingerprint(make(extra={"bad": {1, 2}}), target)
    assert target.read_text(encoding="utf-8") == "old" and os.listdir(tmp_path) == ["fp.json"]


@pytest.mark.parametrize("name", ["/home/alice/micro-app", "corpora/micro-app", "C:\\src\\app"])
def test_write_refuses_a_corpus_path(tmp_path: Path, name: str) -> None:
    with pytest.raises(UserError, match="base name"):
        write_fingerprint(make(corpus=CorpusRef(name, "h")), tmp_path / "fp.json")


def test_extra_may_not_shadow_reference_fields() -> None:
    with pytest.raises(ValueError, match="shadow"):
        make(extra={"artifactHash": "x"})
