"""`query` shows the lines each hit hands a model (issue 37, item 9): `--json` gives every hit's `spans`
as `[[start, end], ...]` (empty: the whole file), the terminal a `lines` column (`2-3, 5`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ENGINE = r'''
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "identity":
        out = {"identity": {"id": "spans-test-1", "source": "declared"}}
    elif req["op"] == "build":
        out = {}
    else:
        out = {"hits": [{"path": "a.py", "score": 2.0, "spans": [{"start": 2, "end": 3}, {"start": 5, "end": 5}]},
                        {"path": "b.py", "score": 1.0}]}
    print(json.dumps({"ok": True, **out}), flush=True)
'''


def _run(tmp_path, *extra):
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "a.py").write_text("".join(f"line {i}\n" for i in range(1, 7)))
    (src / "b.py").write_text("x\n")
    script = tmp_path / "engine.py"
    script.write_text(ENGINE)
    spec = f"command(cmd={json.dumps(sys.executable + ' ' + str(script))})"
    return subprocess.run([sys.executable, "-m", "ctxgauge", "query", str(src), "fees", "-e", spec, *extra],
                          capture_output=True, text=True, env={"COLUMNS": "120", "PATH": "/usr/bin:/bin",
                                                               "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
                                                               "CTXGAUGE_CACHE": "off"})


def test_json_gives_every_hits_spans(tmp_path):
    r = _run(tmp_path, "--json")
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["hits"]
    assert [(h["path"], h["spans"]) for h in hits] == [("a.py", [[2, 3], [5, 5]]), ("b.py", [])]


def test_terminal_shows_the_lines(tmp_path):
    r = _run(tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {line.split("│")[2].strip(): line.split("│")[4].strip() for line in r.stdout.splitlines()
            if line.startswith("│")}
    assert rows == {"a.py": "2-3, 5", "b.py": "whole file"}


def test_a_file_only_engine_has_no_lines_column(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def fees(): pass\n")
    r = subprocess.run([sys.executable, "-m", "ctxgauge", "query", str(tmp_path / "src"), "fees", "-e",
                        "grep(spans=false)"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "lines" not in r.stdout and "a.py" in r.stdout
