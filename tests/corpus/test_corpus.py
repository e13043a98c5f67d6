from __future__ import annotations

import os
import subprocess

import pytest

from ctxgauge.corpus import Change, Corpus, open_corpus
from ctxgauge.errors import UserError
from ctxgauge.git import Repo


def _tree(root, files):
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


FILES = {
    "b.py": b"import a\n",
    "a.py": b"def f():\n    return 1\n",
    "B.md": b"# upper case sorts first by bytes\n",
    "pkg/z.ts": b"export const z = 1;\n",
    "pkg/é.txt": b"accent",
    "package-lock.json": b'{"lockfileVersion": 3}\n',
}


def test_directory_and_git_give_the_same_files_and_hash(repo_builder, tmp_path):
    d = tmp_path / "plain"
    _tree(d, FILES)
    b = repo_builder()
    b.commit("all", {k: v for k, v in FILES.items()})
    dc = Corpus.from_directory(d)
    gc = open_corpus(b.path)
    assert dc.paths == gc.paths
    assert [f.blob for f in dc.files] == [f.blob for f in gc.files]
    assert dc.content_hash() == gc.content_hash()
    assert dc.paths == ["B.md", "a.py", "b.py", "package-lock.json", "pkg/z.ts", "pkg/é.txt"]
    assert gc.text("a.py") == "def f():\n    return 1\n"


def test_filters_are_counted_by_reason(tmp_path):
    d = tmp_path / "c"
    _tree(d, {"ok.py": b"x", "logo.png": b"\x89PNG\x00\x00", "big.txt": b"a" * 2000, ".git/config": b"x"})
    os.symlink("/etc/passwd", d / "escape")
    os.symlink(str(tmp_path), d / "dirlink")
    c = Corpus.from_directory(d, max_bytes=1000)
    assert c.paths == ["ok.py"]
    assert c.summary()["skipped"] == {"binary": 1, "git-dir": 1, "symlink": 2, "too-large": 1}


def test_git_filters_symlinks_binary_and_large(repo_builder):
    b = repo_builder()
    b.path.mkdir(exist_ok=True)
    os.symlink("/etc/passwd", b.path / "link")
    subprocess.run(["git", "add", "link"], cwd=b.path, check=True)
    head = b.commit("files", {"a.txt": "a", "bin": b"\x00\x01", "big": "x" * 3000})
    c = Corpus.from_git(Repo(b.path), head, max_bytes=2000)
    assert c.paths == ["a.txt"]
    assert c.summary()["skipped"] == {"binary": 1, "symlink": 1, "too-large": 1}


def _literal(repo, kind: str, body: bytes) -> str:
    return subprocess.run(["git", "hash-object", "-t", kind, "--literally", "-w", "--stdin"], cwd=repo, input=body,
                          capture_output=True, check=True).stdout.decode().strip()


def test_a_tree_listing_a_path_twice_or_as_file_and_folder_skips_every_copy(repo_builder, tmp_path):
    # Found by `make fuzz` (corpus-git): a tree naming ' ' twice made materialize raise FileExistsError; a
    # name holding '/' repeats a nested path, or makes `a` both a file and a folder.
    b = repo_builder()
    b.commit("start", {"ok.py": "fine\n"})
    one, two = (_literal(b.path, "blob", t) for t in (b"one\n", b"two\n"))

    def entry(mode: bytes, name: bytes, oid: str) -> bytes:
        return mode + b" " + name + b"\0" + bytes.fromhex(oid)

    sub = _literal(b.path, "tree", entry(b"100644", b"b", one))
    top = _literal(b.path, "tree", entry(b"100644", b"dup.py", one) + entry(b"100644", b"dup.py", two)
                   + entry(b"100644", b"a", one) + entry(b"100644", b"a/b", two) + entry(b"40000", b"c", sub)
                   + entry(b"100644", b"c/b", two) + entry(b"100644", b"ok.py", one))
    commit = subprocess.run(["git", "commit-tree", "-m", "crafted", top], cwd=b.path, capture_output=True,
                            check=True, text=True).stdout.strip()
    with Repo(b.path) as repo:
        corpus = Corpus.from_git(repo, commit)
        assert corpus.paths == ["ok.py"]
        assert corpus.skipped["unsafe-name"] == ["a", "a/b", "c/b", "c/b", "dup.py", "dup.py"]
        # a corpus moved to and from such a tree by `at` is the one listing the whole tree gives
        start = Corpus.from_git(repo, "HEAD")
        _same(start.at(commit), corpus)
        _same(start.at(commit).at(start.rev), start)
        corpus.materialize(tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").rglob("*")) == ["ok.py"]


def test_materialize_refuses_a_file_and_a_folder_of_one_name(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a").write_text("file\n")
    corpus = Corpus.from_directory(tmp_path / "src").overlay({"a/b": b"under a file\n"})
    with pytest.raises(UserError, match=r"corpus path 'a/b' clashes with another path"):
        corpus.materialize(tmp_path / "out")


def test_history_stops_at_the_revision(repo_builder):
    b = repo_builder()
    first = b.commit("one", {"a": "1"})
    b.commit("two", {"a": "2"})
    c = open_corpus(b.path, rev=first)
    assert [x.subject for x in c.history.commits()] == ["one"]
    assert c.text("a") == "1"


def test_overlay_adds_without_touching_the_source(tmp_path):
    d = tmp_path / "c"
    _tree(d, {"a.py": b"a"})
    c = Corpus.from_directory(d)
    o = c.overlay({"noise/n.txt": b"noise"})
    assert o.paths == ["a.py", "noise/n.txt"]
    assert o.read("noise/n.txt") == b"noise" and o.read("a.py") == b"a"
    assert not (d / "noise").exists()
    assert o.content_hash() != c.content_hash()


def test_changes_between_corpora(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _tree(a, {"keep": b"k", "mod": b"1", "gone": b"g"})
    _tree(b, {"keep": b"k", "mod": b"2", "new": b"n"})
    ca, cb = Corpus.from_directory(a), Corpus.from_directory(b)
    ch = ca.changes_to(cb)
    assert [(c.status, c.path) for c in ch] == [("deleted", "gone"), ("modified", "mod"), ("added", "new")]
    assert ch[1] == Change("modified", "mod", old_blob=ca.get("mod").blob, new_blob=cb.get("mod").blob)


def test_open_corpus_errors(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        open_corpus(tmp_path / "missing")
    (tmp_path / "d").mkdir()
    with pytest.raises(UserError, match="--rev needs a git repository"):
        open_corpus(tmp_path / "d", rev="HEAD")


def test_one_repository_name_for_every_suite(repo_builder, tmp_path):
    """query and determinism (the corpus) and replay (its record) name a repository with one function: a mirror's
    `.../owner+name/repo` was "repo" in one and "owner+name" in the other."""
    import subprocess

    from ctxgauge.corpus import Corpus, repo_name
    from ctxgauge.git import Repo

    src = repo_builder("proj")
    src.commit("Start", {"a.py": "x = 1\n"})
    for where in ("owner+name/repo", "flask.git"):
        subprocess.run(["git", "clone", "-q", "--bare", str(src.path), str(tmp_path / where)], check=True)
    expect = {"owner+name/repo": "owner+name", "flask.git": "flask", "proj/.git": "proj", "proj": "proj"}
    for where, name in expect.items():
        repo = Repo(tmp_path / where)
        try:
            assert repo_name(repo) == name
            assert Corpus.from_git(repo, "HEAD").name == name
        finally:
            repo.close()


@pytest.mark.parametrize("kind", ["directory", "git"])
def test_a_held_corpus_reads_its_source_once(repo_builder, tmp_path, kind):
    d = tmp_path / "plain"
    _tree(d, FILES)
    if kind == "git":
        b = repo_builder()
        b.commit("all", dict(FILES))
        source = b.path
    else:
        source = d
    plain = open_corpus(source)
    held = plain.held()
    assert (held.paths, held.content_hash(), held.kind, held.rev) == (plain.paths, plain.content_hash(), plain.kind,
                                                                      plain.rev)
    expected = {f.path: data for f, data in plain.iter_bytes()}
    if kind == "git":
        plain._reader.repo.close()
        for obj in (source / ".git" / "objects").rglob("*"):
            if obj.is_file():
                obj.unlink()  # no object left to read (loose objects are opened per read): only memory answers
    else:
        for p in list(d.rglob("*")):
            if p.is_file():
                p.unlink()
    assert {f.path: data for f, data in held.iter_bytes()} == expected
    assert all(held.read(p) == data for p, data in expected.items())
    o = held.overlay({"noise/n.txt": b"noise"})
    assert o.read("noise/n.txt") == b"noise" and o.read("a.py") == expected["a.py"]


def test_a_corpus_larger_than_the_hold_limit_is_read_from_its_source(tmp_path, monkeypatch):
    import ctxgauge.corpus._corpus as corpora

    d = tmp_path / "c"
    _tree(d, FILES)
    monkeypatch.setattr(corpora, "HOLD_LIMIT", sum(len(v) for v in FILES.values()) - 1)
    held = open_corpus(d).held()
    (d / "a.py").write_bytes(b"changed on disk")
    assert held.read("a.py") == b"changed on disk"  # not held: memory is bounded
    monkeypatch.setattr(corpora, "HOLD_LIMIT", sum(len(v) for v in FILES.values()))
    held = open_corpus(d).held()
    (d / "a.py").write_bytes(b"changed again")
    assert held.read("a.py") == b"changed on disk"

def _random_history(path, seed: int, commits: int = 25) -> list[str]:
    """A repository made with `git fast-import` whose commits add, modify, delete and retype files at
    random: text, binary, too large, symbolic links, executables, submodules, unsafe names, and a file
    that becomes a directory. Returns the commit ids, oldest first."""
    import random

    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    names = [f"d{i % 3}/f{i}.py" for i in range(12)] + ["top.md", "x", "x/inner.py", "back\\slash.py", "ctl\x01.txt", "é.txt"]
    kinds = ["text"] * 6 + ["binary", "large", "link", "exec", "sub"]
    live: dict[str, str] = {}
    out, date = [], 1_700_000_000
    for c in range(commits):
        date += 60
        ops = []
        for _ in range(rng.randint(1, 4)):
            name = rng.choice(names)
            if name in live and rng.random() < 0.3:
                ops.append(f"D {name}")
                del live[name]
                continue
            for other in {"x": ["x/inner.py"], "x/inner.py": ["x"]}.get(name, []):
                if other in live:  # the file x becomes the directory x, and back
                    ops.append(f"D {other}")
                    del live[other]
            kind = rng.choice(kinds)
            data = {"text": f"def f{rng.randint(0, 5)}():\n    return {rng.randint(0, 3)}\n".encode(),
                    "binary": b"\x00\x01" + bytes([rng.randint(0, 255)]), "large": b"y" * 3000,
                    "link": b"../target", "exec": f"#!/bin/sh\necho {rng.randint(0, 3)}\n".encode(),
                    "sub": b""}[kind]
            if kind == "sub":
                ops.append(f"M 160000 {'%040x' % rng.getrandbits(160)} {name}")
            else:
                mode = {"link": "120000", "exec": "100755"}.get(kind, "100644")
                ops.append(f"M {mode} inline {name}\ndata {len(data)}\n" + data.decode("latin-1"))
            live[name] = kind
        msg = f"commit {c}"
        body = "".join(op + "\n" for op in ops)
        out.append(f"commit refs/heads/main\ncommitter A <a@example.org> {date} +0000\ndata {len(msg)}\n{msg}\n"
                   + body)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input="".join(out).encode("latin-1"), check=True,
                   env=env)
    return subprocess.run(["git", "rev-list", "--reverse", "main"], cwd=path, capture_output=True, text=True,
                          check=True).stdout.split()


def _same(a: Corpus, b: Corpus) -> None:
    assert a.files == b.files
    assert a.skipped == b.skipped and list(a.skipped) == list(b.skipped)
    assert a.summary() == b.summary()
    assert a.rev == b.rev and a.name == b.name
    assert [a.read(p) for p in a.paths] == [b.read(p) for p in b.paths]


@pytest.mark.parametrize("seed", range(3))
def test_a_corpus_moved_to_another_commit_equals_a_fresh_listing(tmp_path, seed):
    # `at` lists only what the tree diff names; over random histories, forwards, backwards and in jumps,
    # it must give exactly what listing the whole tree gives, and changes_to exactly the path comparison.
    import random

    revs = _random_history(tmp_path / "r", seed)
    rng = random.Random(seed)
    order = revs + rng.sample(revs, 12) + revs[::-3]
    with Repo(tmp_path / "r") as repo:
        binary: dict[str, bool] = {}
        moved = Corpus.from_git(repo, order[0], max_bytes=2000, binary_cache=binary)
        kinds = set()
        for i, rev in enumerate(order[1:]):
            fresh = Corpus.from_git(repo, rev, max_bytes=2000)
            nxt = moved.at(rev, binary_cache=binary, known_commit=i % 2 == 0)  # as replay calls it, and as cases do
            _same(nxt, fresh)
            assert moved.changes_to(nxt) == moved.changes_to(fresh)
            kinds |= {c.status for c in moved.changes_to(nxt)} | set(nxt.skipped)
            moved = nxt
    # the histories exercised every kind of change and of filtered file
    if seed == 0:
        assert {"added", "modified", "deleted", "binary", "too-large", "symlink", "submodule",
                "unsafe-name"} <= kinds, kinds


def test_at_refuses_a_corpus_that_is_not_a_git_tree(tmp_path):
    _tree(tmp_path / "c", {"a.py": b"x"})
    with pytest.raises(ValueError):
        Corpus.from_directory(tmp_path / "c").at("HEAD")


def test_a_blob_new_at_a_commit_is_read_once_to_sniff_and_index(repo_builder):
    # Corpus.at reads each new blob whole to tell text from binary; the engine then reads the same bytes
    # from memory, not from git again. Binary blobs are not kept; the next listing drops what it kept.
    b = repo_builder()
    first = b.commit("one", {"a.py": "alpha\n", "b.py": "beta\n"})
    second = b.commit("two", {"a.py": "alpha two\n", "c.py": "gamma\n", "d.bin": b"\x00\x01"})
    third = b.commit("three", {"e.py": "delta\n"})
    repo = Repo(b.path)
    try:
        base = Corpus.from_git(repo, first)
        assert {f.path: d for f, d in base.iter_bytes()} == {"a.py": b"alpha\n", "b.py": b"beta\n"}
        asked: list[str] = []
        real = repo.read_blobs
        repo.read_blobs = lambda oids: (asked.extend(oids := list(oids)), real(oids))[1]
        moved = base.at(second)
        new = [moved.get("a.py"), moved.get("c.py")]
        assert len(asked) == 3 and {f.blob for f in new} < set(asked)  # the two new texts and the binary
        asked.clear()
        assert [d for _, d in moved.iter_bytes(new)] == [b"alpha two\n", b"gamma\n"]
        assert moved.read("c.py") == b"gamma\n" and asked == []  # from the sniffed bytes
        assert moved._reader.sniffed.keys() == {f.blob for f in new}  # the binary blob is not kept
        later = moved.at(third)
        assert moved._reader.sniffed.keys() == {later.get("e.py").blob}  # the reader is shared, replaced
        asked.clear()
        assert [d for _, d in moved.iter_bytes(new)] == [b"alpha two\n", b"gamma\n"] and len(asked) == 2
    finally:
        repo.close()
