"""A bug's one line and its log file (`ctxgauge.cli._crash`), including a bug hit before the command app
exists: an exception while importing it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_an_app_that_fails_to_import_exits_70_with_the_crash_line(tmp_path):
    # What an incompatible upgrade under ctxgauge does (typer against a click that dropped a name it
    # imports): the exception is raised while `main` imports the app, before any command-level guard.
    shadow = tmp_path / "shadow" / "typer"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"cannot import name '_split_opt' from 'click.parser'\")\n")
    logs = tmp_path / "tmp"
    logs.mkdir()
    path = os.pathsep.join([str(shadow.parent), *filter(None, [os.environ.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, "-m", "ctxgauge", "engines"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": path, "TMPDIR": str(logs)})
    assert done.returncode == 70, done.stderr  # was 1, with the traceback on the terminal
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error: internal error: ImportError: cannot import name '_split_opt'")
    (log,) = logs.glob("ctxgauge-crash-*.log")
    assert f"the traceback is in {log}" in lines[0]
    text = log.read_text(encoding="utf-8")
    assert text.startswith("ctxgauge ") and "Traceback" in text and "ctxgauge/cli/_app.py" in text


def test_a_crash_before_the_app_with_no_writable_log_prints_its_traceback(tmp_path, monkeypatch, capsys):
    import tempfile

    import pytest

    from ctxgauge.cli._crash import crash_before_app

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    try:
        raise ImportError("broken")
    except ImportError as exc:
        with pytest.raises(SystemExit) as exit_:
            crash_before_app(exc)
    assert exit_.value.code == 70
    err = capsys.readouterr().err
    assert "Traceback" in err and "ImportError: broken" in err
    assert err.strip().splitlines()[-1] == ("error: internal error: ImportError: broken (a bug in ctxgauge; the "
                                            "traceback is above; please report it)")


def test_writing_a_crash_log_keeps_the_newest_twenty(tmp_path, monkeypatch):
    # A bug hit in a loop (a script, a retrying scheduler) must not fill the temporary directory.
    import tempfile

    from ctxgauge.cli._crash import KEEP_LOGS, crash_line

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    old = []
    for i in range(KEEP_LOGS + 5):  # the oldest first; the last one 'from the future' (a clock set back since)
        log = tmp_path / f"ctxgauge-crash-old{i:02d}.log"
        log.write_text("old\n")
        os.utime(log, ns=(1_000_000_000 * (i + 1),) * 2 if i < KEEP_LOGS + 4 else (4_000_000_000_000_000_000,) * 2)
        old.append(log.name)
    (tmp_path / "other.log").write_text("not ours\n")
    line, unwritten = crash_line(RuntimeError("boom"))
    assert unwritten is None
    left = sorted(p.name for p in tmp_path.glob("ctxgauge-crash-*.log"))
    (new,) = [name for name in left if name not in old]
    assert new in line and len(left) == KEEP_LOGS == 20
    # The new log and the 19 newest others stay: the 'future' one and old06..old23; old00..old05 are gone.
    assert sorted(set(left) - {new}) == sorted(old[-(KEEP_LOGS - 1):])
    assert (tmp_path / "other.log").exists()
