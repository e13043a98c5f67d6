"""The mcp engine against real MCP servers (tests/engines/mcp/servers/word_server.py, written with the SDK)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines import describe_engines, get_engine
from ctxgauge.errors import EngineError, UserError


def built(spec: str, corpus_dir: Path, out: Path):
    engine = get_engine(spec)
    engine.build(Corpus.from_directory(corpus_dir), out)
    return engine


def test_structured_results_one_hit_per_file_with_merged_ranges(corpus_dir, tmp_path, word_spec):
    engine = built(word_spec(), corpus_dir, tmp_path / "out")
    try:
        hits = engine.query(tmp_path / "out", "overdue fee round", 10)
        # loans.py has all three words, README.md one ("fee"); each answered twice by the server.
        assert [(h.path, h.score) for h in hits] == [("src/loans.py", 3.0), ("README.md", 1.0)]
        # The server's ranges of one file merged into the hit's spans: README.md's two (2-2, cut to its two
        # lines, twice) are one; loans.py's 1-2 and 5-6 stay two.
        assert [h.spans for h in hits] == [((1, 2), (5, 6)), ((2, 2),)]
        assert engine.last_spans == {"src/loans.py": [(1, 2), (5, 6)], "README.md": [(2, 2)]}
        assert engine.query_notes() == {"how": "structured", "truncated": False, "unparsed_lines": 0,
                                        "scores": "given"}
        assert [h.path for h in engine.query(tmp_path / "out", "overdue fee round", 1)] == ["src/loans.py"]
        assert engine.query(tmp_path / "out", "zebra", 10) == []  # parses to nothing: an empty ranking
        report = engine.tools_report()
        assert report["found"] == ["search_code"] and report["used"] == {"search": "search_code",
                                                                         "text_arg": "query", "k_arg": "k"}
        ident = engine.identity()
        assert ident["source"] == "declared" and "word-server 1.2.0" in ident["note"]
    finally:
        engine.close()


def test_resource_links_get_rank_scores_and_truncate_to_k(corpus_dir, tmp_path, word_spec):
    engine = built(word_spec("links", tool="search_code"), corpus_dir, tmp_path / "out")
    try:
        hits = engine.query(tmp_path / "out", "fee class", 2)  # three files match; the tool takes no k
        assert [(h.path, h.score) for h in hits] == [("README.md", 1.0), ("src/loans.py", 0.5)]
        assert [h.spans for h in hits] == [(), ()]  # links name files only: the whole file
        assert engine.counts["truncated"] == 1 and engine.counts["rank_derived"] == 1
        assert engine.query_notes() == {"how": "resource links", "truncated": True, "unparsed_lines": 0,
                                        "scores": "rank-derived"}
    finally:
        engine.close()


def test_text_lines_count_what_they_cannot_read(corpus_dir, tmp_path, word_spec):
    engine = built(word_spec("lines"), corpus_dir, tmp_path / "out")
    try:
        hits = engine.query(tmp_path / "out", "email", 5)
        assert [h.path for h in hits] == ["src/members.py"]
        assert engine.last_spans == {"src/members.py": [(2, 2), (12, 14)]}
        assert hits[0].spans == ((2, 2), (12, 14))
        assert engine.counts["unparsed_lines"] == 1  # the "results:" header
        assert engine.query_notes()["unparsed_lines"] == 1
        assert engine.query(tmp_path / "out", "zebra", 5) == []
    finally:
        engine.close()


@pytest.mark.parametrize("mode, said", [("outside", "is outside the corpus"), ("garbage", "no results understood"),
                                        ("beyond", "span-range: span 1 \\(6-7\\) ends past the file's 2 lines")])
def test_breaches_fail_the_request(corpus_dir, tmp_path, mode, said, word_spec):
    engine = built(word_spec(mode), corpus_dir, tmp_path / "out")
    try:
        with pytest.raises(EngineError, match=said):
            engine.query(tmp_path / "out", "fee", 5)
    finally:
        engine.close()


def test_a_crashed_server_fails_one_request_and_the_next_starts_it_again(corpus_dir, tmp_path, word_spec):
    engine = built(word_spec("crash"), corpus_dir, tmp_path / "out")
    try:
        with pytest.raises(EngineError) as err:
            engine.query(tmp_path / "out", "crash fee", 5)
        assert "exited with status 3" in str(err.value) and "asked to crash" in str(err.value)
        assert "\n" not in str(err.value)
        assert [h.path for h in engine.query(tmp_path / "out", "email", 5)] == ["src/members.py"]
    finally:
        engine.close()


def test_a_hung_server_is_killed_at_the_deadline(corpus_dir, tmp_path, word_spec):
    engine = built(word_spec("hang", timeout=2), corpus_dir, tmp_path / "out")
    try:
        started = time.monotonic()
        with pytest.raises(EngineError, match="no answer within 2s"):
            engine.query(tmp_path / "out", "hang", 5)
        assert time.monotonic() - started < 5
        assert [h.path for h in engine.query(tmp_path / "out", "email", 5)] == ["src/members.py"]
    finally:
        engine.close()


def test_a_server_whose_tools_change_is_a_new_system(corpus_dir, tmp_path, word_spec):
    # Its tool gains an argument from its third start: probe (1), first build (2), second build (3).
    engine = get_engine(word_spec("schema", "--state", str(tmp_path / "starts")))
    try:
        first = engine.identity()
        corpus = Corpus.from_directory(corpus_dir)
        engine.build(corpus, tmp_path / "a")
        assert engine.identity() == first
        with pytest.raises(EngineError, match="the server changed its tools: a new system"):
            engine.build(corpus, tmp_path / "b")
        with pytest.raises(EngineError, match="a new system"):
            engine.query(tmp_path / "a", "fee", 5)
    finally:
        engine.close()


def test_out_gives_an_artifact_written_by_the_index_tool(corpus_dir, tmp_path, word_spec):
    spec = word_spec("out", "--out", "{out}", index_tool="index", out="index.json")
    engine = built(spec, corpus_dir, tmp_path / "out")
    try:
        assert engine.artifact_file == "index.json" and engine.no_artifact is None
        assert (tmp_path / "out" / "index.json").is_file()
        assert [h.path for h in engine.query(tmp_path / "out", "email", 5)] == ["src/members.py"]
        assert engine.tools_report()["used"]["index_tool"] == "index"
    finally:
        engine.close()
    assert get_engine(word_spec()).no_artifact  # without out=: no artifact to compare
    with pytest.raises(UserError, match="out= is not given"):
        get_engine(word_spec("out", "--out", "{out}"))


def test_streamable_http_server_started_on_a_free_port(corpus_dir, tmp_path, servers):
    cmd = f"{sys.executable} {servers / 'word_server.py'} --http {{port}} --corpus {{corpus}}"
    engine = get_engine(f'mcp(cmd="{cmd}",url="http://127.0.0.1:{{port}}/mcp",timeout=20)')
    try:
        engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
        assert [h.path for h in engine.query(tmp_path / "out", "email", 5)] == ["src/members.py"]
        assert engine.serves_own_tree is False
    finally:
        engine.close()


def test_url_must_be_the_loopback_and_a_server_elsewhere_serves_its_own_tree():
    with pytest.raises(UserError, match="not the loopback"):
        get_engine('mcp(url="http://10.1.2.3:8000/mcp")')
    assert get_engine('mcp(url="http://127.0.0.1:8000/mcp")').serves_own_tree
    assert not get_engine('mcp(url="http://127.0.0.1:8000/mcp",index_tool="index")').serves_own_tree
    with pytest.raises(UserError, match="needs cmd="):
        get_engine("mcp")


def test_identity_leaves_out_cmd(corpus_dir, tmp_path, word_spec):
    a, b = get_engine(word_spec()), get_engine(word_spec("structured", "--state", str(tmp_path / "s")))
    try:
        assert a.identity() == b.identity()
        assert a.identity() != get_engine(word_spec(k_arg="k")).identity()  # a parameter that changes the call
    finally:
        a.close()
        b.close()


def test_the_server_dies_with_ctxgauge_even_by_sigkill(corpus_dir, tmp_path, word_spec):
    code = textwrap.dedent(f"""
        import sys, time
        from ctxgauge.corpus import Corpus
        from ctxgauge.engines import get_engine
        e = get_engine({word_spec()!r})
        e.build(Corpus.from_directory({str(corpus_dir)!r}), {str(tmp_path / 'out')!r})
        print(e._state["served"][{str((tmp_path / 'out').resolve())!r}].conn.proc.pid, flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    pid = int(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{pid}/stat").is_file() and Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            break  # dead, waiting to be reaped by init
        time.sleep(0.1)
    else:
        os.killpg(pid, signal.SIGKILL)
        pytest.fail("the server outlived ctxgauge")


def test_engines_lists_mcp_and_the_sdk_loads_only_when_an_engine_opens(monkeypatch):
    row = {i.name: i for i in describe_engines()}["mcp"]
    assert row.available and "cmd=" in row.reason
    import ctxgauge.engines.mcp as pkg

    monkeypatch.setattr(pkg, "sdk_installed", lambda: False)
    row = {i.name: i for i in describe_engines()}["mcp"]
    assert not row.available and "pip install 'ctxgauge[mcp]'" in row.reason
    out = subprocess.run([sys.executable, "-c", (
        "import sys; from ctxgauge.engines import get_engine, describe_engines; describe_engines(); "
        "e = get_engine('mcp(cmd=\"x\")'); print(sorted(m for m in ('mcp', 'httpx2', 'anyio') if m in sys.modules))")],
        capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _taken_port():
    """A loopback port bound but not listening: a server cannot bind it, and nothing answers on it."""
    import socket

    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    return s


def test_a_port_taken_before_the_server_binds_it_is_retried_on_a_new_one(corpus_dir, tmp_path, servers, monkeypatch):
    import ctxgauge.engines.mcp._engine as mod

    taken = _taken_port()
    real, given = mod._free_port, []

    def racy() -> int:  # the first port "found free" is taken by someone else before the server binds it
        given.append(taken.getsockname()[1] if not given else real())
        return given[-1]

    monkeypatch.setattr(mod, "_free_port", racy)
    cmd = f"{sys.executable} {servers / 'word_server.py'} --http {{port}} --corpus {{corpus}}"
    engine = get_engine(f'mcp(cmd="{cmd}",url="http://127.0.0.1:{{port}}/mcp",timeout=20)')
    try:
        engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
        assert [h.path for h in engine.query(tmp_path / "out", "email", 5)] == ["src/members.py"]
        assert len(given) == 2 and given[0] == taken.getsockname()[1] != given[1]
    finally:
        engine.close()
        taken.close()


def test_three_starts_that_never_listen_fail_with_one_line(corpus_dir, tmp_path, servers, monkeypatch):
    import ctxgauge.engines.mcp._engine as mod

    taken = _taken_port()
    monkeypatch.setattr(mod, "_free_port", lambda: taken.getsockname()[1])
    cmd = f"{sys.executable} {servers / 'word_server.py'} --http {{port}} --corpus {{corpus}}"
    engine = get_engine(f'mcp(cmd="{cmd}",url="http://127.0.0.1:{{port}}/mcp",timeout=20)')
    try:
        with pytest.raises(EngineError, match="before listening.*after 3 starts, each on a new free port") as err:
            engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
        assert "\n" not in str(err.value)
    finally:
        engine.close()
        taken.close()
