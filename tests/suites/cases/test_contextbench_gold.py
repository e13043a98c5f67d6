"""ContextBench's gold read as cases: one case per instance, the gold context's files as expected files
and its spans as gold lines (merged per file), on a real clone found under --repos."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from ctxgauge.errors import UserError
from ctxgauge.suites.cases import is_contextbench, is_swebench, load_contextbench


@pytest.fixture
def gold(tmp_path, repo_builder):
    shop = repo_builder("repos/acme__shop")
    c1 = shop.commit("one", {"a.py": "".join(f"a{i} = {i}\n" for i in range(1, 11)), "b.py": "b = 1\n",
                             ".github/ci.yml": "on: push\njobs: {}\n"})
    c2 = shop.commit("two", {"c.py": "c = 3\n"})
    records = [
        # gold_context as the parquet column holds it (JSON text); /testbed/ stripped; 2-4 and 4-6 merge.
        {"instance_id": "acme__shop-1", "repo": "acme/shop", "base_commit": c1, "problem_statement": " Fix a \n",
         "patch": "", "gold_context": json.dumps([
             {"file": "a.py", "start_line": 2, "end_line": 4, "content": "..."},
             {"file": "/testbed/a.py", "start_line": 4, "end_line": 6},
             {"file": "b.py", "start_line": 1, "end_line": 1}])},
        # init_ctx + add_ctx, the repository from repo_url, the revision from `commit`; ./ dropped, the dot
        # of .github kept; 8-8 and 9-10 are adjacent and merge.
        {"inst_id": "acme__shop-2", "repo_url": "https://github.com/acme/shop.git", "commit": c2,
         "problem_statement": "Fix c",
         "init_ctx": [{"file": "./.github/ci.yml", "start_line": 1, "end_line": 2},
                      {"file": "c.py", "start_line": 1, "end_line": 1}],
         "add_ctx": [{"file": "a.py", "start_line": 8, "end_line": 8}, {"file": "a.py", "start_line": 9, "end_line": 10}]},
        {"instance_id": "acme__shop-3", "repo": "acme/shop", "base_commit": c1, "problem_statement": "x", "gold_ctx": []},
    ]
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path, shop.path, c1, c2


def test_two_instances_become_cases_with_their_gold_lines(gold, tmp_path):
    path, clone, c1, c2 = gold
    assert is_contextbench(path) and is_swebench(path)  # both match: `cases` asks ContextBench first
    cases, dropped = load_contextbench(path, tmp_path / "repos")
    one, two = cases.cases
    assert (one.name, one.query, one.corpus) == ("acme__shop-1", "Fix a", f"{clone.resolve()}@{c1}")
    assert one.expected == ("a.py", "b.py")
    assert one.gold_lines() == {"a.py": [(2, 6)], "b.py": [(1, 1)]}
    assert (two.name, two.corpus) == ("acme__shop-2", f"{clone.resolve()}@{c2}")
    assert two.expected == (".github/ci.yml", "c.py", "a.py")
    assert two.gold_lines() == {".github/ci.yml": [(1, 2)], "a.py": [(8, 10)], "c.py": [(1, 1)]}
    assert dropped == {"no-gold-context": 1}


def test_a_json_list_reads_the_same(gold, tmp_path):
    path, *_ = gold
    listed = tmp_path / "gold.json"
    listed.write_text(json.dumps([json.loads(x) for x in path.read_text().splitlines()]))
    a, _ = load_contextbench(path, tmp_path / "repos")
    b, _ = load_contextbench(listed, tmp_path / "repos")
    assert a.cases == b.cases


def test_cases_picks_contextbench_and_writes_the_cases(gold, tmp_path):
    path, *_ = gold
    out = tmp_path / "cases.yaml"
    r = subprocess.run([sys.executable, "-m", "ctxgauge", "cases", str(path), "--repos", str(tmp_path / "repos"),
                        "--write-cases", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    written = yaml.safe_load(out.read_text())["cases"]
    assert [c["name"] for c in written] == ["acme__shop-1", "acme__shop-2"]
    assert written[0]["lines"] == {"a.py": [[2, 6]], "b.py": [[1, 1]]}


@pytest.mark.parametrize("item, message", [
    ({"file": "a.py", "start_line": 5, "end_line": 3}, r"gold item 1 \(a.py\): \[5, 3\] must have 1 <= start_line"),
    ({"file": "a.py", "start_line": 0, "end_line": 3}, r"\[0, 3\] must have 1 <= start_line"),
    ({"file": "a.py", "start_line": "1", "end_line": 3}, "must be integers"),
    ({"start_line": 1, "end_line": 3}, "needs a `file`"),
])
def test_a_bad_span_is_refused_never_mended(tmp_path, item, message):
    (tmp_path / "acme__shop").mkdir()
    rec = {"instance_id": "i", "repo": "acme/shop", "base_commit": "abc", "problem_statement": "p", "gold_ctx": [item]}
    (tmp_path / "g.jsonl").write_text(json.dumps(rec) + "\n")
    with pytest.raises(UserError, match=message):
        load_contextbench(tmp_path / "g.jsonl", tmp_path)


def test_parquet_without_pyarrow_is_one_line_exit_2(tmp_path):
    (tmp_path / "gold.parquet").write_bytes(b"PAR1")
    code = ("import sys; sys.modules['pyarrow'] = None; sys.modules['pyarrow.parquet'] = None\n"
            "from ctxgauge.cli import main; main()")
    r = subprocess.run([sys.executable, "-c", code, "cases", str(tmp_path / "gold.parquet"), "--write-cases",
                        str(tmp_path / "c.yaml")], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().count("\n") == 0 and "pip install pyarrow" in r.stderr


def test_parquet_is_read_where_pyarrow_is_installed(gold, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path, *_ = gold
    rows = [json.loads(x) for x in path.read_text().splitlines()][:1]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "gold.parquet")
    cases, _ = load_contextbench(tmp_path / "gold.parquet", tmp_path / "repos")
    assert cases.cases[0].gold_lines() == {"a.py": [(2, 6)], "b.py": [(1, 1)]}
