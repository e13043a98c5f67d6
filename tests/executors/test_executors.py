"""Every executor hands parts back in item order, names the worker that ran each unit, and spreads units
over real worker processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ctxgauge.errors import UserError
from ctxgauge.executors import InlineExecutor, PoolExecutor, open_executor, parse_executor
from executor_work import boom, mark, parts  # type: ignore[import-not-found]

pytest.importorskip("distributed")

# Earlier items sleep longer, so on a pool they finish last: the order handed back must not follow.
ITEMS = [(n, 0.3 - 0.05 * n) for n in range(6)]
EXPECTED = [(n, j) for n in range(6) for j in range(3)]


@pytest.mark.parametrize("spec, kind, arg", [("local", "local", 1), ("local:3", "local", 3),
                                             ("dask-local", "dask-local", 2), ("dask-local:4", "dask-local", 4),
                                             ("dask://10.0.0.5:8786", "dask", "10.0.0.5:8786")])
def test_specs_parse(spec, kind, arg):
    assert parse_executor(spec) == (kind, arg)


@pytest.mark.parametrize("spec", ["ray", "local:0", "local:x", "dask://host", "dask-local:-1", ""])
def test_bad_specs_say_what_is_accepted(spec):
    with pytest.raises(UserError, match="local|at least 1"):
        parse_executor(spec)


def test_inline_runs_here_and_hands_parts_back_as_made():
    with open_executor("local") as ex:
        assert isinstance(ex, InlineExecutor)
        got = list(ex.map(parts, [(n, 0.0) for n in range(3)]))
    assert [(p.value[0], p.value[1]) for p in got] == [(n, j) for n in range(3) for j in range(3)]
    assert {p.value[2] for p in got} == {os.getpid()} and {p.worker for p in got} == {"local/main"}


def test_a_pool_keeps_item_order_and_runs_in_other_processes():
    with open_executor("local:2") as ex:
        assert isinstance(ex, PoolExecutor) and ex.workers == 2
        got = list(ex.map(parts, ITEMS))
    assert [(p.value[0], p.value[1]) for p in got] == EXPECTED
    pids = {p.value[2] for p in got}
    assert os.getpid() not in pids and len(pids) == 2
    assert {p.worker for p in got} == {f"local/pid{pid}" for pid in pids}


def test_a_failed_unit_raises_at_its_turn():
    with open_executor("local") as ex:
        it = ex.map(boom, [0, 1, 2])
        assert next(it).value == 0
        with pytest.raises(ValueError, match="unit 1 failed"):
            next(it)


def test_dask_local_cluster_keeps_item_order_and_uses_both_workers():
    with open_executor("dask-local:2") as ex:
        assert ex.workers == 2
        got = list(ex.map(parts, ITEMS))
    assert [(p.value[0], p.value[1]) for p in got] == EXPECTED
    workers = {p.worker for p in got}
    assert len(workers) == 2 and all(w.startswith("dask/tcp://") for w in workers)
    # Real worker processes, not threads of this one.
    assert os.getpid() not in {p.value[2] for p in got} and len({p.value[2] for p in got}) == 2


def test_no_scheduler_at_the_address_is_a_user_error(monkeypatch):
    monkeypatch.setattr("ctxgauge.executors._dask.CONNECT_TIMEOUT", "1s")
    with pytest.raises(UserError, match="no Dask scheduler answers"):
        open_executor("dask://127.0.0.1:9")


@pytest.mark.parametrize("spec", ["local:2", "dask-local:2"])
def test_a_pool_starts_the_units_when_map_is_called_not_when_parts_are_read(spec, tmp_path: Path):
    # The determinism suite hands its rebuilds over and builds the base while they run: map must not wait
    # for the first read of its parts to send the units to the workers.
    marks = [tmp_path / f"unit-{n}" for n in range(2)]
    with open_executor(spec) as ex:
        started = ex.map(mark, [str(m) for m in marks])
        deadline = time.monotonic() + 60
        while not all(m.exists() for m in marks) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(m.exists() for m in marks), "the units did not run before their parts were read"
        assert [p.value for p in started] == [str(m) for m in marks]


def test_this_process_runs_a_unit_only_when_its_parts_are_read(tmp_path: Path):
    marks = [tmp_path / f"unit-{n}" for n in range(2)]
    with open_executor("local") as ex:
        started = ex.map(mark, [str(m) for m in marks])
        assert not any(m.exists() for m in marks)
        assert next(started).value == str(marks[0]) and not marks[1].exists()
