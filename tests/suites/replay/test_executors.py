"""A replay's records are the same whatever runs it: sliced or whole, this process, a pool, or a real Dask
LocalCluster of two worker processes (both of which must have run units)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgauge.records import comparable_unit, read_units
from ctxgauge.suites.replay import ReplayConfig, replay
from ctxgauge.suites.replay._run import auto_slice
from ctxgauge.suites._retrieval import slices


def _replay(tmp_path: Path, repo: Path, name: str, **kw) -> list[dict]:
    config = ReplayConfig(repo=repo, engine="bm25", vs="grep", commits=24, out=tmp_path / name, **kw)
    return [u.to_json() for u in read_units(replay(config).run_dir)]


@pytest.fixture(scope="module")
def whole(sample_repo, tmp_path_factory) -> list[dict]:
    """The unsliced replay in this process: the reference every other way of running must equal."""
    return _replay(tmp_path_factory.mktemp("whole"), sample_repo, "run")


def test_the_reference_updates_indexes_and_scores_commits(whole):
    ok = [u for u in whole if u["status"] == "ok"]
    assert len(ok) == 24 and all(u["workers"] == ["local/main", "local/main"] for u in ok)
    assert any(u["figures"]["recall@10"] for u in ok) and all("vs" in u for u in ok)


@pytest.mark.parametrize("size", [1, 5, 11])
def test_a_sliced_replay_equals_the_unsliced_one_unit_for_unit(tmp_path, sample_repo, whole, size):
    sliced = _replay(tmp_path, sample_repo, f"slice-{size}", slice_size=size)
    assert [comparable_unit(u) for u in sliced] == [comparable_unit(u) for u in whole]


def test_slices_cut_consecutive_runs_in_order():
    assert slices(list("abcdefg"), 3) == [tuple("abc"), tuple("def"), ("g",)]
    assert slices(list("abc"), None) == [tuple("abc")] and slices([], 2) == []
    assert auto_slice(100, 1) is None and auto_slice(100, 2) == 25 and auto_slice(3, 4) == 1


def test_a_pool_of_two_processes_equals_this_process(tmp_path, sample_repo, whole):
    units = _replay(tmp_path, sample_repo, "pool", executor="local:2")
    assert [comparable_unit(u) for u in units] == [comparable_unit(u) for u in whole]
    workers = {w for u in units for w in u.get("workers", [])}
    assert len(workers) == 2 and "local/main" not in workers


def test_a_dask_local_cluster_of_two_workers_equals_this_process(tmp_path, sample_repo, whole):
    pytest.importorskip("distributed")
    units = _replay(tmp_path, sample_repo, "dask", executor="dask-local:2")
    assert [comparable_unit(u) for u in units] == [comparable_unit(u) for u in whole]
    workers = {w for u in units for w in u.get("workers", [])}
    assert len(workers) == 2 and all(w.startswith("dask/tcp://") for w in workers)
    # Both engines' units of one slice may run on different workers; every commit names both.
    assert all(len(u["workers"]) == 2 for u in units if u["status"] == "ok")
