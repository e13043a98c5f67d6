"""`ctxgauge --cache-dir DIR …`, `--no-cache`, `cache show` and `cache prune`, through the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    for i in range(6):
        (root / f"m{i}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / f"m{i}.py").write_text(f"def handler_{i}(request):\n    return 'reply {i} ' * {i + 1}\n")
    return root


def test_query_fills_the_cache_dir_and_show_prune_report_it(tmp_path):
    cache_dir = tmp_path / "cache"
    q = _cli("--cache-dir", str(cache_dir), "query", str(_tree(tmp_path)), "handler reply", "--json")
    assert q.returncode == 0, q.stderr
    shown = json.loads(_cli("--cache-dir", str(cache_dir), "cache", "show", "--json").stdout)
    assert shown["dir"] == str(cache_dir.absolute())
    assert [(s["name"], s["entries"]) for s in shown["stages"]] == [("bm25.content-terms", 6)]
    assert shown["bytes"] == sum(s["bytes"] for s in shown["stages"]) > 0
    pruned = json.loads(_cli("--cache-dir", str(cache_dir), "cache", "prune", "--all", "--json").stdout)
    assert (pruned["removed"], pruned["freed_bytes"], pruned["bytes"]) == (6, shown["bytes"], 0)
    # the same query from an empty cache ranks the same
    again = _cli("--cache-dir", str(cache_dir), "query", str(_tree(tmp_path)), "handler reply", "--json")
    assert json.loads(again.stdout)["hits"] == json.loads(q.stdout)["hits"]


def test_no_cache_writes_nothing_and_show_says_it_is_off(tmp_path):
    env = {"CTXGAUGE_CACHE": str(tmp_path / "cache")}
    q = _cli("--no-cache", "query", str(_tree(tmp_path)), "handler", env=env)
    assert q.returncode == 0, q.stderr
    assert not (tmp_path / "cache").exists()
    off = _cli("--no-cache", "cache", "show", env=env)
    assert off.returncode == 2 and "off" in off.stderr and "Traceback" not in off.stderr


def test_a_bad_size_is_one_line_and_exit_2(tmp_path):
    r = _cli("--cache-dir", str(tmp_path), "cache", "prune", "--max-size", "lots")
    assert r.returncode == 2 and "not a size" in r.stderr and "Traceback" not in r.stderr


def test_prune_removes_the_older_format_and_keeps_this_ones_entries(tmp_path):
    cache_dir = tmp_path / "cache"
    assert _cli("--cache-dir", str(cache_dir), "query", str(_tree(tmp_path)), "handler", "--json").returncode == 0
    before = json.loads(_cli("--cache-dir", str(cache_dir), "cache", "show", "--json").stdout)
    assert before["entries"] > 0
    left = cache_dir / "v1" / ("ab" * 32) / "cd"  # what an earlier ctxgauge wrote: a file per entry
    left.mkdir(parents=True)
    (left / ("e" * 38)).write_bytes(b"an old entry")
    (left / f".{'f' * 38}.4242.beef.tmp").write_bytes(b"half")  # and a killed writer's temporary
    pruned = json.loads(_cli("--cache-dir", str(cache_dir), "cache", "prune", "--json").stdout)
    assert (pruned["stale_temporaries"], pruned["stale_bytes"], pruned["removed"]) == (2, 16, 0)
    assert not (cache_dir / "v1").exists()
    after = json.loads(_cli("--cache-dir", str(cache_dir), "cache", "show", "--json").stdout)
    assert (after["entries"], after["bytes"]) == (before["entries"], before["bytes"])
    text = _cli("--cache-dir", str(cache_dir), "cache", "prune").stdout
    assert "removed 0 entries" in text and "older format" not in text
