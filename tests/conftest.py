"""Shared fixtures: small real git repositories made with git itself, and the bundled sample."""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pytest

# The work cache never touches the user's own cache directory from a test: a session directory is set
# before anything runs (collection, session fixtures), and every test then gets a fresh empty one of its
# own (`_work_cache` below), so no test sees work another left behind. CLI subprocesses inherit it.
_SESSION_CACHE = tempfile.mkdtemp(prefix="ctxgauge-test-cache-")
os.environ["CTXGAUGE_CACHE"] = _SESSION_CACHE
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)  # every session left one behind in /tmp

# A test sets the terminal width it reads (CliRunner's env, a subprocess's env). The CLI's console is made at
# import, and rich fixes its width then if COLUMNS is set: a pytest-xdist worker starts with COLUMNS=80 and
# LINES=24 in its environment, so every later `COLUMNS=300` was ignored and tables wrapped at 80 columns.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


@pytest.fixture(autouse=True)
def _work_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXGAUGE_CACHE", tempfile.mkdtemp(prefix="t-", dir=_SESSION_CACHE))

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Ada Tester",
    "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_COMMITTER_NAME": "Ada Tester",
    "GIT_COMMITTER_EMAIL": "ada@example.org",
    "LC_ALL": "C",
}


def git(repo: Path, *args: str, date: int = 1_700_000_000, **env: str) -> str:
    """Run git in `repo` with a fixed identity and date, isolated from the user's configuration."""
    e = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": f"{date} +0000", "GIT_COMMITTER_DATE": f"{date} +0000", **env}
    return subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=repo,
                          env=e, check=True, capture_output=True, text=True).stdout


class RepoBuilder:
    """Builds a git repository commit by commit: `commit("subject", {"a.py": "text", "old.py": None})`
    writes (or, for None, deletes) files and commits them with a date one hour after the previous."""

    def __init__(self, path: Path):
        self.path = path
        self.date = 1_700_000_000
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "-q")

    def commit(self, subject: str, files: dict[str, str | bytes | None], *, author: str | None = None,
               renames: dict[str, str] | None = None) -> str:
        for old, new in (renames or {}).items():
            (self.path / new).parent.mkdir(parents=True, exist_ok=True)
            git(self.path, "mv", old, new)
        for rel, content in files.items():
            p = self.path / rel
            if content is None:
                git(self.path, "rm", "-q", rel)
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(content if isinstance(content, bytes) else content.encode())
            git(self.path, "add", rel)
        self.date += 3600
        env = {}
        if author:
            name, email = author.split(" <")
            env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email.rstrip(">")}
        git(self.path, "commit", "-q", "--allow-empty", "-m", subject, date=self.date, **env)
        return git(self.path, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo_builder(tmp_path: Path) -> Callable[[str], RepoBuilder]:
    return lambda name="repo": RepoBuilder(tmp_path / name)


@pytest.fixture(scope="session")
def sample_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample repository, cloned once per test session (tests only read it)."""
    from ctxgauge.sample import materialize_sample

    return materialize_sample(tmp_path_factory.mktemp("sample") / "shelfd")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The slow tier (real repositories, long runs) is opt-in: CTXGAUGE_SLOW=1 (make test-slow).
    if os.environ.get("CTXGAUGE_SLOW"):
        return
    skip = pytest.mark.skip(reason="slow tier: set CTXGAUGE_SLOW=1 (make test-slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def load_run_factory():
    """tests/report/run_factory.py as the module `run_factory` (tests are not a package): small run
    directories of every suite, written through RunDir, for report, export and store tests."""
    if "run_factory" not in sys.modules:
        path = Path(__file__).with_name("report") / "run_factory.py"
        spec = importlib.util.spec_from_file_location("run_factory", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["run_factory"] = module
        spec.loader.exec_module(module)
    return sys.modules["run_factory"]


@pytest.fixture
def factory():
    return load_run_factory()


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


@pytest.fixture
def all_runs(tmp_path: Path, factory) -> Path:
    """replay (bm25 vs grep, 6 commits, one failed), cases (one known gap), determinism (bm25 CTL 3, grep
    CTL 1 with drift, minilm skipped), qa (three arms, one skipped), and a crashed and an errored run."""
    root = tmp_path / "runs"
    factory.replay_run(root, "replay-a", [1, 2, 5, None, 1, 3], [2, 2, None, None, 1, 1], failed=[3])
    factory.replay_run(root, "cases-a", [1, None, 2, 0], [1, 1, None, 0], suite="cases", repo="cases.yaml", gaps=[1])
    factory.determinism_run(root, "det-a", {"bm25": {"level": 3, "drift": {"prose": 0.0}},
                                            "grep": {"level": 1, "drift": {"prose": 0.25}, "emr": 0.8},
                                            "minilm": {"status": "skipped", "reason": "torch not installed"}})
    factory.qa_run(root, "qa-a", {"none": ["fail", "pass", "fail", "fail"],
                                  "context:bm25@5": ["pass", "pass", "pass", "fail"],
                                  "tool:bm25": [None, None, None, None]},
                   tokens={"none": 400, "context:bm25@5": 3000}, cost={"none": 0.001, "context:bm25@5": 0.006},
                   skipped=["tool:bm25"])
    factory.unfinished_run(root, "replay-crashed")
    factory.unfinished_run(root, "nested/qa-error", suite="qa", status="error")
    return root


SCRIPT_ENGINE = r'''"""A command engine for tests (tests/conftest.py `script_engine`): ranks files by the query's words.

Misbehaviour by flag: --exit-at-start (stderr, then status 3 before reading anything), --exit-on=OP
(stderr, then status 4 on that op), --hang-on=OP[:N] (never answers the Nth request of that op, default the
first; it writes the file `hanging` beside this script first, so a test can signal the run while it is
certainly mid-way), --fail-on=WORD (ok:false to a query holding WORD), --spawn-sleeper (a child that
inherits and holds stdout and stderr for 1000 s)."""
import json, os, subprocess, sys

flags = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "") for a in sys.argv[1:])
hang_op, _, hang_at = flags.get("hang-on", "").partition(":")
seen = {}
if "spawn-sleeper" in flags:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sleeper.pid"), "w") as fh:
        fh.write(str(subprocess.Popen(["sleep", "1000"]).pid))
if "exit-at-start" in flags:
    sys.stderr.write("engine: no config file found\n")
    sys.exit(3)
for line in sys.stdin:
    req = json.loads(line)
    op = req["op"]
    if flags.get("exit-on") == op:
        sys.stderr.write("Traceback (most recent call last):\n  File engine.py\nKeyError: 'index'\n")
        sys.exit(4)
    seen[op] = seen.get(op, 0) + 1
    if hang_op == op and seen[op] == int(hang_at or 1):
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hanging"), "w") as fh:
            fh.write(op)
        sys.stdin.readline()
    if op == "identity":
        answer = {"identity": {"id": "script-engine-1", "source": "declared"}}
    elif op == "build":
        index = {}
        for root, _, files in os.walk(req["corpus"]):
            for name in files:
                path = os.path.join(root, name)
                rel = os.path.relpath(path, req["corpus"]).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as fh:
                    index[rel] = sorted(set((rel + " " + fh.read()).lower().replace("_", " ").split()))
        with open(os.path.join(req["out"], "index.json"), "w") as fh:
            json.dump(index, fh, sort_keys=True)
        answer = {"files": len(index)}
    elif op == "query" and flags.get("fail-on", "\0") in req["text"]:
        print(json.dumps({"ok": False, "error": "cannot answer that"}), flush=True)
        continue
    elif op == "query":
        with open(os.path.join(req["out"], "index.json")) as fh:
            index = json.load(fh)
        words = set(req["text"].lower().split())
        scored = sorted((-len(words & set(w)), p) for p, w in index.items() if words & set(w))
        answer = {"hits": [{"path": p, "score": float(-s)} for s, p in scored[: req["k"]]]}
    else:
        print(json.dumps({"ok": False, "error": "unsupported"}), flush=True)
        continue
    print(json.dumps({"ok": True, **answer}), flush=True)
'''


@pytest.fixture
def script_engine(tmp_path: Path) -> Callable[..., str]:
    """`script_engine(*flags, timeout=30)`: the spec of a real command engine (a Python script written in a
    directory of its own, SCRIPT_ENGINE above) misbehaving as the flags say. `script_engine.path` is the
    script; `script_engine.hanging` the file a --hang-on flag writes when it starts to hang;
    `script_engine.mend()` makes it ignore the flags, as a user fixing the engine would, so a test
    can resume with the same spec."""
    import json as _json
    import shlex as _shlex

    where = tmp_path / "script-engine"
    where.mkdir(exist_ok=True)
    path = where / "engine.py"
    path.write_text(SCRIPT_ENGINE)

    def spec(*flags: str, timeout: float = 30) -> str:
        cmd = _shlex.join([sys.executable, str(path), *flags])
        return f"command(cmd={_json.dumps(cmd)},timeout={timeout!r})"

    def mend() -> None:
        """Rewrite the script so that it ignores its flags (the user fixed the engine; its spec is unchanged)."""
        path.write_text(SCRIPT_ENGINE.replace("for a in sys.argv[1:])", "for a in [])", 1))

    spec.path = path  # type: ignore[attr-defined]
    spec.hanging = where / "hanging"  # type: ignore[attr-defined]
    spec.mend = mend  # type: ignore[attr-defined]
    return spec


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def ctrl_c_popen() -> Callable[..., subprocess.Popen]:
    """`subprocess.Popen` for a child a test will Ctrl-C (SIGINT): the child starts with SIGINT at its default,
    as a terminal starts a command. A shell without job control runs a background job (`make test &`) with
    SIGINT ignored and every child inherits that, so ctxgauge rightly kept ignoring it (as under nohup) and the
    test waited 120 s for an exit that never came."""
    def popen(args, **kwargs) -> subprocess.Popen:
        return subprocess.Popen(args, preexec_fn=_sigint_default if os.name == "posix" else None, **kwargs)

    return popen
