"""The one-line error: user text is never read as Rich markup and never split over lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge.cli._common import plain

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import RepoBuilder  # noqa: E402


def ctxgauge(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True)


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "MarkupError" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_plain_escapes_markup_and_control_characters():
    assert plain("a[/b]") == "a\\[/b]"
    assert plain("[bold]x") == "\\[bold]x"
    assert plain("line\nbreak") == "line\\nbreak"
    assert plain(b"bad\xffname".decode("utf-8", "surrogateescape")) == "bad\\xffname"


@pytest.mark.parametrize("name", ["has[/x]close", "[bold]loud", "new\nline"])
def test_a_path_holding_markup_or_a_newline(tmp_path, name):
    line = one_line_error(ctxgauge("query", str(tmp_path / name), "anything", "-e", "grep"))
    shown = name.replace("\n", "\\n")
    assert shown in line


def test_a_revision_holding_markup(tmp_path):
    b = RepoBuilder(tmp_path / "repo")
    b.commit("one", {"a.py": "x = 1\n"})
    line = one_line_error(ctxgauge("query", str(b.path), "x", "-e", "grep", "--rev", "a[/b]"))
    assert "a[/b]" in line
