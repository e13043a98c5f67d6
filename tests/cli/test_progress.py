"""One progress protocol, `progress(done, total, label)`, and one display of it on stderr."""

from __future__ import annotations

import io
import time

from rich.console import Console

from ctxgauge.cli._progress import ProgressDisplay


def _terminal() -> Console:
    return Console(file=io.StringIO(), force_terminal=True, width=160, color_system=None)


def test_the_display_shows_items_done_rate_time_left_and_a_moving_clock():
    console = _terminal()
    with ProgressDisplay("replay", console=console) as progress:
        progress(0, 1, "building the index")
        for done, sha in enumerate(["a1", "b2", "c3"], start=1):
            time.sleep(0.05)
            progress(done, 4, sha)
        line = progress.line()
        assert line.startswith("replay c3") and "3/4" in line and "/s" in line and "left" in line
        assert "0:00:00" in line
        time.sleep(1.1)
        assert "0:00:01" in progress.line()  # the clock moves with no call (a long phase never looks stalled)
        # A phase that reached its total, then a new phase: the bar counts again, never frozen as finished.
        progress(4, 4, "d4")
        progress(1, 10, "determinism: base build")
        assert progress.line().startswith("replay determinism: base build") and "1/10" in progress.line()


def test_a_label_holding_markup_is_shown_as_typed():
    # A case id or commit subject such as `a[/b]` would raise MarkupError in the refresh; `[bold]` would vanish.
    console = _terminal()
    with ProgressDisplay("cases", console=console) as progress:
        progress(1, 2, "[bold]case a[/b]")
        assert progress.line().startswith("cases [bold]case a[/b]")


def test_nothing_is_shown_off_a_terminal():
    console = Console(file=io.StringIO(), force_terminal=False)
    with ProgressDisplay("cases", console=console) as progress:
        for done in range(1, 4):
            progress(done, 3, f"case {done}")
        assert progress.line() == ""
    assert console.file.getvalue() == ""


def test_every_suite_speaks_the_one_protocol(tmp_path):
    # determinism counts its steps itself; what it reports is (done, total, label), ending at total.
    from ctxgauge.suites.determinism import DeterminismConfig, run_determinism

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in {"fees.py": "def overdue_fee(): pass\n", "isbn.py": "def valid_isbn(): pass\n"}.items():
        (corpus / name).write_text(text)
    calls = []
    run_determinism(DeterminismConfig(source=corpus, engines=("grep",), queries=["overdue fee", "isbn"],
                                      rebuilds=2, trials=2, k=2, families=("rebuild", "query"),
                                      out=tmp_path / "run"),
                    progress=lambda done, total, label: calls.append((done, total, label)))
    assert calls and all(isinstance(d, int) and isinstance(t, int) and isinstance(s, str) for d, t, s in calls)
    dones = [d for d, _, _ in calls]
    assert dones == sorted(dones) and dones[-1] == calls[-1][1] > 0


# -- without a terminal: a line every interval, and at the end ----------------------------------------------

def _pipe() -> Console:
    return Console(file=io.StringIO(), force_terminal=False, width=80, color_system=None)


def test_without_a_terminal_a_line_every_interval_and_one_at_the_end(monkeypatch):
    monkeypatch.setenv("CTXGAUGE_PROGRESS_INTERVAL", "0.05")
    console = _pipe()
    with ProgressDisplay("replay", console=console, unit="commits") as progress:
        progress(0, 400, "building the index")
        time.sleep(0.12)
        progress(120, 400, "a1b2c3d4e5")
        time.sleep(0.12)
        assert progress.line() == ""  # no bar: nothing of Rich's is drawn into a log
    lines = console.file.getvalue().splitlines()
    assert len(lines) >= 3
    assert all(line.startswith("replay: ") for line in lines)
    import re
    assert any(re.fullmatch(r"replay: 120/400 commits, [\d.]+/s, ~\d+(s|m\d\ds) left \(a1b2c3d4e5\)", line)
               for line in lines), lines
    assert re.fullmatch(r"replay: 120/400 commits, \d+s in all \(a1b2c3d4e5\)", lines[-1]), lines[-1]


def test_without_a_terminal_a_run_shorter_than_the_interval_prints_nothing(monkeypatch):
    monkeypatch.delenv("CTXGAUGE_PROGRESS_INTERVAL", raising=False)
    console = _pipe()
    with ProgressDisplay("cases", console=console) as progress:
        progress(1, 2, "a")
        progress(2, 2, "b")
    assert console.file.getvalue() == ""


def test_replay_with_both_streams_piped_reports_progress_on_stderr_only(tmp_path, repo_builder):
    import os
    import re
    import subprocess
    import sys

    b = repo_builder("small")
    b.commit("init", {"src/loans.py": "def overdue_fee(): pass\n", "src/members.py": "class Member: pass\n"})
    b.commit("Fix overdue fee", {"src/loans.py": "def overdue_fee(): return 1\n"})
    b.commit("Add member email", {"src/members.py": "class Member:\n    email = ''\n"})
    env = {**os.environ, "CTXGAUGE_PROGRESS_INTERVAL": "0.02"}
    r = subprocess.run([sys.executable, "-m", "ctxgauge", "replay", str(b.path), "--engine", "grep", "--out",
                        str(tmp_path / "run")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert r.returncode == 0, r.stderr
    progress = [line for line in r.stderr.splitlines() if line.startswith("replay: ")]
    assert progress and re.fullmatch(r"replay: 2/2 commits, \d+s in all \(\w+\)", progress[-1]), r.stderr
    assert not any(line.startswith("replay: ") for line in r.stdout.splitlines())
    # The same env as the replay: without env=, the child inherits the C-level environment, where GNU readline
    # (imported by a pytest plugin) has put COLUMNS=80 behind os.environ's back, and the report drew at 80.
    report = subprocess.run([sys.executable, "-m", "ctxgauge", "report", str(tmp_path / "run")],
                            capture_output=True, text=True, env=env)
    assert r.stdout == report.stdout  # stdout is the report and nothing else


def test_determinism_with_both_streams_piped_counts_steps(tmp_path, repo_builder):
    """Issue 39, item 9: determinism's lines name their unit, as replay's say commits."""
    import json
    import os
    import re
    import subprocess
    import sys

    b = repo_builder("small")
    b.commit("init", {"src/loans.py": "def overdue_fee(): pass\n", "src/members.py": "class Member: pass\n"})
    (tmp_path / "q.json").write_text(json.dumps(["overdue fee"]))
    env = {**os.environ, "CTXGAUGE_PROGRESS_INTERVAL": "0.01"}
    r = subprocess.run([sys.executable, "-m", "ctxgauge", "determinism", str(b.path), "--engine", "grep",
                        "--queries", str(tmp_path / "q.json"), "--families", "rebuild,query", "--rebuilds", "2",
                        "--trials", "2", "--out", str(tmp_path / "run")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert r.returncode in (0, 1), r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("determinism: ")]
    assert lines and re.fullmatch(r"determinism: (\d+)/\1 steps, \d+s in all \(.+\)", lines[-1]), r.stderr


def test_demo_lines_name_each_phases_unit(monkeypatch):
    """The demo counts commits while it replays, steps while determinism runs, answers in qa."""
    import re

    import ctxgauge.demo
    from typer.testing import CliRunner

    from ctxgauge.cli import app

    monkeypatch.setenv("CTXGAUGE_PROGRESS_INTERVAL", "0.01")
    seen = []

    def fake(config, progress):
        import time

        for done, total, label in [(1, 4, "replay bm25 a1b2c3"), (3, 7, "determinism: bm25: rebuild 1/2"),
                                   (5, 9, "qa: context:bm25@5"), (1, 1, "report")]:
            progress(done, total, label)
            time.sleep(0.05)
        seen.append(True)
        raise SystemExit(0)

    monkeypatch.setattr(ctxgauge.demo, "run_demo", fake)
    r = CliRunner().invoke(app, ["demo", "--out", "unused"])
    assert seen
    text = r.stderr
    for pattern in (r"demo: 1/4 commits, .*\(replay bm25 a1b2c3\)", r"demo: 3/7 steps, .*\(determinism: ",
                    r"demo: 5/9 answers, .*\(qa: context:bm25@5\)"):
        assert re.search(pattern, text), (pattern, text)


def test_at_80_columns_a_long_label_gives_way_never_the_counts_or_times():
    # Seen at 80 columns: `demo determinism: minilm: drift (prose) build ━━╺━━ 118/… 6.3/s left 0:00… 0:06…`:
    # Rich squeezed the count and the clocks to fit the label. The label is what is cut, the figures never.
    console = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    with ProgressDisplay("demo", console=console) as progress:
        progress(0, 258, "determinism: minilm: drift (prose) build")
        time.sleep(0.05)
        progress(118, 258, "determinism: minilm: drift (prose) build of a long engine spec(k=1,b=2)")
        line = progress.line()
    assert "\n" not in line and len(line) <= 80
    assert "118/258" in line and "left" in line
    assert line.rstrip().endswith("0:00:00")  # the elapsed clock, whole
    assert line.startswith("demo determinism: minilm")


def test_an_engines_own_progress_is_a_second_line_of_the_bar_never_written_under_it(monkeypatch, capsys):
    # The demo's minilm replay wrote `\r\033[Kminilm: embedding: 13/177 chunks, ...` to stderr under the live
    # bar: every rewrite became a line of its own above it (some 200 in one demo).
    from ctxgauge.engines.minilm import _progress as engine_progress

    monkeypatch.setattr(engine_progress, "QUIET_SECONDS", 0.0)
    monkeypatch.setattr(engine_progress, "TTY_EVERY", 0.0)
    monkeypatch.setattr(engine_progress, "LOG_EVERY", 0.0)
    console = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    with ProgressDisplay("demo", console=console) as progress:
        progress(0, 1, "replay minilm")
        work = engine_progress.Throughput("minilm: embedding", 177)
        work.advance(13)
        during = progress.line()
        work.close()
        after = progress.line()
    assert capsys.readouterr().err == ""
    first, second = during.splitlines()
    assert first.startswith("demo replay minilm") and "0/1" in first
    assert second.startswith("demo · minilm: embedding") and "13/177" in second and len(second) <= 80
    assert "embedding" not in after and after.startswith("demo replay minilm")


def test_without_the_display_an_engines_progress_still_reaches_stderr(monkeypatch, capsys):
    from ctxgauge.engines.minilm import _progress as engine_progress

    monkeypatch.setattr(engine_progress, "QUIET_SECONDS", 0.0)
    monkeypatch.setattr(engine_progress, "LOG_EVERY", 0.0)
    monkeypatch.setattr(engine_progress, "TTY_EVERY", 0.0)
    work = engine_progress.Throughput("minilm: embedding", 10)
    work.advance(4)
    work.close()
    err = capsys.readouterr().err
    assert "minilm: embedding: 4/10 chunks" in err and "minilm: embedding: 4 chunks in" in err
