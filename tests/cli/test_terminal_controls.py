"""Data reaches the terminal with its control characters escaped (F12).

A real repository whose commit subject holds OSC 52 (a clipboard write), OSC 0 (the window title), `ESC[2J`
(a cleared screen), a C1 CSI and a right-to-left override, and a run directory whose name holds escapes too,
measured by a real replay from the shell: `replay --misses`, `runs show --misses`, `report --misses` and
`report` of the directory must write no raw ESC, C1 or bidi control, and must show each one escaped.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import RepoBuilder  # noqa: E402

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
OSC0 = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J"
SUBJECT = f"Mend {OSC52}loud{OSC0} close{CLEAR} \x9b31m \u202eevil"
LABEL = "run\x1b[2J\u2066x"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066")


def ctxgauge(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def clean(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    for raw in RAW:
        assert raw not in proc.stdout and raw not in proc.stderr, (raw, proc.stdout, proc.stderr)
    return proc.stdout


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("controls")
    b = RepoBuilder(root / "repo")
    decoys = {f"src/A{i:02}.py": "mend loud close evil\n" for i in range(12)}
    b.commit("init", {"src/loud.py": "def loud(): fee\n", "src/other.py": "fee = 1\n", **decoys})
    b.commit(SUBJECT, {"src/loud.py": "def loud(): fee fee\n"})
    b.commit("Tidy other", {"src/other.py": "fee = 2\n"})
    run = root / LABEL
    return run, clean(ctxgauge("replay", str(b.path), "-e", "grep", "--out", str(run), "--misses"))


def test_replay_misses_shows_the_subject_escaped(hostile):
    out = hostile[1]
    assert "\\x1b]52;c;cm0gLXJmIH4=" in out and "\\x1b]0;owned" in out and "\\x1b[2J" in out, out
    assert "\\x9b31m" in out and "\\u202eevil" in out, out


def test_runs_show_and_report_misses_escape_subject_and_run_name(hostile):
    run, _ = hostile
    for args in (("runs", "show", str(run), "--misses"), ("report", str(run), "--misses"),
                 ("report", str(run.parent)), ("runs", "list", str(run.parent))):
        out = clean(ctxgauge(*args))
        assert "run\\x1b[2J\\u2066x" in out, (args, out)
    assert "\\x1b]52;" in clean(ctxgauge("report", str(run), "--misses"))


def test_json_output_holds_no_raw_control_and_parses_back(hostile):
    run, _ = hostile
    proc = ctxgauge("runs", "show", str(run), "--misses", "--json")
    clean(proc)
    data = json.loads(proc.stdout)  # the escapes are JSON's: the data comes back as it was
    assert [m["request"] for m in data["misses"]] == [SUBJECT], data["misses"]


def test_the_console_keeps_its_own_styles_and_escapes_data():
    from ctxgauge.cli._console import SafeConsole
    from ctxgauge.cli._text import terminal_text
    from rich.markup import escape

    buf = io.StringIO()
    c = SafeConsole(file=buf, force_terminal=True, color_system="standard", width=200, highlight=False)
    c.print(f"[bold red]{escape(SUBJECT)}[/]")
    out = buf.getvalue()
    assert "\x1b[1;31m" in out  # ctxgauge's own markup still styles
    text = re.sub(r"\x1b\[[0-9;]*m", "", out)  # what is left once Rich's own styles are set aside
    assert text == terminal_text(SUBJECT.replace("\x07", "")) + "\n", text  # Rich drops BEL itself


@pytest.mark.parametrize("ch,shown", [("\x1b", "\\x1b"), ("\x00", "\\x00"), ("\t", "\\x09"), ("\r", "\\x0d"),
                                      ("\x7f", "\\x7f"), ("\x85", "\\x85"), ("\u2028", "\\u2028"),
                                      ("\u2029", "\\u2029"), ("\u202a", "\\u202a"), ("\u2069", "\\u2069"),
                                      ("\udc9b", "\\x9b")])
def test_terminal_text_escapes_each_control(ch, shown):
    from ctxgauge.cli._text import json_text, terminal_text

    assert terminal_text(f"a{ch}b\nc") == f"a{shown}b\nc"
    assert json.loads(json_text(json.dumps(f"a{ch}b", ensure_ascii=False))) == f"a{ch}b"


def test_plain_text_is_unchanged():
    from ctxgauge.cli._text import terminal_text

    assert terminal_text("héllo wörld → ✓ 日本\n") == "héllo wörld → ✓ 日本\n"
