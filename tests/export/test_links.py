"""`export` never follows a symbolic link inside a run directory: nothing outside the runs is published."""

from __future__ import annotations

import os

import pytest

from ctxgauge._io import InputError
from ctxgauge.export import IntegrityError, export_runs
from ctxgauge.records import LOCK_FILE


@pytest.fixture
def store(tmp_path, factory):
    root = tmp_path / "runs"
    factory.replay_run(root, "replay-a", [1, 2, None], [2, 2, 1])
    factory.unfinished_run(root, "replay-crashed")
    secret = tmp_path / "outside" / "system.conf"
    secret.parent.mkdir()
    secret.write_text("root-only contents\n")
    return root, secret


def _published(out) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file())


def test_link_added_to_a_finished_run_is_left_out(store, tmp_path):
    root, secret = store
    os.symlink(secret, root / "replay-a" / "extra.txt")
    os.symlink(secret.parent, root / "replay-a" / "linked-dir")
    out = tmp_path / "pub"
    result = export_runs(root, out, environ={})
    assert b"root-only contents" not in _published(out)
    assert not (out / "runs/replay-a/extra.txt").exists()
    assert not any(p.is_symlink() for p in out.rglob("*"))
    assert result.files > 0


def test_link_in_an_unfinished_run_is_never_hashed_nor_copied(store, tmp_path):
    root, secret = store
    os.symlink(secret, root / "replay-crashed" / "units-extra.jsonl")
    os.symlink(secret.parent, root / "replay-crashed" / "sub")
    out = tmp_path / "pub"
    export_runs(root, out, environ={})
    assert b"root-only contents" not in _published(out)


def test_recorded_file_swapped_for_a_link_is_refused(store, tmp_path):
    root, secret = store
    run = root / "replay-a"
    victim = next(p for p in sorted(run.iterdir()) if p.is_file() and p.name != "run.json" and p.name != LOCK_FILE)
    secret.write_bytes(victim.read_bytes())  # same bytes: the hash check alone would pass it
    victim.unlink()
    os.symlink(secret, victim)
    # Refused by whichever reader meets the link first: the integrity check, or units.jsonl's own reader.
    with pytest.raises((IntegrityError, InputError), match="symbolic link"):
        export_runs(root, tmp_path / "pub", environ={})
    assert not (tmp_path / "pub").exists()


def test_run_json_as_a_link_is_refused(store, tmp_path):
    root, secret = store
    run = root / "replay-a"
    secret.write_bytes((run / "run.json").read_bytes())
    (run / "run.json").unlink()
    os.symlink(secret, run / "run.json")
    with pytest.raises(IntegrityError, match="symbolic link"):
        export_runs(root, tmp_path / "pub", environ={})
