"""The command line as a user meets it: real subprocesses, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def ctxgauge(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ctxgauge", *args], capture_output=True, text=True, cwd=cwd)


def test_version_prints_the_version_and_exits_0():
    import ctxgauge as package

    r = ctxgauge("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == package.__version__


def test_an_empty_or_binary_only_corpus_says_nothing_was_indexed(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "binary").mkdir()
    (tmp_path / "binary" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    for name, detail in (("empty", "nothing to index: no text file;"), ("binary", "(skipped: 1 binary)")):
        for args in (["query", str(tmp_path / name), "logo"],
                     ["determinism", str(tmp_path / name), "--engine", "grep", "--out", str(tmp_path / f"d-{name}")]):
            r = ctxgauge(*args)
            assert r.returncode == 2, (args, r.stdout, r.stderr)
            assert "nothing to index" in r.stderr and detail in r.stderr
            assert len(r.stderr.strip().splitlines()) == 1
        assert not (tmp_path / f"d-{name}").exists()


def test_help_does_not_import_heavy_libraries():
    code = "import sys, ctxgauge.cli._app; print(sorted(m for m in ('torch', 'bm25s', 'sentence_transformers', 'tree_sitter', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    r = ctxgauge("--help")
    assert r.returncode == 0 and "query" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["query", "/no/such/dir", "x"], "no such file or directory"),
    (["query", ".", "x", "--engine", "nope"], "unknown engine 'nope'"),
    (["query", ".", "x", "--engine", "bm25(k1="], "bad engine spec"),
    (["query", "{plain}", "x", "--rev", "HEAD"], "--rev needs a git repository"),
    (["query", "{plain}", "x", "--engine", "bm25(k1=abc)"], "k1 must be a number"),
    (["query", ".", "x", "-k", "0"], "-k must be at least 1 (how many files to return), got 0"),
    (["query", "{plain}", " "], "the request text is empty"),
    (["query", "{plain}", "x", "--engine", "bm25(k1=-5)"], "k1 is out of range"),
    (["query", "{plain}", "x", "--engine", "bm25(kl=1)"], "has no parameter 'kl' (parameters: b: number"),
    # Usage errors, caught by the command parser: the same one line (Typer's own was a usage line, a hint
    # and a boxed message), naming the command's help.
    (["--bogus"], "error: No such option: --bogus; see 'python -m ctxgauge --help'"),
    (["nosuch"], "error: No such command 'nosuch'; see 'python -m ctxgauge --help'"),
    (["engines", "extra"], "unexpected extra argument(s) (extra); see 'python -m ctxgauge engines --help'"),
    (["query", "{plain}"], "error: Missing argument 'text'; see 'python -m ctxgauge query --help'"),
    (["determinism", "{plain}", "--query-count", "0"], "Invalid value for '--query-count'"),
    (["determinism", "{plain}", "-k", "x"], "Invalid value for '-k'"),
    # Out of range is refused even when the family it counts for is not run (it was accepted, and recorded).
    (["determinism", "{plain}", "--rebuilds", "0", "--families", "query"], "--rebuilds must be at least 2"),
    (["determinism", "{plain}", "--trials", "1", "--families", "rebuild"], "--trials must be at least 2"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    (tmp_path / "plain").mkdir()
    args = [a.replace("{plain}", str(tmp_path / "plain")) for a in args]
    r = ctxgauge(*args, cwd=tmp_path)
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_query_json_shape(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "loans.py").write_text("def overdue_fee(): pass\n")
    (tmp_path / "c" / "other.py").write_text("x = 1\n")
    r = ctxgauge("query", str(tmp_path / "c"), "overdue fee", "--engine", "bm25", "-k", "5", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["hits"][0]["path"] == "loans.py"
    assert set(out) >= {"engine", "identity", "corpus", "hits", "k", "request"}
    assert out["corpus"]["files"] == 2


def test_a_parameter_at_its_default_is_the_same_system_on_the_command_line(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "loans.py").write_text("def overdue_fee(): pass\n")
    plain, explicit = (json.loads(ctxgauge("query", str(tmp_path / "c"), "fee", "--engine", spec, "--json").stdout)
                       for spec in ("bm25", "bm25(k1=1.2,method=lucene)"))
    assert plain["engine"] == explicit["engine"] == "bm25"
    assert plain["identity"] == explicit["identity"]


def test_engines_json_lists_every_builtin():
    r = ctxgauge("engines", "--json")
    assert r.returncode == 0, r.stderr
    names = [e["name"] for e in json.loads(r.stdout)["engines"]]
    assert names[:6] == ["grep", "bm25", "minilm", "graph", "hybrid", "command"]


def test_export_prints_the_manifest_hash_on_one_line_at_any_width(all_runs, tmp_path):
    # Rich wrapped it at the terminal's width: a hash split over two lines cannot be copied or grepped.
    import os
    import re

    r = subprocess.run([sys.executable, "-m", "ctxgauge", "export", str(all_runs), "--out", str(tmp_path / "pub")],
                       capture_output=True, text=True, env={**os.environ, "COLUMNS": "40"})
    assert r.returncode == 0, r.stderr
    assert re.search(r"^manifest\.json sha256 [0-9a-f]{64}$", r.stdout, re.M), r.stdout


def test_every_command_s_help_has_each_paragraph_on_one_line():
    # Typer keeps a docstring's line breaks in the commands panel of `--help` (and in later paragraphs):
    # a docstring wrapped over source lines showed as ragged half-lines ("print the run's" / "report (as").
    import typer.main

    from ctxgauge.cli import app

    def walk(command, path):
        for name in sorted(command.list_commands(None) if hasattr(command, "commands") else []):
            yield from walk(command.get_command(None, name), f"{path} {name}")
        yield path, command

    ragged = [path for path, command in walk(typer.main.get_command(app), "ctxgauge")
              if any("\n" in p for p in (command.help or "").strip().split("\n\n"))]
    assert ragged == []


def test_the_interrupt_line_prints_the_command_that_resumes():
    from ctxgauge.cli import resume_command

    # A run in a generated folder: --out is added; arguments with spaces are quoted for a shell.
    assert resume_command(["replay", "my repo", "--engine", "bm25(k1=1.2)"], "ctxgauge-runs/replay-x") == \
        "ctxgauge replay 'my repo' --engine 'bm25(k1=1.2)' --out ctxgauge-runs/replay-x --resume"
    assert resume_command(["--no-cache", "cases", "c.yaml", "--out=r"], "r") == "ctxgauge --no-cache cases c.yaml --out=r --resume"
    assert resume_command(["qa", "run", "b", "--out", "r", "--resume"], "r") == "ctxgauge qa run b --out r --resume"
