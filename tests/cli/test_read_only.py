"""A command that reads a folder never writes into it: each read-only command's input folder is the same
before and after, file by file (paths, sizes, modification times, SHA-256; the tests run as root, so a
read-only permission would prove nothing). `runs list` on an export wrote `.ctxgauge-store.sqlite` into it,
and the next `export --check` then failed ("in pub but not in a fresh export")."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.fingerprints import CorpusRef, Fingerprint, SystemIdentity, write_fingerprint
from ctxgauge.records import STORE_FILE


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root`, hidden ones included: (kind, size, mtime_ns, SHA-256) by relative path."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = p.lstat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else ""
            out[p.relative_to(root).as_posix()] = ("dir" if p.is_dir() else "file", st.st_size if p.is_file() else 0,
                                                   st.st_mtime_ns, digest)
    st = root.stat()
    out["."] = ("dir", 0, st.st_mtime_ns, "")
    return out


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def published(tmp_path, factory) -> tuple[Path, Path]:
    runs = tmp_path / "runs"
    factory.replay_run(runs, "replay-a", [1, 2, None], [2, 2, 1])
    factory.determinism_run(runs, "det-a", {"bm25": {"level": 3}})
    pub = tmp_path / "pub"
    r = cli("export", str(runs), "--out", str(pub))
    assert r.returncode == 0, r.stderr
    return runs, pub


def test_reading_commands_leave_their_folders_as_they_were(published):
    runs, pub = published
    commands = [
        ("runs", "list", str(runs)), ("runs", "list", str(pub)), ("runs", "list", str(runs), "--json"),
        ("runs", "show", "replay-a", "--runs-dir", str(runs)), ("runs", "show", str(runs / "det-a")),
        ("report", str(runs)), ("report", str(pub), "--json"),
        ("export", str(runs), "--out", str(pub), "--check"),
    ]
    for args in commands:
        before = snapshot(runs), snapshot(pub)
        r = cli(*args)
        assert r.returncode == 0, (args, r.stderr)
        assert (snapshot(runs), snapshot(pub)) == before, args
    # The listing of the export did not spoil it: the check still holds, and exporting again is not refused.
    assert cli("export", str(runs), "--out", str(pub), "--check").returncode == 0
    assert cli("export", str(runs), "--out", str(pub)).returncode == 0


def test_with_the_cache_off_the_index_is_held_in_memory(published, tmp_path):
    runs, _ = published
    before = snapshot(runs)
    r = subprocess.run([sys.executable, "-m", "ctxgauge", "--no-cache", "runs", "list", str(runs), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["store"] is None and len(json.loads(r.stdout)["runs"]) == 2
    assert snapshot(runs) == before


def test_a_store_an_earlier_version_left_is_ignored_by_export_and_check(published):
    runs, pub = published
    (runs / STORE_FILE).write_bytes(b"SQLite format 3\0 an old index")
    (pub / STORE_FILE).write_bytes(b"SQLite format 3\0 an old index")
    r = cli("export", str(runs), "--out", str(pub), "--check")
    assert r.returncode == 0, r.stderr + r.stdout
    r = cli("export", str(runs), "--out", str(pub))  # not "holds files the export did not write"
    assert r.returncode == 0, r.stderr
    assert not (pub / STORE_FILE).exists()  # an export of the runs never carries the index


def test_compare_leaves_the_fingerprints_folder_as_it_was(tmp_path):
    folder = tmp_path / "fps"
    fp = Fingerprint(format=2, benchmark_version="0.1.0", adapter="bm25",
                     system=SystemIdentity("sha256:abc", "content-hash"), corpus=CorpusRef("shelf", "c0ffee"), k=10,
                     env={"os": "linux 6.8", "arch": "x64"}, artifact_hash="art1", query_hashes={"q1": "aaa"})
    a = write_fingerprint(fp, folder / "a.fingerprint.json")
    other = Fingerprint(**{**fp.__dict__, "env": {"os": "darwin 23.4.0", "arch": "arm64"}})
    b = write_fingerprint(other, folder / "b.fingerprint.json")
    before = snapshot(folder)
    r = cli("compare", str(a), str(b))
    assert r.returncode == 0, r.stderr
    assert snapshot(folder) == before


# Issue 39, item 9: the same snapshot for the commands that read a SOURCE or a battery folder.
def _source(repo_builder) -> Path:
    rb = repo_builder("src")
    rb.commit("add loans", {"lib/loans.py": "def overdue_fee():\n    return 1\n", "lib/members.py": "class Member: pass\n"})
    rb.commit("fix fee rounding", {"lib/loans.py": "def overdue_fee():\n    return round(1.5)\n"})
    return rb.path


@pytest.mark.parametrize("kind", ["git", "plain"])
def test_query_and_determinism_leave_their_source_as_it_was(kind, repo_builder, tmp_path):
    source = _source(repo_builder)
    if kind == "plain":
        plain = tmp_path / "plain"
        plain.mkdir()
        for rel in ("lib/loans.py", "lib/members.py"):
            (plain / rel).parent.mkdir(parents=True, exist_ok=True)
            (plain / rel).write_bytes((source / rel).read_bytes())
        source = plain
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps(["overdue fee", "member"]))
    for args in [("query", str(source), "overdue fee", "-e", "grep"),
                 ("query", str(source / "lib"), "overdue fee", "-e", "grep", "--json"),
                 ("determinism", str(source), "--engine", "grep", "--queries", str(queries), "--families",
                  "rebuild,query", "--rebuilds", "2", "--trials", "2", "--out", str(tmp_path / f"det-{kind}"))]:
        before = snapshot(source)
        r = cli(*args)
        assert r.returncode == 0, (args, r.stderr)
        assert snapshot(source) == before, args


def test_battery_validate_leaves_the_battery_and_repository_as_they_were(sample_repo, tmp_path):
    import shutil

    import ctxgauge

    battery = tmp_path / "shelfd"
    shutil.copytree(Path(ctxgauge.__file__).parent / "data" / "batteries" / "shelfd", battery)
    before = snapshot(battery), snapshot(sample_repo)
    for args in [("battery", "validate", str(battery), "--repo", str(sample_repo)),
                 ("battery", "validate", str(battery), "--repo", str(sample_repo), "--json")]:
        r = cli(*args)
        assert r.returncode == 0, (args, r.stderr, r.stdout[-2000:])
        assert (snapshot(battery), snapshot(sample_repo)) == before, args
