"""The command engine's process handling (engines/command/_process.py) against real processes: programs that exit at
once, die by a signal, leave a grandchild holding their pipes, or leave the session as a daemon.

A hang is caught by running the engine in a child Python with a generous timeout: the test fails on
TimeoutExpired instead of hanging the suite. No timing is asserted beyond "it did not hang"."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.errors import EngineError, UserError

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and sessions are POSIX")
HANG = 90  # seconds: far beyond any answer here, well below "forever"


def gone(pid: int) -> bool:
    """The process no longer runs (absent, or a zombie nobody reaped: a container's init may not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def wait_gone(pid: int, seconds: float = 10) -> bool:
    end = time.monotonic() + seconds
    while not gone(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return gone(pid)


def spec_of(cmd: str, timeout: float = 60) -> str:
    return f"command(cmd={json.dumps(cmd)},timeout={timeout!r})"


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "loans.py").write_text("def overdue_fee(): pass\n")
    return Corpus.from_directory(tmp_path / "c")


def in_time(fn, *args):
    """`fn(*args)` run in a thread: its result (or its exception), AssertionError when it has not returned
    within HANG seconds, so a hang fails the test instead of blocking the suite."""
    got: list = []

    def call() -> None:
        try:
            got.append((True, fn(*args)))
        except BaseException as exc:  # handed to the test
            got.append((False, exc))

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(timeout=HANG)
    assert got, f"{getattr(fn, '__name__', fn)} hung for {HANG} s"
    ok, value = got[0]
    if not ok:
        raise value
    return value


def run_engine(spec: str, corpus_dir: Path, out: Path) -> subprocess.CompletedProcess:
    """Build, query and close the engine in a child Python; its stdout: the query's first hit."""
    code = textwrap.dedent(f"""
        from pathlib import Path
        from ctxgauge.corpus import Corpus
        from ctxgauge.engines import get_engine
        e = get_engine({spec!r})
        e.build(Corpus.from_directory(Path({str(corpus_dir)!r})), Path({str(out)!r}))
        print(e.query(Path({str(out)!r}), "overdue fee", 3)[0].path, flush=True)
        e.close()
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG)


def test_a_shell_shims_background_child_holding_stdout_does_not_hang(script_engine, tmp_path: Path,
                                                                    corpus: Corpus) -> None:
    # `sh -c 'sleep & exec engine'`: the sleep inherits stdout. Closing the engine used to wait for the
    # sleep to end (closing a buffered pipe waits for the reader thread's lock): 1000 s here.
    pid_file = tmp_path / "sleep.pid"
    shim = f"sleep 1000 & echo $! > {shlex.quote(str(pid_file))}; exec {shlex.quote(sys.executable)} " \
           f"{shlex.quote(str(script_engine.path))}"
    done = run_engine(spec_of(shlex.join(["sh", "-c", shim])), tmp_path / "c", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "loans.py"
    assert wait_gone(int(pid_file.read_text())), "the engine's process group outlived it"


def test_a_helper_the_engine_started_is_ended_with_it(script_engine, tmp_path: Path, corpus: Corpus) -> None:
    engine = get_engine(script_engine("--spawn-sleeper"))
    in_time(engine.build, corpus, tmp_path / "out")
    sleeper = int((script_engine.path.parent / "sleeper.pid").read_text())
    try:
        assert not gone(sleeper)
        in_time(engine.close)
        assert wait_gone(sleeper)
    finally:
        if not gone(sleeper):
            os.kill(sleeper, signal.SIGKILL)


def test_the_ctxgauge_query_command_ends_despite_the_grandchild(script_engine, tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "loans.py").write_text("def overdue_fee(): pass\n")
    shim = f"sleep 1000 & exec {shlex.quote(sys.executable)} {shlex.quote(str(script_engine.path))}"
    r = subprocess.run([sys.executable, "-m", "ctxgauge", "query", str(tmp_path / "c"), "overdue fee",
                        "--engine", spec_of(shlex.join(["sh", "-c", shim])), "--json"],
                       capture_output=True, text=True, timeout=HANG)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hits"][0]["path"] == "loans.py"


def test_an_exit_while_a_grandchild_holds_stdout_is_reported_as_the_exit(script_engine, tmp_path: Path,
                                                                        corpus: Corpus) -> None:
    # No end-of-file ever comes (the sleeper holds the pipe): the exit itself must be noticed, not the
    # request's timeout waited out and reported as a timeout.
    engine = get_engine(script_engine("--spawn-sleeper", "--exit-on=build", timeout=HANG / 3))
    try:
        with pytest.raises(EngineError) as info:
            in_time(engine.build, corpus, tmp_path / "out")
        assert "build: the process exited with status 4 before answering; stderr: Traceback (most recent call " \
               "last): | File engine.py | KeyError: 'index'" in str(info.value)
        assert "timed out" not in str(info.value)
        in_time(engine.close)
        assert wait_gone(int((script_engine.path.parent / "sleeper.pid").read_text()))
    finally:
        sleeper = int((script_engine.path.parent / "sleeper.pid").read_text())
        if not gone(sleeper):
            os.kill(sleeper, signal.SIGKILL)


DAEMON = """
import os, sys, time
if os.fork() == 0:          # a daemon: leaves the session (out of reach of the group kill), keeps the pipes
    os.setsid()
    if os.fork() == 0:
        with open(sys.argv[1], "w") as fh:
            fh.write(str(os.getpid()))
        time.sleep(300)
    os._exit(0)
os.wait()
sys.argv[1:] = []
exec(open(sys.argv[0].replace("daemon.py", "engine.py")).read())
"""


def test_a_daemon_that_left_the_session_does_not_hang_close(script_engine, tmp_path: Path) -> None:
    daemon = script_engine.path.parent / "daemon.py"
    daemon.write_text(DAEMON)
    pid_file = tmp_path / "daemon.pid"
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "loans.py").write_text("def overdue_fee(): pass\n")
    try:
        done = run_engine(spec_of(shlex.join([sys.executable, str(daemon), str(pid_file)])), tmp_path / "c",
                          tmp_path / "out")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "loans.py"
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_a_program_that_exits_at_once_fails_with_its_status_and_last_words(script_engine) -> None:
    engine = get_engine(script_engine("--exit-at-start"))
    with pytest.raises(EngineError) as info:
        engine.identity()
    message = str(info.value)
    assert message.endswith("identity: the process exited with status 3 before answering; "
                            "stderr: engine: no config file found")
    assert "\n" not in message
    assert engine.pid is None


def test_a_program_killed_by_a_signal_says_which(tmp_path: Path, corpus: Corpus) -> None:
    script = tmp_path / "killed.py"
    script.write_text("import os, signal, sys\nsys.stdin.readline()\nos.kill(os.getpid(), signal.SIGKILL)\n")
    engine = get_engine(spec_of(shlex.join([sys.executable, str(script)])))
    with pytest.raises(EngineError, match=r"exited with signal 9 \(SIGKILL\) before answering; nothing on stderr"):
        engine.build(corpus, tmp_path / "out")


def test_a_long_stderr_is_quoted_by_its_end_on_one_line(tmp_path: Path, corpus: Corpus) -> None:
    script = tmp_path / "chatty.py"
    script.write_text("import sys\nsys.stdin.readline()\nfor i in range(5000):\n    print('noise', i, file=sys.stderr)\n"
                      "print('ValueError: the real cause', file=sys.stderr)\nsys.exit(2)\n")
    engine = get_engine(spec_of(shlex.join([sys.executable, str(script)])))
    with pytest.raises(EngineError) as info:
        engine.build(corpus, tmp_path / "out")
    message = str(info.value)
    assert message.endswith("noise 4999 | ValueError: the real cause") and "stderr (end): …" in message
    assert "\n" not in message and len(message) < 600


def test_a_file_that_is_not_executable_is_the_users_to_mend(tmp_path: Path, corpus: Corpus) -> None:
    script = tmp_path / "engine.py"
    script.write_text("print('never run')\n")
    engine = get_engine(spec_of(str(script)))
    ok, why = engine.available()
    assert ok is False and "is not executable (chmod +x it" in why and "not found" not in why
    script.chmod(0o755)  # executable, but no #! line: the system cannot run it
    with pytest.raises(UserError, match=r"cannot start .*Exec format error"):
        engine.build(corpus, tmp_path / "out")
