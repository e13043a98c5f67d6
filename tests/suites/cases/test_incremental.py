"""Cases over several revisions of one repository move one index per engine by the changed files, and
every case's ranking equals a fresh build of its own corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import ctxgauge.cache as work_cache
from ctxgauge.corpus import open_corpus
from ctxgauge.engines import get_engine
from ctxgauge.engines.bm25._engine import BM25Engine
from ctxgauge.suites.cases import CasesConfig, load_cases, run_cases

BASE = {
    "src/fees.py": "def overdue_fee(days):\n    return days * RATE\n",
    "src/loans.py": "from src.fees import overdue_fee\n\ndef renew_loan(loan):\n    return loan.extend(14)\n",
    "src/members.py": "def open_account(name, email):\n    return {'name': name}\n",
    "docs/guide.md": "# Guide\nLoans, renewals and fines.\n",
}


def test_cases_across_revisions_update_one_index_and_equal_fresh_builds(repo_builder, tmp_path, monkeypatch):
    a = repo_builder("lib")
    r1 = a.commit("one", BASE)
    r2 = a.commit("two", {"src/fees.py": "def overdue_fee(days, cap):\n    return min(days * RATE, cap)\n",
                          "src/holds.py": "def place_hold(member, book):\n    return (member, book)\n"})
    r3 = a.commit("three", {"src/members.py": None, "src/accounts.py": "def open_account(email):\n    return email\n"})
    other = repo_builder("other")
    other.commit("x", {"app.py": "def overdue_fee():\n    return 0\n"})
    cases = [("c1", r1, "overdue fee", "src/fees.py"), ("o", None, "overdue fee", "app.py"),
             ("c3", r3, "open an account", "src/accounts.py"), ("c2", r2, "place a hold on a book", "src/holds.py"),
             ("c1b", r1, "renew a loan", "src/loans.py")]
    (tmp_path / "c.yaml").write_text("cases:\n" + "".join(
        f"  - {{name: {n}, query: {q}, corpus: {'lib@' + rev[:12] if rev else 'other'}, expected: [{e}]}}\n"
        for n, rev, q, e in cases))
    updates = []
    real = BM25Engine.update
    monkeypatch.setattr(BM25Engine, "update", lambda self, *a: updates.append(a[1].rev) or real(self, *a))
    result = run_cases(load_cases(tmp_path / "c.yaml"), CasesConfig(engine="bm25", vs="graph", out=tmp_path / "run"))
    # lib at r1 is built, then moved to r3 and to r2 (the order the case file names them); other is built
    assert sorted(updates) == sorted([r3, r2])
    for unit, (name, rev, query, _) in zip(result.to_dict()["cases"], cases):
        corpus = open_corpus(tmp_path / ("lib" if rev else "other"), rev)
        for spec, ranking in (("bm25", unit["ranking"]), ("graph", unit["vs"]["ranking"])):
            engine = get_engine(spec)
            out = tmp_path / f"fresh-{name}-{spec}"
            out.mkdir()
            with work_cache.disabled():
                engine.build(corpus, out)
            fresh = [h.to_dict() for h in engine.query(out, query, 100)]
            assert ranking == fresh, (name, spec)
    assert [u["figures"]["hit@5"] for u in result.to_dict()["cases"]] == [1.0] * 5


def _rankings_of(result) -> dict[str, list[dict]]:
    return {u["name"]: [u["ranking"], u["vs"]["ranking"]] for u in result.to_dict()["cases"]}


def test_cases_keep_bm25_in_memory_and_rank_as_fresh_builds(repo_builder, tmp_path, monkeypatch):
    # Cases never read an index's bytes, so they ask engines to defer their artifact writes (as replay
    # does): lucene bm25 then writes no artifact at all, the other variants write as before, and every
    # ranking (paths and float scores) is a fresh uncached build's, with and without the work cache.
    a = repo_builder("lib")
    r1 = a.commit("one", BASE)
    r2 = a.commit("two", {"src/fees.py": "def overdue_fee(days, cap):\n    return min(days * RATE, cap)\n",
                          "src/holds.py": "def place_hold(member, book):\n    return (member, book)\n"})
    r3 = a.commit("three", {"src/members.py": None, "docs/guide.md": "# Guide\nHolds and accounts.\n",
                            "src/accounts.py": "def open_account(email):\n    return email\n"})
    cases = [("c2", r2, "place a hold on a book", "src/holds.py"), ("c1", r1, "overdue fee", "src/fees.py"),
             ("c3", r3, "open an account", "src/accounts.py"), ("c3b", r3, "guide to holds", "docs/guide.md")]
    (tmp_path / "c.yaml").write_text("cases:\n" + "".join(
        f"  - {{name: {n}, query: {q}, corpus: 'lib@{rev[:12]}', expected: [{e}]}}\n" for n, rev, q, e in cases))
    writes: list[str] = []
    real = BM25Engine._write
    monkeypatch.setattr(BM25Engine, "_write", lambda self, *a: writes.append(self.name) or real(self, *a))
    config = CasesConfig(engine="bm25", vs="bm25(method=atire)", out=tmp_path / "run")
    with work_cache.disabled():
        off = run_cases(load_cases(tmp_path / "c.yaml"), config)
    atire = get_engine("bm25(method=atire)").name
    assert writes == [atire] * 3  # built at r1 and updated twice; the lucene index was never written
    writes.clear()
    cached = run_cases(load_cases(tmp_path / "c.yaml"), CasesConfig(engine="bm25", vs="bm25(method=atire)",
                                                                       out=tmp_path / "run2"))
    assert writes == [atire] * 3
    assert _rankings_of(cached) == _rankings_of(off)
    monkeypatch.setattr(BM25Engine, "_write", real)
    for unit, (name, rev, query, _) in zip(off.to_dict()["cases"], cases):
        corpus = open_corpus(tmp_path / "lib", rev)
        for spec, ranking in (("bm25", unit["ranking"]), ("bm25(method=atire)", unit["vs"]["ranking"])):
            engine = get_engine(spec)
            out = tmp_path / f"fresh-{name}-{spec}"
            out.mkdir()
            with work_cache.disabled():
                engine.build(corpus, out)
            assert ranking == [h.to_dict() for h in engine.query(out, query, 100)], (name, spec)
            assert ranking, (name, spec)


def _cat_file_children() -> set[int]:
    """Live `git cat-file --batch` processes whose parent is this one (read from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue  # ended while we looked
        if int(fields[1]) == os.getpid() and b"cat-file\0--batch\0" in cmdline + b"\0":
            found.add(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counts processes through /proc")
def test_cases_keep_at_most_one_git_reader_alive_and_none_after(repo_builder, tmp_path):
    # Each corpus used to start its own `git cat-file --batch` (for the binary sniff) and keep it until the
    # process ended: a 140-instance SWE-bench run held 137 of them. Now the revisions of a repository share
    # one, it ends when the run moves to the next repository, and none outlives the run.
    specs = []
    for name in ("lib", "app"):
        repo = repo_builder(name)
        revs = [repo.commit("one", BASE)]
        revs.append(repo.commit("two", {"src/holds.py": "def place_hold(member, book):\n    return member\n"}))
        revs.append(repo.commit("three", {"src/members.py": None, "bin.dat": b"\0\1\2"}))
        specs += [(f"{name}{i}", f"{name}@{rev[:12]}") for i, rev in enumerate(revs)]
    (tmp_path / "c.yaml").write_text("cases:\n" + "".join(
        f"  - {{name: {n}, query: overdue fee, corpus: '{corpus}', expected: [src/fees.py]}}\n" for n, corpus in specs))
    before = _cat_file_children()
    alive: list[int] = []
    result = run_cases(load_cases(tmp_path / "c.yaml"), CasesConfig(engine="bm25", out=tmp_path / "run"),
                       progress=lambda done, total, name: alive.append(len(_cat_file_children() - before)))
    assert [u["status"] for u in result.to_dict()["cases"]] == ["ok"] * 6
    assert len(alive) == 6 and max(alive) == 1
    assert _cat_file_children() - before == set()


def test_the_revisions_of_a_repository_are_visited_oldest_commit_first(repo_builder, tmp_path, monkeypatch):
    # A SWE-bench file names base commits in no order of time; the index moves oldest first, so each move
    # is by the changes between neighbours, and every ranking is still its own corpus's fresh build.
    a = repo_builder("lib")
    r1 = a.commit("one", BASE)
    r2 = a.commit("two", {"src/holds.py": "def place_hold(member, book):\n    return (member, book)\n"})
    r3 = a.commit("three", {"src/members.py": None, "src/accounts.py": "def open_account(email):\n    return email\n"})
    cases = [("c3", r3, "open an account", "src/accounts.py"), ("c1", r1, "overdue fee", "src/fees.py"),
             ("c2", r2, "place a hold on a book", "src/holds.py"), ("c3b", r3, "renew a loan", "src/loans.py")]
    (tmp_path / "c.yaml").write_text("cases:\n" + "".join(
        f"  - {{name: {n}, query: {q}, corpus: 'lib@{rev[:12]}', expected: [{e}]}}\n" for n, rev, q, e in cases))
    moves = []
    real_build, real_update = BM25Engine.build, BM25Engine.update
    monkeypatch.setattr(BM25Engine, "build", lambda self, c, o: moves.append(("build", c.rev))
                        or real_build(self, c, o))
    monkeypatch.setattr(BM25Engine, "update", lambda self, o, c, ch: moves.append(("update", c.rev))
                        or real_update(self, o, c, ch))
    result = run_cases(load_cases(tmp_path / "c.yaml"), CasesConfig(engine="bm25", out=tmp_path / "run"))
    assert moves == [("build", r1), ("update", r2), ("update", r3)]
    assert [u["name"] for u in result.to_dict()["cases"]] == ["c3", "c1", "c2", "c3b"]  # recorded in the file's order
    for unit, (name, rev, query, _) in zip(result.to_dict()["cases"], cases):
        engine = get_engine("bm25")
        out = tmp_path / f"fresh-{name}"
        out.mkdir()
        with work_cache.disabled():
            real_build(engine, open_corpus(tmp_path / "lib", rev), out)
        assert unit["ranking"] == [h.to_dict() for h in engine.query(out, query, 100)], name


def test_visiting_order_keeps_the_file_order_when_a_revision_names_no_commit(repo_builder, tmp_path):
    from ctxgauge.suites.cases._corpora import visiting_order

    a = repo_builder("lib")
    r1 = a.commit("one", BASE)
    r2 = a.commit("two", {"src/holds.py": "x = 1\n"})
    lib = str(tmp_path / "lib")
    assert visiting_order([f"{lib}@{r2[:8]}", "elsewhere", f"{lib}@{r1}"]) == [
        (f"{lib}@{r1}", r1), (f"{lib}@{r2[:8]}", r2), ("elsewhere", None)]
    keys = [f"{lib}@{r2}", f"{lib}@nosuchrev", f"{lib}@{r1}"]
    assert visiting_order(keys) == [(k, None) for k in keys]
