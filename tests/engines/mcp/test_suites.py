"""mcp(...) in the suites, on the bundled sample: replay equals bm25 run directly, determinism grades by
whether the server keeps an index in {out}, replay refuses a server serving its own tree, check lists tools."""

from __future__ import annotations

import json
import subprocess
import sys

PY = sys.executable


def ctxgauge(*args):
    return subprocess.run([PY, "-m", "ctxgauge", *args], capture_output=True, text=True, timeout=300)


def test_bm25_behind_mcp_gives_bm25s_paths_and_scores_on_every_replayed_commit(sample_repo, tmp_path, servers):
    spec = f'mcp(cmd="{PY} {servers / "bm25_server.py"}",tool="search",reindex_tool="reindex")'
    runs = {}
    for label, engine in (("mcp", spec), ("bm25", "bm25(spans=false)")):  # the server returns whole files
        r = ctxgauge("replay", str(sample_repo), "--engine", engine, "--commits", "3", "-k", "5", "--json",
                     "--out", str(tmp_path / label))
        assert r.returncode == 0, r.stderr
        runs[label] = json.loads(r.stdout)["commits"]
    assert len(runs["mcp"]) == 3 and all(c["ranking"] for c in runs["mcp"])
    assert [(c["sha"], c["ranking"]) for c in runs["mcp"]] == [(c["sha"], c["ranking"]) for c in runs["bm25"]]


def test_determinism_reaches_ctl3_only_with_an_index_in_out(sample_repo, tmp_path, servers):
    server = f"{PY} {servers / 'word_server.py'}"
    with_out = f'mcp(cmd="{server} --mode out --out {{out}}",index_tool="index",out="index.json")'
    without = f'mcp(cmd="{server}")'
    r = ctxgauge("determinism", str(sample_repo), "-e", with_out, "-e", without, "--rebuilds", "2", "--trials", "2",
                 "--query-count", "3", "--families", "rebuild,query", "--json", "--out", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    engines = json.loads(r.stdout)["engines"]
    assert engines[with_out]["level"] == 3
    assert engines[without]["level"] == 2
    assert engines[without]["families"]["rebuild"]["status"] == "not measured"


def test_replay_refuses_a_server_it_did_not_start(sample_repo, tmp_path):
    r = ctxgauge("replay", str(sample_repo), "--engine", 'mcp(url="http://127.0.0.1:9/mcp")',
                 "--out", str(tmp_path / "run"))
    assert r.returncode == 2 and "serves whatever tree it holds" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "run").exists()


def test_check_lists_the_tools_found_and_used(servers):
    spec = f'mcp(cmd="{PY} {servers / "word_server.py"} --mode out --out {{out}}",index_tool="index",out="index.json")'
    r = ctxgauge("check", spec, "--queries", "2", "--json")
    out = json.loads(r.stdout)
    assert out["tools"]["found"] == ["index", "search_code"]
    assert out["tools"]["used"]["search"] == "search_code" and out["tools"]["used"]["index_tool"] == "index"


def test_the_docs_example_server_is_this_fixture():
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    page = (root / "docs" / "mcp-engines.md").read_text()
    server = (Path(__file__).with_name("servers") / "search_server.py").read_text()
    assert f"```python search_server.py\n{server}```" in page  # tests/docs runs the page's example
