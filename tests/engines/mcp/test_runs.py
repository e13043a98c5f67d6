"""mcp(...) through whole runs: cases, determinism of a server that shuffles ties, and a replay SIGKILLed
mid-run then resumed (the record equals the uninterrupted one, and no server outlives the killed run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ctxgauge.records import comparable_unit, read_run, read_units

PY = sys.executable


def ctxgauge(*args, env: dict | None = None, timeout: float = 300):
    return subprocess.run([PY, "-m", "ctxgauge", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def _word(servers: Path, *flags: str) -> str:
    return f"{PY} {servers / 'word_server.py'} " + " ".join(flags)


def _servers_running(marker: str) -> list[int]:
    """Pids of live processes whose command line holds `marker` (zombies awaiting their reaper are dead)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker not in (proc / "cmdline").read_bytes().decode("utf-8", "replace"):
                continue
            if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
        except OSError:
            continue
        pids.append(int(proc.name))
    return pids


def test_cases_through_mcp_record_spans_and_how_each_answer_was_read(corpus_dir, tmp_path, servers):
    (tmp_path / "cases.yaml").write_text(
        f"corpus: {corpus_dir}\ncases:\n"
        "  - {name: fee, query: overdue fee round, expected: [src/loans.py]}\n"
        "  - {name: email, query: member email, expected: [src/members.py]}\n")
    spec = f'mcp(cmd="{_word(servers)}",name="words")'
    lines = f'mcp(cmd="{_word(servers, "--mode lines")}",name="lines")'
    r = ctxgauge("cases", str(tmp_path / "cases.yaml"), "--engine", spec, "--vs", lines, "-k", "5",
                 "--out", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    units = {u.id: u.to_json() for u in read_units(tmp_path / "run")}
    assert {i: u["status"] for i, u in units.items()} == {"fee": "ok", "email": "ok"}
    fee = units["fee"]
    assert fee["figures"]["hit@5"] == 1.0
    assert fee["ranking"][0] == {"path": "src/loans.py", "score": 3.0, "spans": [[1, 2], [5, 6]]}
    assert fee["reading"] == {"how": "structured", "scores": "given", "truncated": False, "unparsed_lines": 0}
    # The --vs server answers text lines without scores, one of them a header nothing can read.
    assert fee["vs"]["reading"] == {"how": "text lines", "scores": "rank-derived", "truncated": False,
                                    "unparsed_lines": 1}
    # Line 1, and 11-13 cut by the server to the file's 7 lines: 7-7.
    assert fee["vs"]["ranking"][0] == {"path": "src/loans.py", "score": 1.0, "spans": [[1, 1], [7, 7]]}


def test_a_server_that_shuffles_ties_is_graded_below_ctl3(sample_repo, tmp_path, servers):
    # Both keep an index in {out}; only the second changes the order of equal scores from call to call.
    steady = f'mcp(cmd="{_word(servers, "--mode out --out {out}")}",index_tool="index",out="index.json")'
    shuffling = (f'mcp(cmd="{_word(servers, "--mode shuffle --out {out} --state", str(tmp_path / "calls"))}",'
                 'index_tool="index",out="index.json")')
    r = ctxgauge("determinism", str(sample_repo), "-e", steady, "-e", shuffling, "--rebuilds", "2", "--trials", "2",
                 "--query-count", "3", "--families", "rebuild,query", "--json", "--out", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    engines = json.loads(r.stdout)["engines"]
    assert engines[steady]["level"] == 3
    assert engines[shuffling]["level"] < 3
    query = engines[shuffling]["families"]["query"]["figures"]
    assert query["exact_match_rate"] < 1.0 and query["unstable_queries"] >= 1


def test_replay_through_mcp_killed_then_resumed_equals_the_uninterrupted_run(sample_repo, tmp_path, servers):
    marker = str(tmp_path / "marker")  # in every server's command line: how the test finds them
    spec = f'mcp(cmd="{_word(servers, "--reindex --state", marker)}",reindex_tool="reindex",name="words")'
    args = ["replay", str(sample_repo), "--engine", spec, "--commits", "3", "-k", "5"]
    scratch = tmp_path / "tmp"  # a SIGKILLed run cannot remove its temporary directories
    scratch.mkdir()
    env = {"TMPDIR": str(scratch)}
    reference = ctxgauge(*args, "--out", str(tmp_path / "reference"), env=env)
    assert reference.returncode == 0, reference.stderr
    killed = ctxgauge(*args, "--out", str(tmp_path / "run"),
                      env={**env, "CTXGAUGE_KILL_AT": "commit-before/replay-slice@2"})
    assert killed.returncode == -9, killed.stderr
    assert len(read_units(tmp_path / "run")) == 1  # the first commit recorded, the second never started
    deadline = time.monotonic() + 5
    while _servers_running(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _servers_running(marker) == [], "a server outlived the killed run"
    resumed = ctxgauge(*args, "--out", str(tmp_path / "run"), "--resume", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert read_run(tmp_path / "run").status == "success"
    units = {u.id: comparable_unit(u) for u in read_units(tmp_path / "run")}
    assert units == {u.id: comparable_unit(u) for u in read_units(tmp_path / "reference")}
    assert len(units) >= 3 and all(u.get("reading", {}).get("how") == "structured" for u in units.values()
                                   if u["status"] == "ok")
    assert any(h.get("spans") for u in units.values() for h in u.get("ranking", []))
    assert _servers_running(marker) == []
