"""The command engine driven against a REAL external process: tests/engines/node_engine/engine.js (Node.js)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ctxgauge.corpus import Change, Corpus
from ctxgauge.engines import Hit, get_engine
from ctxgauge.engines.command._engine import CommandEngine
from ctxgauge.errors import EngineError, UserError
from ctxgauge.git import Repo

NODE = shutil.which("node")
ENGINE_JS = Path(__file__).parent.parent / "node_engine" / "engine.js"
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")

FILES = {
    "README.md": "Alpha notes. alpha beta\n",
    "src/alpha.py": "def alpha():\n    return 'alpha alpha'\n",
    "src/beta.py": "def beta():\n    return 'beta'\n",
    "docs/gamma.txt": "gamma only\n",
}


def spec(*flags: str, timeout: float = 30, name: str | None = None) -> str:
    cmd = shlex.join([NODE or "node", str(ENGINE_JS), *flags])
    label = f",name={json.dumps(name)}" if name else ""
    return f"command(cmd={json.dumps(cmd)},timeout={timeout!r}{label})"


@pytest.fixture
def engines():
    """Engines made by a test, closed afterwards so no node process outlives it."""
    made: list[CommandEngine] = []

    def make(*flags: str, **kw) -> CommandEngine:
        made.append(get_engine(spec(*flags, **kw)))
        return made[-1]

    yield make
    for e in made:
        e.close()


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_build_and_query_through_the_registry(engines, corpus_dir: Path, tmp_path: Path) -> None:
    engine = engines()
    assert isinstance(engine, CommandEngine)
    assert engine.available() == (True, None)
    stats = engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
    assert stats["documents"] == 4
    # alpha: README.md holds 2 (the lowercased "Alpha" counts), src/alpha.py holds 3 (its name, twice quoted).
    assert engine.query(tmp_path / "out", "alpha", 10) == [Hit("src/alpha.py", 3.0), Hit("README.md", 2.0)]
    # beta gamma: src/beta.py 2; README.md and docs/gamma.txt 1 each, the tie left in path order by the program.
    assert engine.query(tmp_path / "out", "beta gamma", 2) == [Hit("src/beta.py", 2.0), Hit("README.md", 1.0)]
    assert engine.query(tmp_path / "out", "nowhere", 10) == []


def test_build_is_deterministic_and_queries_repeat(engines, corpus_dir: Path, tmp_path: Path) -> None:
    corpus = Corpus.from_directory(corpus_dir)
    first, second = engines(), engines()
    first.build(corpus, tmp_path / "a")
    second.build(corpus, tmp_path / "b")
    assert (tmp_path / "a" / "index.json").read_bytes() == (tmp_path / "b" / "index.json").read_bytes()
    answers = {tuple(first.query(tmp_path / "a", "alpha beta", 3)) for _ in range(5)}
    answers.add(tuple(second.query(tmp_path / "b", "alpha beta", 3)))
    assert len(answers) == 1


def test_one_long_lived_process_serves_every_request(engines, corpus_dir: Path, tmp_path: Path) -> None:
    engine = engines()
    assert engine.pid is None  # started lazily
    stats = engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
    pid = engine.pid
    assert pid is not None and stats["pid"] == pid
    for text in ("alpha", "beta", "gamma", "alpha beta"):
        engine.query(tmp_path / "out", text, 5)
        assert engine.pid == pid
    engine.identity()
    assert engine.pid == pid
    engine.close()
    assert engine.pid is None and not pid_alive(pid)


def test_materialises_only_the_corpus_and_removes_it(engines, tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "blob.bin").write_bytes(b"alpha\0binary")  # filtered by the corpus: the program must not see it
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    corpus = Corpus.from_directory(root).overlay({"injected.txt": b"alpha noise\n"})
    stats = engines().build(corpus, tmp_path / "out")
    assert stats["documents"] == 2
    index = json.loads((tmp_path / "out" / "index.json").read_text())
    assert [f["path"] for f in index["files"]] == ["a.txt", "injected.txt"]
    assert Path(stats["corpus"]).parent == scratch.resolve()
    assert list(scratch.iterdir()) == []


def test_git_corpus_is_materialised_then_cleaned_up(engines, repo_builder, tmp_path: Path, monkeypatch) -> None:
    builder = repo_builder()
    builder.commit("one", {"pkg/mod.py": "alpha beta\n", "notes.md": "beta\n"})
    (builder.path / "untracked.txt").write_text("alpha alpha alpha\n")  # not in HEAD: must not reach the engine
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with Repo(builder.path) as r:
        corpus = Corpus.from_git(r, "HEAD")
        engine = engines()
        stats = engine.build(corpus, tmp_path / "out")
    assert stats["documents"] == 2
    assert not Path(stats["corpus"]).exists() and list(scratch.iterdir()) == []
    assert engine.query(tmp_path / "out", "alpha beta", 5) == [Hit("pkg/mod.py", 2.0), Hit("notes.md", 1.0)]


def test_timeout_kills_the_process(engines, corpus_dir: Path, tmp_path: Path) -> None:
    engine = engines("--hang-on=query", timeout=1)
    engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
    pid = engine.pid
    start = time.monotonic()
    with pytest.raises(EngineError, match=r"timed out after 1s"):
        engine.query(tmp_path / "out", "alpha", 3)
    assert time.monotonic() - start < 1 + 4  # the deadline plus a generous margin for a loaded machine
    assert engine.pid is None and not pid_alive(pid)


def test_a_program_that_stops_reading_cannot_block_a_request(tmp_path: Path) -> None:
    # node -e with a timer never reads stdin: an update whose change list overflows the pipe buffer would
    # block the write forever without the writer thread and its deadline.
    cmd = shlex.join([NODE or "node", "-e", "setInterval(() => {}, 1000)"])
    engine = get_engine(f"command(cmd={json.dumps(cmd)},timeout=1)")
    changes = [Change("modified", f"dir/file-{i:06d}.py", old_blob="0" * 40, new_blob="1" * 40) for i in range(20000)]
    (tmp_path / "c").mkdir()
    start = time.monotonic()
    try:
        with pytest.raises(EngineError, match=r"timed out after 1s"):
            engine.update(tmp_path / "out", Corpus.from_directory(tmp_path / "c"), changes)
    finally:
        engine.close()
    assert time.monotonic() - start < 1 + 4


@pytest.mark.parametrize(("flag", "shown"), [
    ("--garbage-on=query", "not JSON: 'this is not json: the engine is confused'"),
    ("--array-on=query", "not an object with a boolean 'ok': '[1,2]'"),
    ("--no-ok-on=query", "not an object with a boolean 'ok': '{\"hits\":[]}'"),
])
def test_garbage_answers_are_engine_errors(engines, corpus_dir: Path, tmp_path: Path, flag: str, shown: str) -> None:
    engine = engines(flag)
    engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
    pid = engine.pid
    with pytest.raises(EngineError) as info:
        engine.query(tmp_path / "out", "alpha", 3)
    assert shown in str(info.value)
    assert engine.pid is None and not pid_alive(pid)  # its protocol state is unknown: it was ended


def test_an_answer_nobody_asked_for_is_an_engine_error(engines, corpus_dir: Path, tmp_path: Path) -> None:
    # Read later, the second answer to build would pass for the answer to the query.
    engine = engines("--twice-on=build")
    engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
    time.sleep(0.5)  # let the stray line arrive
    with pytest.raises(EngineError, match=r"answered a line no request asked for \(before query\)"):
        engine.query(tmp_path / "out", "alpha", 3)


def test_crash_reports_the_stderr_tail(engines, corpus_dir: Path, tmp_path: Path) -> None:
    engine = engines("--exit-on=query")
    engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
    with pytest.raises(EngineError) as info:
        engine.query(tmp_path / "out", "alpha", 3)
    # One line (a unit's reason): the exit status and the program's last words on stderr.
    assert "exited with status 3 before answering; stderr: engine.js: simulated crash during query" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_chatty_stderr_never_blocks(engines, corpus_dir: Path, tmp_path: Path) -> None:
    # 1 MiB of stderr per request is far more than a pipe holds: an undrained stderr would hang the program.
    engine = engines("--chatty", timeout=20)
    engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
    for _ in range(3):
        assert engine.query(tmp_path / "out", "alpha", 1) == [Hit("src/alpha.py", 3.0)]


@pytest.mark.parametrize(("flag", "message"), [
    ("--absolute-paths", "is not relative to the corpus"),
    ("--dotdot-paths", "is not relative to the corpus"),
    ("--too-many", "answered 6 hits for k=5"),
    ("--duplicate", "answered twice"),
    ("--bad-score", "is not a finite number"),
])
def test_contract_breaches_are_engine_errors(engines, corpus_dir: Path, tmp_path: Path, flag: str,
                                            message: str) -> None:
    engine = engines(flag)
    engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
    with pytest.raises(EngineError, match=message):
        engine.query(tmp_path / "out", "alpha", 5)


def test_missing_program_is_a_user_error(tmp_path: Path) -> None:
    engine = get_engine('command(cmd="ctxgauge-no-such-program --flag")')
    ok, why = engine.available()
    assert ok is False and "ctxgauge-no-such-program" in why and "not found on PATH" in why
    (tmp_path / "c").mkdir()
    with pytest.raises(UserError, match="not found on PATH"):
        engine.build(Corpus.from_directory(tmp_path / "c"), tmp_path / "out")
    with pytest.raises(UserError, match="not found on PATH"):
        engine.query(tmp_path / "out", "alpha", 3)


@pytest.mark.parametrize("bad", ['command', 'command(cmd="")', 'command(cmd="a \'b")',
                                 'command(cmd="node x.js",timeout=0)', 'command(cmd="node x.js",colour=1)'])
def test_bad_parameters_are_user_errors(bad: str) -> None:
    with pytest.raises(UserError):
        get_engine(bad)


def test_identity_is_the_programs_answer(engines) -> None:
    plain, other = engines(), engines("--absolute-paths")
    ident = plain.identity()
    assert ident["source"] == "content-hash" and ident["id"].startswith("sha256:")
    assert engines().identity() == ident  # recomputable
    assert other.identity()["id"] != ident["id"]  # its flags enter its identity
    assert engines("--declared-identity=demo@1.2.3").identity() == {"id": "demo@1.2.3", "source": "declared"}
    assert engines("--no-identity").identity() is None  # undeclared: never a hash we made up


def test_name_is_a_display_label(engines) -> None:
    engine = engines(name="node-demo")
    assert engine.name == "node-demo"
    assert "engine.js" in str(engine.spec)


def test_update_falls_back_to_build_when_unsupported(engines, corpus_dir: Path, tmp_path: Path) -> None:
    old = Corpus.from_directory(corpus_dir)
    (corpus_dir / "docs" / "gamma.txt").write_text("gamma alpha\n")
    new = Corpus.from_directory(corpus_dir)
    changes = old.changes_to(new)
    engine = engines()
    engine.build(old, tmp_path / "upd")
    stats = engine.update(tmp_path / "upd", new, changes)
    assert "updated" not in stats and stats["documents"] == 4  # answered by the build it fell back to
    engines().build(new, tmp_path / "fresh")
    assert (tmp_path / "upd" / "index.json").read_bytes() == (tmp_path / "fresh" / "index.json").read_bytes()

    supported = engines("--support-update")
    supported.build(old, tmp_path / "upd2")
    stats = supported.update(tmp_path / "upd2", new, changes)
    assert stats["updated"] is True and stats["changes"] == len(changes) == 1
    assert (tmp_path / "upd2" / "index.json").read_bytes() == (tmp_path / "fresh" / "index.json").read_bytes()


def test_a_failed_update_is_an_engine_error_not_a_rebuild(engines, corpus_dir: Path, tmp_path: Path) -> None:
    corpus = Corpus.from_directory(corpus_dir)
    engine = engines("--update-fails")
    engine.build(corpus, tmp_path / "out")
    with pytest.raises(EngineError, match="update failed: disk full"):
        engine.update(tmp_path / "out", corpus, [])


def test_engine_process_ends_at_interpreter_exit(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from ctxgauge.engines import get_engine\n"
        f"e = get_engine({spec()!r})\n"
        "e.identity()\n"
        "print(e.pid)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    pid = int(out.stdout.strip())
    deadline = time.monotonic() + 10
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(pid)


FLOOD_ENGINE = """
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "query" and "flood" in req["text"]:
        sys.stdout.write("x" * (40 << 20))  # 40 MB and no newline
        sys.stdout.flush()
        sys.stdin.readline()
    elif req["op"] == "query":
        print(json.dumps({"ok": True, "hits": [{"path": "a" * 3_000_000, "score": 1.0}]}), flush=True)
    else:
        print(json.dumps({"ok": True}), flush=True)
"""


def test_huge_answers_are_bounded(tmp_path: Path) -> None:
    # A 40 MB line with no newline fails the request (the reader stops at 8 MiB) instead of growing memory
    # until the timeout; a 3 MB path is quoted cut to a few hundred characters, never whole, in the reason.
    from ctxgauge.engines import checked_hits

    script = tmp_path / "flood.py"
    script.write_text(FLOOD_ENGINE)
    cmd = shlex.join([sys.executable, str(script)])
    engine = get_engine(f"command(cmd={json.dumps(cmd)},timeout=60)")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.py").write_text("x = 1\n")
    corpus = Corpus.from_directory(tmp_path / "c")
    try:
        engine.build(corpus, tmp_path / "out")
        start = time.monotonic()
        with pytest.raises(EngineError, match=r"answered a line longer than 8 MiB \(process killed\)"):
            engine.query(tmp_path / "out", "flood", 3)
        assert time.monotonic() - start < 50  # well before the 60 s timeout
        engine.build(corpus, tmp_path / "out")  # a new process serves the next request
        with pytest.raises(EngineError) as info:
            checked_hits(engine.query(tmp_path / "out", "path", 3), corpus, 3, engine.name)
        assert "not a file of the corpus" in str(info.value) and len(str(info.value)) < 500
        assert "(3,000,002 characters)" in str(info.value)
    finally:
        engine.close()


def test_spans_on_the_wire_become_hit_spans(engines, corpus_dir: Path, tmp_path: Path) -> None:
    from ctxgauge.engines import checked_hits

    corpus = Corpus.from_directory(corpus_dir)
    engine = engines("--spans=2-2;1-1")
    engine.build(corpus, tmp_path / "out")
    hits = engine.query(tmp_path / "out", "alpha", 10)
    # The engine's order of spans is kept (2-2 before 1-1), and JSON writes them as [s, e] pairs.
    assert hits == [Hit("src/alpha.py", 3.0, ((2, 2), (1, 1))), Hit("README.md", 2.0, ((2, 2), (1, 1)))]
    assert hits[0].to_dict() == {"path": "src/alpha.py", "score": 3.0, "spans": [[2, 2], [1, 1]]}
    # src/alpha.py has 2 lines, README.md has 1 (a final line with \n): line 2 of README.md is past its end.
    with pytest.raises(EngineError, match=r"span-range: span 0 \(2-2\) ends past the file's 1 lines"):
        checked_hits(hits, corpus, 10, engine.name)
    assert checked_hits(hits[:1], corpus, 10, engine.name) == hits[:1]


@pytest.mark.parametrize(("spans", "rule"), [
    ("1-2;2-2", "span-overlap"),
    ("2-1", "span-order"),
    ("0-1", "span-start"),
    (";".join(["1-1"] * 51), "span-count"),
])
def test_span_breaches_fail_with_the_rule_named(engines, corpus_dir: Path, tmp_path: Path, spans: str,
                                                rule: str) -> None:
    engine = engines(f"--spans={spans}")
    engine.build(Corpus.from_directory(corpus_dir), tmp_path / "out")
    with pytest.raises(EngineError, match=rf"hit 0 \(src/alpha.py\): {rule}: "):
        engine.query(tmp_path / "out", "alpha", 5)


def test_a_file_only_hit_writes_what_it_always_wrote() -> None:
    assert Hit("a.py", 1.0).to_dict() == {"path": "a.py", "score": 1.0}
    assert Hit("a.py", 1.0) == Hit("a.py", 1.0, ())
