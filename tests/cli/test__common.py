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


def _broken_engines(monkeypatch):
    import ctxgauge.engines

    def broken():
        raise RuntimeError("bug\nsecond line")

    monkeypatch.setattr(ctxgauge.engines, "describe_engines", broken)


def test_a_bug_in_any_command_exits_70_with_its_traceback_in_a_named_log(tmp_path, monkeypatch):
    # Python's own exit for an uncaught exception is 1 with a traceback: it would read as a failed gate.
    import tempfile

    from typer.testing import CliRunner

    from ctxgauge.cli import app

    _broken_engines(monkeypatch)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = CliRunner().invoke(app, ["engines"])
    assert result.exit_code == 70
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "internal error: RuntimeError: bug\\nsecond line" in lines[0]
    logs = list(tmp_path.glob("ctxgauge-crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in lines[0]
    text = logs[0].read_text(encoding="utf-8")
    assert "Traceback" in text and "RuntimeError: bug" in text and "describe_engines" in text


def test_a_bug_with_no_writable_log_prints_its_traceback(tmp_path, monkeypatch):
    import tempfile

    from typer.testing import CliRunner

    from ctxgauge.cli import app

    _broken_engines(monkeypatch)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    result = CliRunner().invoke(app, ["engines"])
    assert result.exit_code == 70
    assert "Traceback" in result.stderr and result.stderr.strip().splitlines()[-1].startswith("error: internal error")
    assert "the traceback is above" in result.stderr


def test_user_errors_and_usage_errors_keep_exit_2(tmp_path):
    from typer.testing import CliRunner

    from ctxgauge.cli import app
    from ctxgauge.errors import UserError

    result = CliRunner().invoke(app, ["query", str(tmp_path / "missing"), "x", "-e", "grep"])
    assert isinstance(result.exception, UserError)  # main() prints it as one line, exit 2
    assert CliRunner().invoke(app, ["engines", "extra"]).exit_code == 2
