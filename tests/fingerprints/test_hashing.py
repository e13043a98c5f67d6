"""query_hash against ContextBenchmark's published hashes and Node; artifact_hash_of_dir by its stated recipe."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from ctxgauge.errors import EngineError
from ctxgauge.fingerprints import EMPTY_QUERY_HASH, artifact_hash_of_dir, query_hash, read_fingerprint, sha256_file

from .conftest import BM25_LINUX, BM25_WIN, DATA, SPIDERBRAIN_WIN

# queryHashes of the published bm25 fingerprint (identical in the win32 and linux files).
BM25_PUBLISHED = {
    "where is the session expiry TTL enforced": "4c2827cd383ef404e5a94749886719dc54bc73a8a2c102f4656ebdaccce6b4f6",
    "how does login verify credentials": "9cfdb66bbed8596a8a0eff9ee8264833cf4cf808222a41a28e8a50e40206e1d4",
    "cart maximum item limit": "c65a23cc7186ea218669b1d054cfed6cd0ff191bf1b9714c818c487cc774f618",
    "how are discounts applied to the cart total": "200a029fe80d22bb9674c6118bf3c08bb490378709210b3b1bb121c616351c01",
    "payment retry logic": "2534b2364b44d28e4f9d988b50ae6bb0237ad0f798720b9aac070653149ab946",
    "refund validation flow": "d2355c28e1fcdc955fae045cbec559acb86f199bad83634e630e3d3e22fa8783",
    "product caching behavior": "13b7820575ccdabb376f1f077da2a8a4c9cbf04133f2873cdb7eee48c847a316",
    "search result ranking": "1c86a4bfadb7bdbfc2e4f8a2279cce3c648c89a16469487188f7151cd80f8d1c",
    "event bus subscription": "5c445aaa73abc916a10b529837408c596016249ed531876be6307513e0ae9d42",
    "which modules read central configuration": "7116481c6fac1fc2cd2835e9ae54737e4ed7395701ecf43d50453805c0054382",
}


def test_query_hash_of_empty_list_is_the_published_constant() -> None:
    expected = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
    assert query_hash([]) == expected == EMPTY_QUERY_HASH
    assert expected == hashlib.sha256(b"[]").hexdigest()


def test_query_hash_is_sha256_of_compact_json() -> None:
    assert query_hash(["a.ts", "b/c.ts"]) == hashlib.sha256(b'["a.ts","b/c.ts"]').hexdigest()
    assert query_hash(["é"]) == hashlib.sha256('["é"]'.encode()).hexdigest()


def test_query_hash_reproduces_the_reference_bm25_results() -> None:
    # The reference's own bm25 adapter's ranked lists (data/README.md) hash to what it published.
    results = json.loads((DATA / "bm25.micro-app.results.json").read_text(encoding="utf-8"))
    assert list(results) == list(BM25_PUBLISHED)
    assert {query: query_hash(paths) for query, paths in results.items()} == BM25_PUBLISHED


@pytest.mark.parametrize("name", [BM25_WIN, BM25_LINUX])
def test_published_bm25_files_carry_these_hashes(interop: Path, name: str) -> None:
    assert read_fingerprint(interop / name).query_hashes == BM25_PUBLISHED


def test_spiderbrain_query_hashes_are_all_the_empty_list(interop: Path) -> None:
    hashes = read_fingerprint(interop / SPIDERBRAIN_WIN).query_hashes
    assert len(hashes) == 10
    assert set(hashes.values()) == {query_hash([])}


def test_query_hash_order_matters() -> None:
    assert query_hash(["a", "b"]) != query_hash(["b", "a"])


@pytest.mark.parametrize("bad", ["src/a.ts", [1], [None]])
def test_query_hash_refuses_non_path_lists(bad: object) -> None:
    with pytest.raises(TypeError):
        query_hash(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("paths", [
    [],
    ["src/auth/login.ts"],
    ["dir with space/ü.ts", "日本/x.py", 'q"uote.ts', "back\\slash.ts", "tab\tname", "\x01ctl", "😀.md"],
])
def test_query_hash_matches_node(node, paths: list[str]) -> None:  # type: ignore[no-untyped-def]
    script = ("const h = require('crypto').createHash('sha256').update(JSON.stringify(input)).digest('hex');"
              "process.stdout.write(h);")
    assert query_hash(paths) == node(script, paths)


def _tree(root: Path, files: dict[str, bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def _recipe(files: dict[str, bytes]) -> str:
    """The documented construction, written out independently: sorted byte paths, `path NUL sha LF` lines."""
    lines = b"".join(
        rel.encode() + b"\0" + hashlib.sha256(files[rel]).hexdigest().encode() + b"\n"
        for rel in sorted(files, key=lambda name: name.encode())
    )
    return hashlib.sha256(lines).hexdigest()


FILES = {
    "index.json": b'{"a":1}',
    "a/b": b"nested",
    "a.b": b"dot",  # '.' (0x2e) sorts before '/' (0x2f): a.b precedes a/b, unlike a per-directory walk
    "B": b"upper",  # 'B' (0x42) before 'a' (0x61): byte order, not locale order
    "_x": b"underscore",
    "dir/é.bin": b"\x00\x01binary\x00",
}


def test_artifact_dir_hash_follows_the_documented_recipe(tmp_path: Path) -> None:
    assert artifact_hash_of_dir(_tree(tmp_path, FILES)) == _recipe(FILES)


def test_artifact_dir_hash_ignores_empty_dirs_and_creation_order(tmp_path: Path) -> None:
    one = _tree(tmp_path / "one", FILES)
    two = _tree(tmp_path / "two", dict(reversed(list(FILES.items()))))
    (two / "empty" / "deeper").mkdir(parents=True)
    assert artifact_hash_of_dir(one) == artifact_hash_of_dir(two)


def test_artifact_dir_hash_sees_content_and_names(tmp_path: Path) -> None:
    base = artifact_hash_of_dir(_tree(tmp_path / "base", FILES))
    assert artifact_hash_of_dir(_tree(tmp_path / "content", {**FILES, "a/b": b"nested!"})) != base
    renamed = {("a/c" if k == "a/b" else k): v for k, v in FILES.items()}
    assert artifact_hash_of_dir(_tree(tmp_path / "renamed", renamed)) != base


def test_empty_artifact_dir_hashes_to_sha256_of_nothing(tmp_path: Path) -> None:
    assert artifact_hash_of_dir(tmp_path) == hashlib.sha256(b"").hexdigest()


def test_declared_artifact_file_is_hashed_alone(tmp_path: Path) -> None:
    _tree(tmp_path, {"index.json": b'{"a":1}', "build.log": b"12:00:01 built"})
    expected = hashlib.sha256(b'{"a":1}').hexdigest()
    assert artifact_hash_of_dir(tmp_path, "index.json") == expected == sha256_file(tmp_path / "index.json")
    (tmp_path / "build.log").write_bytes(b"12:00:02 built")  # a sidecar's change does not move the hash
    assert artifact_hash_of_dir(tmp_path, "index.json") == expected


def test_declared_artifact_file_in_a_subdirectory(tmp_path: Path) -> None:
    _tree(tmp_path, {"idx/main.bin": b"x"})
    assert artifact_hash_of_dir(tmp_path, "idx/main.bin") == hashlib.sha256(b"x").hexdigest()


@pytest.mark.parametrize("bad", ["missing.json", "../outside.json", "/etc/passwd", ""])
def test_bad_artifact_file_is_an_engine_error(tmp_path: Path, bad: str) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "outside.json").write_bytes(b"x")
    with pytest.raises(EngineError):
        artifact_hash_of_dir(tmp_path / "out", bad)


def test_missing_artifact_dir_is_an_engine_error(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="does not exist"):
        artifact_hash_of_dir(tmp_path / "nope")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
@pytest.mark.parametrize("target_is_dir", [False, True])
def test_symlink_in_artifact_dir_is_refused(tmp_path: Path, target_is_dir: bool) -> None:
    out = _tree(tmp_path / "out", {"index.json": b"{}"})
    target = tmp_path / ("elsewhere" if target_is_dir else "elsewhere.json")
    target.mkdir() if target_is_dir else target.write_bytes(b"{}")
    (out / "link").symlink_to(target, target_is_directory=target_is_dir)
    with pytest.raises(EngineError, match="symbolic link: link"):
        artifact_hash_of_dir(out)
