"""The mcp-tools arm: a scripted model calls a real MCP server's own tools (tests/engines/mcp/servers/
word_server.py --mode tools, written with the SDK); only tools declared read-only, or listed in tools=, are
handed over; every call is kept with its arguments, result size in tokens and latency."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from qa_helpers import ENV, FACTS, Reply, qid_of  # type: ignore[import-not-found]
from ctxgauge.errors import UserError
from ctxgauge.records import read_units
from ctxgauge.suites.qa import QAConfig, parse_arm, run_qa

pytest.importorskip("mcp")

SERVER = Path(__file__).resolve().parents[3] / "engines" / "mcp" / "servers" / "word_server.py"


def _arm(state: Path, **params: str) -> str:
    inner = ",".join([f'cmd="{sys.executable} {SERVER} --mode tools --out {state}"',
                      *(f'{k}="{v}"' for k, v in params.items()), "timeout=20"])
    return f"mcp-tools:mcp({inner})"


def _cfg(mini, server, tmp_path, arm: str) -> QAConfig:
    return QAConfig(source=str(mini.path), arms=[arm], model="gpt-4o-mini", base_url=server.base_url,
                    cache_dir=tmp_path / "c", out=tmp_path / "run", retries=0, timeout=5.0)


def _calls(run_dir: Path) -> dict[str, list[dict]]:
    out = {}
    for u in read_units(run_dir):
        if u.data.get("transcript_file"):
            lines = (run_dir / u.data["transcript_file"]).read_text().splitlines()
            out[u.data["qid"]] = [e for e in map(json.loads, lines) if e["event"] == "tool_result"]
    return out


def test_the_model_gets_only_read_only_tools_and_every_call_is_recorded(mini_battery, openai_server, tmp_path):
    state = tmp_path / "written"  # the server's write tools write here: it must never exist

    def agent(body):
        msgs = body["messages"]
        q = qid_of(next(m["content"] for m in msgs if m["role"] == "user"))
        done = [m for m in msgs if m["role"] == "tool"]
        if q != "q01":
            return "no idea"
        if not done:
            return Reply(tool_calls=[("search_code", {"query": "compute_1"})])
        if len(done) == 1:
            assert FACTS["q01"][0] in done[0]["content"]  # the server's own answer reached the model
            return Reply(tool_calls=[("read_file", {"path": FACTS["q01"][0]}), ("write_note", {"text": "x"}),
                                     ("read_file", {"path": "nope.py"})])
        assert 'return "value1x"' in done[1]["content"]
        assert done[2]["content"].startswith("error: no tool 'write_note'")
        assert done[3]["content"].startswith("error: ")  # the tool's own error (isError), read by the model
        return "It returns value1x."

    openai_server.route(agent)
    arm = _arm(state)
    result = run_qa(_cfg(mini_battery, openai_server, tmp_path, arm), env=ENV)
    s = result.to_dict()["summary"][str(parse_arm(arm))]
    assert s["passed"] == 1
    assert s["tool_calls"] == {"read_file": 2, "search_code": 1, "write_note": 1}
    offered = [t["function"]["name"] for t in openai_server.requests[0]["tools"]]
    assert offered == ["read_file", "search_code"]  # write_note (destructive) and run_shell (no hint) refused
    assert "read_file, search_code" in openai_server.requests[0]["messages"][0]["content"]
    assert not state.exists()
    calls = _calls(tmp_path / "run")["q01"]
    assert [(c["name"], c["status"], c["arguments"]) for c in calls] == [
        ("search_code", "ok", {"query": "compute_1"}), ("read_file", "ok", {"path": "pkg/mod1.py"}),
        ("write_note", "error", {"text": "x"}), ("read_file", "error", {"path": "nope.py"})]
    from ctxgauge.metrics.tokens import default_tokenizer

    body = (mini_battery.repo / "pkg" / "mod1.py").read_text() if (mini_battery.repo / "pkg").is_dir() else None
    assert calls[1]["tokenizer"] == "o200k_base" and calls[1]["result_tokens"] > 0
    if body is not None:
        assert calls[1]["result_tokens"] == default_tokenizer().count(body)
    assert all(isinstance(c["latency_ms"], float) and c["latency_ms"] >= 0 for c in calls)


def test_tools_lists_exactly_what_is_exposed_even_a_writing_tool(mini_battery, openai_server, tmp_path):
    state = tmp_path / "written"

    def agent(body):
        msgs = body["messages"]
        q = qid_of(next(m["content"] for m in msgs if m["role"] == "user"))
        if q == "q01" and not [m for m in msgs if m["role"] == "tool"]:
            return Reply(tool_calls=[("write_note", {"text": "listed"})])
        return "no idea"

    openai_server.route(agent)
    run_qa(_cfg(mini_battery, openai_server, tmp_path, _arm(state, tools="write_note,read_file")), env=ENV)
    assert [t["function"]["name"] for t in openai_server.requests[0]["tools"]] == ["write_note", "read_file"]
    assert state.read_text() == "listed"  # the user listed it: exposed and called


def test_mcp_tools_arm_spec():
    arm = parse_arm('mcp-tools:mcp(cmd="srv",tools="a,b")')
    assert arm.kind == "mcp-tools" and str(parse_arm(str(arm))) == str(arm) and arm.needs_corpus
    with pytest.raises(UserError, match="mcp-tools takes an mcp"):
        parse_arm("mcp-tools:bm25")


def test_a_server_with_no_read_only_tool_fails_the_arm_with_one_line(tmp_path, corpus_dir_for_tools):
    from ctxgauge.corpus import Corpus
    from ctxgauge.suites.qa.arms._mcp_tools import McpToolsHandle

    spec = f'mcp(cmd="{sys.executable} {SERVER} --mode structured",timeout=20)'
    with pytest.raises(UserError, match="none of the server's tools .*is declared read-only"):
        McpToolsHandle(spec, Corpus.from_directory(corpus_dir_for_tools), tmp_path / "out")


@pytest.fixture
def corpus_dir_for_tools(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    return root
