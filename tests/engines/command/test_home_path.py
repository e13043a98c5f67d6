"""A command engine named by a path in the user's home directory (issue 39, item 9): the run used to
record the absolute path (the engine's name, the fingerprint's `adapter`) and only `export` refused it.
Now the spec is recorded with `~` everywhere, one note on stderr says so, the program still runs, and the
run exports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ctxgauge.engines import get_engine


def test_spec_written_with_tilde_and_argv_expanded(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home" / "alice"
    monkeypatch.setenv("HOME", str(home))
    engine = get_engine(f'command(cmd="{sys.executable} {home}/eng/engine.py --config={home}/cfg.json '
                        f'--keep={tmp_path}/home/alicex")')
    assert f"{home}/" not in engine.name
    assert "~/eng/engine.py" in engine.name and "--config=~/cfg.json" in engine.name
    assert f"{tmp_path}/home/alicex" in engine.name  # another directory that merely starts with the home's name
    assert engine.argv == [sys.executable, f"{home}/eng/engine.py", f"--config={home}/cfg.json",
                           f"--keep={tmp_path}/home/alicex"]
    again = get_engine(engine.name)  # the recorded spec parses back into the same engine
    assert again.name == engine.name and again.argv == engine.argv
    err = capsys.readouterr().err
    assert err.count("recorded as ~") == 1 and "home directory" in err


def test_a_spec_without_the_home_is_unchanged_and_silent(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    engine = get_engine(f'command(cmd="{sys.executable} /opt/engine.py")')
    assert engine.name == f'command(cmd="{sys.executable} /opt/engine.py")'
    assert capsys.readouterr().err == ""


def test_determinism_run_records_tilde_and_exports(tmp_path, script_engine):
    home = tmp_path / "home" / "alice"
    (home / "engines").mkdir(parents=True)
    script = home / "engines" / "engine.py"
    script.write_text(script_engine.path.read_text())
    src = tmp_path / "src"
    src.mkdir()
    (src / "loans.py").write_text("def overdue_fee(): pass\n")
    (src / "members.py").write_text("class Member: pass\n")
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps(["overdue fee", "member class"]))
    env = {**os.environ, "HOME": str(home)}
    spec = f'command(cmd="{sys.executable} {script}")'
    runs = tmp_path / "runs"
    run = subprocess.run([sys.executable, "-m", "ctxgauge", "determinism", str(src), "--engine", spec,
                          "--queries", str(queries), "--families", "rebuild,query", "--rebuilds", "2",
                          "--trials", "2", "--out", str(runs / "det"), "--fingerprint-dir", str(tmp_path / "fp")],
                         capture_output=True, text=True, env=env)
    assert run.returncode in (0, 1), run.stderr
    assert "recorded as ~" in run.stderr
    fingerprints = list((runs / "det").rglob("*.fingerprint.json"))
    assert fingerprints
    for fp in fingerprints:
        assert json.loads(fp.read_text())["adapter"] == f'command(cmd="{sys.executable} ~/engines/engine.py")'
    for path in [p for p in (runs / "det").rglob("*") if p.is_file()]:
        assert str(home) not in path.read_text(errors="replace"), path
    out = subprocess.run([sys.executable, "-m", "ctxgauge", "export", str(runs), "--out", str(tmp_path / "pub")],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
