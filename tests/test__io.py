"""The one rule for names that become paths, and the writers that use it (corpus materialisation)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ctxgauge._io import safe_file_names, safe_join, safe_relpath, unsafe_name_reason
from ctxgauge.corpora import Corpus
from ctxgauge.errors import UserError
from ctxgauge.git import Repo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import RepoBuilder, git  # noqa: E402

UNSAFE = ["", ".", "..", ".git", ".GIT", ".Git", "a\\b", "a\x00b", "a\nb", "a\rb", "a\x1fb", "a\x7fb",
          "bad\udcffbytes"]
SAFE = ["a", "a.py", "...", ".github", ".gitignore", "git", "ünïcode", "a b", "x..y", "[x]"]


@pytest.mark.parametrize("name", UNSAFE)
def test_unsafe_names_are_named(name):
    assert unsafe_name_reason(name)
    with pytest.raises(UserError, match="refused"):
        safe_relpath(f"ok/{name}/ok" if name else "ok//ok")


@pytest.mark.parametrize("name", SAFE)
def test_safe_names_pass(name):
    assert unsafe_name_reason(name) is None
    assert safe_join("/root", f"d/{name}") == Path("/root/d", name)


def test_a_slash_is_a_separator_in_paths_but_not_in_names():
    assert unsafe_name_reason("a/b")
    assert safe_relpath("a/b") == "a/b"


def test_absolute_path_is_refused():
    with pytest.raises(UserError, match="absolute"):
        safe_relpath("/etc/passwd")


def test_made_safe_names_never_collide():
    names = safe_file_names(["q1", "../../x", ".git", "a/b", "ok.v2@x"], "question id")
    assert names == {"q1": "q1", "../../x": "_._.._x", ".git": "_git", "a/b": "a_b", "ok.v2@x": "ok.v2@x"}
    assert all(unsafe_name_reason(v) is None for v in names.values())
    with pytest.raises(UserError, match=r"question ids 'a/b' and 'a_b' both become the file name 'a_b'"):
        safe_file_names(["a/b", "a_b"], "question id")
    with pytest.raises(UserError, match="both become"):
        safe_file_names(["Q1", "q1"], "case id")  # one file on a case-insensitive file system


def crafted_tree(tmp_path: Path) -> Path:
    """A repository whose tree holds entries git's own checkout refuses: `..`, `.git`, `.GIT`."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("start", {"ok.py": "fine = 1\n"})
    repo = b.path
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=b"planted\n",
                          capture_output=True, check=True).stdout.decode().strip()

    def mktree(entries: str) -> str:
        return subprocess.run(["git", "mktree"], cwd=repo, input=entries.encode(), capture_output=True,
                              check=True).stdout.decode().strip()

    inner = mktree(f"100644 blob {blob}\tpwned.txt\n")
    hooks = mktree(f"100644 blob {blob}\tpost-checkout\n")
    gitdir = mktree(f"040000 tree {hooks}\thooks\n")
    top = mktree(f"040000 tree {inner}\t..\n040000 tree {gitdir}\t.git\n040000 tree {gitdir}\t.GIT\n"
                 f"100644 blob {blob}\tback\\slash\n100644 blob {blob}\tok.py\n")
    commit = git(repo, "commit-tree", "-m", "crafted", top).strip()
    git(repo, "update-ref", "refs/heads/main", commit)
    return repo


def test_crafted_tree_entries_are_skipped_and_never_written(tmp_path):
    repo = crafted_tree(tmp_path)
    with Repo(repo) as r:
        corpus = Corpus.from_git(r, "HEAD")
        assert corpus.paths == ["ok.py"]
        assert corpus.skipped["unsafe-name"] == ["../pwned.txt", ".GIT/hooks/post-checkout", ".git/hooks/post-checkout",
                                                 "back\\slash"]
        assert corpus.summary()["skipped"]["unsafe-name"] == 4
        dest = tmp_path / "out" / "corpus"
        corpus.materialize(dest)
    assert sorted(p.name for p in dest.rglob("*")) == ["ok.py"]
    assert not (tmp_path / "out" / "pwned.txt").exists()


def test_materialise_checks_every_path_itself(tmp_path):
    (tmp_path / "empty").mkdir()
    corpus = Corpus.from_directory(tmp_path / "empty")
    hostile = corpus.overlay({"../escaped.txt": b"x"})
    with pytest.raises(UserError, match=r"corpus path '../escaped.txt' refused"):
        hostile.materialize(tmp_path / "dest")
    assert not (tmp_path / "escaped.txt").exists()


def test_command_engine_never_writes_outside_its_corpus(tmp_path):
    from ctxgauge.engines import get_engine

    repo = crafted_tree(tmp_path)
    engine_py = tmp_path / "engine.py"
    engine_py.write_text(
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    if req['op'] == 'identity':\n"
        "        print(json.dumps({'ok': True, 'identity': {'id': 'x', 'source': 'declared'}}), flush=True)\n"
        "    elif req['op'] == 'build':\n"
        "        files = sorted(os.path.relpath(os.path.join(d, f), req['corpus']) for d, _, fs in os.walk(req['corpus']) for f in fs)\n"
        "        os.makedirs(req['out'], exist_ok=True)\n"
        "        open(os.path.join(req['out'], 'files.json'), 'w').write(json.dumps(files))\n"
        "        print(json.dumps({'ok': True}), flush=True)\n"
        "    else:\n"
        "        print(json.dumps({'ok': True, 'hits': []}), flush=True)\n"
    )
    engine = get_engine(f"command(cmd='{sys.executable} {engine_py}')")
    with Repo(repo) as r:
        corpus = Corpus.from_git(r, "HEAD")
        out = tmp_path / "index"
        engine.build(corpus, out)
    import json

    assert json.loads((out / "files.json").read_text()) == ["ok.py"]
    assert not list(Path("/tmp").glob("pwned.txt")) and not list(tmp_path.rglob("pwned.txt"))
