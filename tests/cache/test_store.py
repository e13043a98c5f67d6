"""The work cache's store: entries round-trip, torn entries read as misses, concurrent writers, pruning,
stage keys, and where the cache lives (environment, overrides, off)."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from ctxgauge import cache
from ctxgauge.cache import WorkCache, parse_size, stage_identity
from ctxgauge.cache._store import FORMAT_DIR, MAGIC
from ctxgauge.errors import UserError

BLOB = "0123456789abcdef0123456789abcdef01234567"


def test_put_then_get_round_trips_and_misses_are_none(tmp_path):
    stage = WorkCache(tmp_path).stage("t", {"v": 1})
    assert stage.get(BLOB) is None
    stage.put(BLOB, b"payload \x00 bytes")
    assert stage.get(BLOB) == b"payload \x00 bytes"
    # a new object over the same directory (another process) reads the same entry
    assert WorkCache(tmp_path).stage("t", {"v": 1}).get(BLOB) == b"payload \x00 bytes"


def test_another_stage_identity_never_sees_the_entry(tmp_path):
    store = WorkCache(tmp_path)
    store.stage("t", {"v": 1}).put(BLOB, b"old")
    assert store.stage("t", {"v": 2}).get(BLOB) is None
    assert store.stage("u", {"v": 1}).get(BLOB) is None


def test_a_torn_entry_is_a_miss_and_is_removed(tmp_path):
    stage = WorkCache(tmp_path).stage("t", {})
    stage.put(BLOB, b"x" * 1000)
    path = stage._path(BLOB)
    data = path.read_bytes()
    path.write_bytes(data[:-10])  # cut short, as a full disk would leave it
    assert stage.get(BLOB) is None
    assert not path.exists()
    stage.put(BLOB, b"y" * 10)
    path.write_bytes(b"junk")  # not even a header
    assert stage.get(BLOB) is None


def test_names_that_are_not_hex_cannot_escape_the_stage(tmp_path):
    stage = WorkCache(tmp_path / "c").stage("t", {})
    stage.put("../../../escape", b"z")
    assert stage.get("../../../escape") == b"z"
    assert not any(p.name == "escape" for p in tmp_path.rglob("*"))
    assert stage._path("../../../escape").resolve().is_relative_to((tmp_path / "c").resolve())


def _writer(root: str, worker: int, rounds: int) -> None:
    stage = WorkCache(Path(root)).stage("race", {})
    for r in range(rounds):
        for key in range(8):
            # every worker writes the same keys with the same (large) payload, as engines sharing work do
            stage.put(f"{key:040x}", bytes([key]) * 200_000)
            got = stage.get(f"{key:040x}")
            assert got is None or got == bytes([key]) * 200_000, "torn entry read"


def test_several_processes_writing_at_once_never_read_a_torn_entry(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 5)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    stage = WorkCache(tmp_path).stage("race", {})
    for key in range(8):
        assert stage.get(f"{key:040x}") == bytes([key]) * 200_000
    leftovers = [p for p in (tmp_path / FORMAT_DIR).rglob(".*.tmp")]
    assert leftovers == []


def test_prune_removes_least_recently_used_first(tmp_path):
    store = WorkCache(tmp_path, max_bytes=10**9)
    stage = store.stage("t", {})
    for i in range(5):
        stage.put(f"{i:040x}", b"a" * 1000)
        os.utime(stage._path(f"{i:040x}"), ns=(10**18 + i, 10**18 + i))
    os.utime(stage._path(f"{0:040x}"), ns=(2 * 10**18, 2 * 10**18))  # 0 was used last
    entry = 1000 + len(MAGIC) + 32
    removed, freed = store.prune(3 * entry)
    assert (removed, freed) == (2, 2 * entry)
    present = [i for i in range(5) if stage._path(f"{i:040x}").exists()]
    assert present == [0, 3, 4]
    [usage] = store.usage()
    assert (usage.name, usage.entries, usage.bytes) == ("t", 3, 3 * entry)


def test_the_size_bound_holds_while_writing(tmp_path):
    store = WorkCache(tmp_path, max_bytes=100_000)
    stage = store.stage("t", {})
    for i in range(100):
        stage.put(f"{i:040x}", b"b" * 5_000)
    total = sum(u.bytes for u in store.usage())
    assert total <= 100_000
    assert stage.get(f"{99:040x}") is not None  # the newest survive


def test_a_read_only_cache_is_only_a_miss(tmp_path):
    root = tmp_path / "ro"
    root.mkdir()
    root.chmod(0o500)
    try:
        stage = WorkCache(root).stage("t", {})
        stage.put(BLOB, b"x")  # no error: the work is recomputed next time
        if os.geteuid() != 0:
            assert stage.get(BLOB) is None
    finally:
        root.chmod(0o700)


def test_stage_identity_follows_source_config_and_versions():
    a = stage_identity(["ctxgauge.engines._tokens"], {"x": 1}, ["numpy"])
    assert a == stage_identity(["ctxgauge.engines._tokens"], {"x": 1}, ["numpy"])
    assert a != stage_identity(["ctxgauge.engines._tokens"], {"x": 2}, ["numpy"])
    assert a != stage_identity(["ctxgauge.engines._chunks"], {"x": 1}, ["numpy"])
    assert a["libraries"]["numpy"]


@pytest.mark.parametrize("text, value", [("2G", 2 << 30), ("500M", 500 << 20), ("64k", 64 << 10), ("1000", 1000),
                                         ("1.5GiB", 3 << 29)])
def test_sizes_parse(text, value):
    assert parse_size(text) == value


def test_a_bad_size_is_a_user_error():
    with pytest.raises(UserError, match="not a size"):
        parse_size("lots")


def test_where_the_cache_lives(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXGAUGE_CACHE", str(tmp_path / "here"))
    assert cache.current().root == (tmp_path / "here").absolute()
    with cache.disabled():
        assert cache.current() is None
        with cache.using(WorkCache(tmp_path / "other")) as inner:
            assert cache.current() is inner
        assert cache.current() is None
    assert cache.current().root == (tmp_path / "here").absolute()
    for off in ("off", "0", "none", "False"):
        monkeypatch.setenv("CTXGAUGE_CACHE", off)
        assert cache.current() is None
    monkeypatch.delenv("CTXGAUGE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.configured_dir() == cache.default_dir()
    assert cache.default_dir().parts[-2:] == ("ctxgauge", "work")


def test_the_test_session_never_uses_the_users_cache():
    # conftest points CTXGAUGE_CACHE at a session directory before anything runs
    assert os.environ["CTXGAUGE_CACHE"] != str(cache.default_dir())
    assert "ctxgauge-test-cache-" in os.environ["CTXGAUGE_CACHE"]
    assert not any(os.scandir(os.environ["CTXGAUGE_CACHE"]))  # and a fresh one for each test


def test_sweep_removes_only_temporaries_a_killed_writer_left_long_ago(tmp_path):
    import time

    from ctxgauge.cache._store import STALE_TEMP_SECONDS

    store = WorkCache(tmp_path, max_bytes=10**9)
    stage = store.stage("t", {})
    stage.put(f"{1:040x}", b"kept")
    shard = stage._path(f"{1:040x}").parent
    old, fresh = shard / f".{'2' * 38}.123.ab.tmp", shard / f".{'3' * 38}.456.cd.tmp"
    meta_tmp = stage._path(f"{1:040x}").parent.parent / ".stage.json.9.ef.tmp"
    for p in (old, fresh, meta_tmp):
        p.write_bytes(b"x" * 100)
    past = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(old, (past, past))
    os.utime(meta_tmp, (past, past))
    assert store.sweep() == (2, 200)
    assert not old.exists() and not meta_tmp.exists()
    assert fresh.exists(), "a temporary file a live writer may still rename is left alone"
    assert stage.get(f"{1:040x}") == b"kept"
    assert store.sweep() == (0, 0)
