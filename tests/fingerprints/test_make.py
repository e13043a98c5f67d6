"""make_fingerprint, env_info (checked against Node's own os module) and the corpus base name rule."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

import ctxgauge
from ctxgauge.fingerprints import (
    BENCHMARK_VERSION,
    EMPTY_QUERY_HASH,
    CorpusRef,
    SystemIdentity,
    corpus_base_name,
    env_info,
    make_fingerprint,
    query_hash,
    read_fingerprint,
)

from .conftest import BM25_WIN


def _make(**over: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = dict(
        adapter="bm25", system={"id": "sha256:abc", "source": "content-hash"}, corpus_name="micro-app",
        corpus_hash="c0ffee", k=10, artifact_hash="art", query_results={"q1": ["a.ts", "b.ts"], "q2": []},
        extra={"seed": 0},
    )
    args.update(over)
    return make_fingerprint(**args)  # type: ignore[arg-type]


def test_fields() -> None:
    fp = _make()
    assert (fp.format, fp.benchmark_version, fp.adapter, fp.k, fp.artifact_hash) == (2, "0.1.0", "bm25", 10, "art")
    assert fp.system == SystemIdentity("sha256:abc", "content-hash")
    assert fp.corpus == CorpusRef("micro-app", "c0ffee")
    assert fp.query_hashes == {"q1": query_hash(["a.ts", "b.ts"]), "q2": EMPTY_QUERY_HASH}
    assert fp.env == env_info()


def test_namespace_holds_our_version_python_and_extra() -> None:
    fp = _make()
    assert list(fp.extra) == ["ctxgauge"]
    assert fp.ctxgauge == {"version": ctxgauge.__version__, "python": platform.python_version(), "seed": 0}


def test_benchmark_version_is_the_protocol_version_the_reference_files_carry(interop: Path) -> None:
    assert read_fingerprint(interop / BM25_WIN).benchmark_version == BENCHMARK_VERSION


def test_undeclared_system_is_written_as_null() -> None:
    fp = _make(system=None)
    assert fp.system is None and fp.to_json()["system"] is None


def test_system_identity_object_and_note() -> None:
    fp = _make(system=SystemIdentity("m@1", "declared", note="pinned by name"))
    assert fp.to_json()["system"] == {"id": "m@1", "source": "declared", "note": "pinned by name"}


@pytest.mark.parametrize(("over", "message"), [
    ({"system": {"id": "x", "source": "guessed"}}, "source must be one of content-hash, git-sha, declared"),
    ({"system": {"id": "", "source": "declared"}}, "non-empty string id"),
    ({"system": {"id": "x", "source": "declared", "version": 2}}, "unknown keys: version"),
    ({"k": 0}, "k must be a positive integer"),
    ({"k": True}, "k must be a positive integer"),
    ({"adapter": ""}, "adapter name"),
    ({"extra": {"version": "x"}}, "may not replace ctxgauge's own fields: version"),
    ({"corpus_name": "/"}, "no base name"),
])
def test_invalid_input(over: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _make(**over)


@pytest.mark.parametrize(("given", "expected"), [
    ("micro-app", "micro-app"),
    ("/home/alice/code/micro-app", "micro-app"),
    ("corpora/micro-app/", "micro-app"),
    ("C:\\Users\\alice\\micro-app", "micro-app"),
])
def test_corpus_name_is_reduced_to_its_base_name(given: str, expected: str) -> None:
    assert corpus_base_name(given) == expected
    assert _make(corpus_name=given).corpus.name == expected


def test_env_info_shape() -> None:
    env = env_info()
    assert list(env) == ["os", "arch"]
    assert env["os"].split(" ")[0] in {"linux", "win32", "darwin", "freebsd", "openbsd", "netbsd", "sunos", "aix"}


def test_env_info_matches_node(node) -> None:  # type: ignore[no-untyped-def]
    # What the reference's runner writes: `${os.platform()} ${os.release()}` and os.arch().
    script = ("const os = require('os');"
              "process.stdout.write(JSON.stringify({os: `${os.platform()} ${os.release()}`, arch: os.arch()}));")
    env = env_info()
    assert node(script) == f'{{"os":"{env["os"]}","arch":"{env["arch"]}"}}'
