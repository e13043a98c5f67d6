"""The work cache's store: entries round-trip, damaged entries and databases read as misses, concurrent
writers, pruning, the older format swept, stage keys, and where the cache lives (environment, overrides,
off)."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from pathlib import Path

import pytest

from ctxgauge import cache
from ctxgauge.cache import WorkCache, parse_size, stage_identity
from ctxgauge.cache._store import DB_FILE, FORMAT_DIR
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


def _entries(root: Path) -> list[tuple]:
    con = sqlite3.connect(root / FORMAT_DIR / DB_FILE)
    try:
        return con.execute("SELECT id, size, used FROM entries ORDER BY id").fetchall()
    finally:
        con.close()


def test_a_damaged_entry_is_a_miss_and_is_removed(tmp_path):
    store = WorkCache(tmp_path)
    stage = store.stage("t", {})
    stage.put(BLOB, b"x" * 1000)
    store.close()
    con = sqlite3.connect(tmp_path / FORMAT_DIR / DB_FILE)
    con.execute("UPDATE entries SET payload = ? WHERE id = ?", (b"x" * 990, BLOB))  # cut short
    con.commit()
    con.close()
    assert stage.get(BLOB) is None
    assert _entries(tmp_path) == []
    stage.put(BLOB, b"y" * 10)
    assert stage.get(BLOB) == b"y" * 10


def test_a_database_that_is_not_one_is_begun_again(tmp_path):
    store = WorkCache(tmp_path)
    stage = store.stage("t", {})
    stage.put(BLOB, b"kept?")
    store.close()
    (tmp_path / FORMAT_DIR / DB_FILE).write_bytes(b"junk, not a database" * 100)
    fresh = WorkCache(tmp_path)  # another process: it meets the junk first
    assert fresh.stage("t", {}).get(BLOB) is None  # the work is gone, never misread
    fresh.stage("t", {}).put(BLOB, b"again")
    assert WorkCache(tmp_path).stage("t", {}).get(BLOB) == b"again"


def test_a_database_broken_while_open_is_dropped_and_begun_again(tmp_path):
    store = WorkCache(tmp_path)
    stage = store.stage("t", {})
    stage.put(BLOB, b"x")

    class Broken:  # what a connection does once the file under it is damaged
        def execute(self, *args):
            raise sqlite3.DatabaseError("database disk image is malformed")

        def close(self):
            pass

    store._con = Broken()
    assert stage.get(BLOB) is None  # a miss: no error, no hang
    assert not (tmp_path / FORMAT_DIR / DB_FILE).exists()
    stage.put(BLOB, b"again")
    assert stage.get(BLOB) == b"again"
    assert [(u.name, u.entries) for u in store.usage()] == [("t", 1)]


def test_reading_an_empty_cache_creates_nothing(tmp_path):
    store = WorkCache(tmp_path / "c")
    assert store.stage("t", {}).get(BLOB) is None
    assert store.usage() == [] and store.prune(0) == (0, 0)
    assert not (tmp_path / "c").exists()


def test_any_content_id_is_only_a_key(tmp_path):
    stage = WorkCache(tmp_path / "c").stage("t", {})
    stage.put("../../../escape", b"z")
    assert stage.get("../../../escape") == b"z"
    assert not any(p.name == "escape" for p in tmp_path.rglob("*"))
    files = {p.name for p in (tmp_path / "c").rglob("*") if p.is_file()}
    assert files <= {DB_FILE, f"{DB_FILE}-wal", f"{DB_FILE}-shm"} and DB_FILE in files


def _writer(root: str, worker: int, rounds: int) -> None:
    stage = WorkCache(Path(root)).stage("race", {})
    for r in range(rounds):
        for key in range(8):
            # every worker writes the same keys with the same (large) payload, as engines sharing work do
            stage.put(f"{key:040x}", bytes([key]) * 200_000)
            got = stage.get(f"{key:040x}")
            assert got is None or got == bytes([key]) * 200_000, "torn entry read"


def _run_writers(target, tmp_path: Path, arg: int) -> list:
    """Four spawned processes running `target(root, worker, arg)` at once; their exit codes."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=target, args=(str(tmp_path), w, arg)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    return [p.exitcode for p in procs]


def test_several_processes_writing_at_once_never_read_a_torn_entry(tmp_path):
    assert _run_writers(_writer, tmp_path, 5) == [0, 0, 0, 0]
    stage = WorkCache(tmp_path).stage("race", {})
    for key in range(8):
        assert stage.get(f"{key:040x}") == bytes([key]) * 200_000
    assert len(_entries(tmp_path)) == 8


def _distinct_writer(root: str, worker: int, n: int) -> None:
    stage = WorkCache(Path(root)).stage("many", {})
    for i in range(n):
        stage.put(f"{worker:020x}{i:020x}", bytes([worker]) * (1000 + i))


def test_several_processes_writing_different_entries_lose_none(tmp_path):
    assert _run_writers(_distinct_writer, tmp_path, 200) == [0, 0, 0, 0]
    stage = WorkCache(tmp_path).stage("many", {})
    assert all(stage.get(f"{w:020x}{i:020x}") == bytes([w]) * (1000 + i) for w in range(4) for i in range(200))
    [usage] = WorkCache(tmp_path).usage()
    assert usage.entries == 800


def test_prune_removes_least_recently_used_first(tmp_path):
    store = WorkCache(tmp_path, max_bytes=10**9)
    stage = store.stage("t", {})
    for i in range(5):
        stage.put(f"{i:040x}", b"a" * 1000)
    assert stage.get(f"{0:040x}") is not None  # 0 is now the most recently used
    removed, freed = store.prune(3 * 1000)
    assert (removed, freed) == (2, 2 * 1000)
    assert [i for i in range(5) if stage.get(f"{i:040x}") is not None] == [0, 3, 4]
    [usage] = store.usage()
    assert (usage.name, usage.entries, usage.bytes) == ("t", 3, 3 * 1000)


def test_a_use_seen_by_another_process_counts_once_recorded(tmp_path):
    writer = WorkCache(tmp_path, max_bytes=10**9)
    for i in range(3):
        writer.stage("t", {}).put(f"{i:040x}", b"a" * 100)
    writer.close()
    reader = WorkCache(tmp_path, max_bytes=10**9)  # another process reads 0 and ends
    assert reader.stage("t", {}).get(f"{0:040x}") == b"a" * 100
    reader.close()
    used = {cid: u for cid, _, u in _entries(tmp_path)}
    assert used[f"{0:040x}"] > used[f"{2:040x}"] > used[f"{1:040x}"]
    assert WorkCache(tmp_path).prune(100) == (2, 200)
    assert [cid for cid, *_ in _entries(tmp_path)] == [f"{0:040x}"]


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
    a = stage_identity(["ctxgauge.engines._text.tokens"], {"x": 1}, ["numpy"])
    assert a == stage_identity(["ctxgauge.engines._text.tokens"], {"x": 1}, ["numpy"])
    assert a != stage_identity(["ctxgauge.engines._text.tokens"], {"x": 2}, ["numpy"])
    assert a != stage_identity(["ctxgauge.engines.minilm._chunks"], {"x": 1}, ["numpy"])
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


def test_sweep_removes_the_older_format_and_nothing_of_this_one(tmp_path):
    old = tmp_path / "v1" / ("ab" * 32) / "01"
    old.mkdir(parents=True)
    (old / ("2" * 38)).write_bytes(b"x" * 100)  # a v1 entry
    (old / f".{'3' * 38}.456.cd.tmp").write_bytes(b"y" * 50)  # a killed v1 writer's temporary
    store = WorkCache(tmp_path, max_bytes=10**9)
    stage = store.stage("t", {})
    stage.put(f"{1:040x}", b"kept")
    assert store.sweep() == (2, 150)
    assert not (tmp_path / "v1").exists()
    assert stage.get(f"{1:040x}") == b"kept"
    assert store.sweep() == (0, 0)
