"""User text in terminal tables and reports is printed as typed: Rich never reads it as markup.

A real repository whose paths and commit subjects hold Rich markup (`[bold]`, `[/x]`, `a[/b]`), measured by
real runs from the shell; each command's terminal output must show the text literally (`[bold]` would
otherwise vanish, `[/x]` and `a[/b]` raise MarkupError).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import RepoBuilder  # noqa: E402

LOUD = "src/[bold]loud.py"
CLOSE = "src/has[/x]close.py"
SUBJECT = "Mend [bold]quietly a[/b] and [/x]"
LABEL = "[bold]run [red]"  # a run directory's name (no '/': that would make it two directories)


def ctxgauge(*args: str) -> subprocess.CompletedProcess:
    # A wide terminal, so no cell is folded across lines and the text can be found whole.
    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, env=env)


def shown(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stderr and "MarkupError" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def marked(tmp_path_factory) -> tuple[Path, Path, str]:
    """A repository whose paths and subjects hold markup, a replay run of it whose label does too, and what
    that replay printed."""
    root = tmp_path_factory.mktemp("markup")
    b = RepoBuilder(root / "repo")
    # Twelve decoys hold the subject's words (the expected files do not): grep misses, so the misses table
    # shows the subject and both expected paths.
    decoys = {f"src/A{i:02}.py": "mend quietly bold\n" for i in range(12)}
    b.commit("init", {LOUD: "def loud(): fee\n", CLOSE: "def close(): fee\n", "src/other.py": "fee = 1\n", **decoys})
    b.commit(SUBJECT, {LOUD: "def loud(): fee fee\n", CLOSE: "def close(): fee 2\n"})
    b.commit("Tidy other", {"src/other.py": "fee = 2\n"})
    run = root / LABEL
    return b.path, run, shown(ctxgauge("replay", str(b.path), "-e", "grep", "--out", str(run), "--misses"))


def test_replay_misses_show_subjects_and_paths_as_typed(marked):
    out = marked[2]
    for text in (SUBJECT, LOUD, CLOSE, f"Misses at 5: {LABEL} ("):  # the label in a table's title too
        assert text in out, out


def test_report_shows_the_run_label_subjects_and_paths_as_typed(marked):
    _, run, _ = marked
    out = shown(ctxgauge("report", str(run), "--misses"))
    for text in (SUBJECT, LOUD, CLOSE, f"Misses at 5: {LABEL} ("):
        assert text in out, out


def test_runs_list_and_show_print_the_run_path_as_typed(marked):
    _, run, _ = marked
    out = shown(ctxgauge("runs", "list", str(run.parent)))
    assert LABEL in out, out
    out = shown(ctxgauge("runs", "show", str(run)))
    assert LABEL in out, out


def test_query_prints_paths_as_typed(marked):
    repo, _, _ = marked
    out = shown(ctxgauge("query", str(repo), "fee loud close", "-e", "grep"))
    assert LOUD in out and CLOSE in out, out


def test_check_prints_an_engine_error_message_as_typed(tmp_path):
    # A command engine whose every build fails with a message holding markup: the check table's detail cell.
    script = tmp_path / "engine.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    if req['op'] == 'identity':\n"
        "        ans = {'ok': True, 'identity': {'id': 'x', 'source': 'declared'}}\n"
        "    else:\n"
        "        ans = {'ok': False, 'error': 'index [bold]broken[/] at a[/b]'}\n"
        "    print(json.dumps(ans), flush=True)\n")
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init", {"a.py": "x = 1\n"})
    b.commit("two", {"a.py": "x = 2\n"})
    spec = f"command(cmd={json.dumps(f'{sys.executable} {script}')})"
    proc = ctxgauge("check", spec, "--source", str(b.path))
    assert proc.returncode == 1, proc.stderr
    out = shown(proc)
    assert "index [bold]broken[/] at a[/b]" in out, out
