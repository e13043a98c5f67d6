"""bm25 counts a changed blob by the lines that changed: the counts equal a fresh tokenisation's, always."""

from __future__ import annotations

import random

import numpy as np
import pytest

import ctxgauge.cache as work_cache
from ctxgauge.corpus import Corpus
from ctxgauge.engines._text.term_delta import apply_delta, line_delta
from ctxgauge.engines._text.terms import Terms
from ctxgauge.engines._text.tokens import word_counts
from ctxgauge.engines.bm25._engine import BM25Engine

WORDS = [b"alpha", b"beta", b"gamma_delta", b"x1", b"\xc3\xa9t\xc3\xa9", b"CamelCaseWord", b"HTTPServer", b"9",
         b"\xff\xfe", b"_", b"fooBar2Baz"]
SEPS = [b" ", b"\n", b"", b".", b"\r\n", b"\t", b"(", b"\r"]


def _text(rng: random.Random, n: int) -> bytes:
    return b"".join(rng.choice(WORDS) + rng.choice(SEPS) for _ in range(n))


def _edit(rng: random.Random, data: bytes, edits: int) -> bytes:
    out = bytearray(data)
    for _ in range(edits):
        i = rng.randint(0, len(out))
        out[i:min(len(out), i + rng.randint(0, 60))] = _text(rng, rng.randint(0, 12))
    return bytes(out)


def _pairs():
    rng = random.Random(7)
    big = b"".join(b"    value_%d = compute(item_%d)\n" % (i % 97, i) for i in range(4000))
    yield b"", b"def f():\n    return 1\n"
    yield b"def f():\n    return 1\n", b""
    yield b"x = 1\r\ny = 2\r\n", b"x = 1\r\ny = 3\r\n"  # CRLF
    yield b"last line without newline", b"last line without a newline"
    yield b"a\na\na\nb\n", b"a\na\nb\nb\n"  # a kept line's count moves
    yield b"k" * 300_000 + b"\nshort\n", b"k" * 300_000 + b"\nshorter\n"  # a huge line kept
    yield b"tok " * 100_000, b"tok " * 99_999 + b"tak "  # one huge line changed: a full count
    yield big, big.replace(b"item_17)", b"item_17, extra)").replace(b"item_3900)", b"other_3900)")  # far apart
    yield big, big[:20000] + b"inserted_line = 1\n" + big[20000:]
    yield big, b"\n".join(sorted(big.split(b"\n")))  # every line moved
    for _ in range(400):
        old = _text(rng, rng.randint(0, 400))
        yield old, _edit(rng, old, rng.randint(1, 5))
    for _ in range(40):
        old = _text(rng, 5000)
        yield old, _edit(rng, old, rng.randint(2, 30))


def test_a_delta_gives_the_words_of_the_new_version(monkeypatch):
    from collections import Counter

    import ctxgauge.engines._text.term_delta as delta_module

    compared = []
    monkeypatch.setattr(delta_module, "Counter", lambda lines: compared.append(1) or Counter(lines))
    used = 0
    for old, new in _pairs():
        delta = line_delta(old, new)
        if delta is None:
            continue
        used += 1
        words = word_counts(old)
        words.subtract(word_counts(delta[0]))
        assert min(words.values(), default=0) >= 0
        words.update(word_counts(delta[1]))
        assert +words == word_counts(new)
    assert used > 100 and compared  # both ways (ends cut only; middle lines compared) were taken


def test_a_delta_is_refused_when_most_of_the_file_changed():
    assert line_delta(b"tok " * 1000, b"tak " * 1000) is None
    assert line_delta(b"a\n", b"b\n") is None


def _fresh(data: bytes):
    t = Terms(2)
    ids, cnt, n = t.content_counts(data)
    return {t.terms[i]: int(c) for i, c in zip(ids.tolist(), cnt.tolist())}, n


def test_counts_by_delta_equal_a_fresh_count():
    t = Terms(2)
    for old, new in _pairs():
        delta = line_delta(old, new)
        if delta is None:
            continue
        before = t.content_counts(old)
        ids, cnt, n = apply_delta(before, *t.content_counts_many(list(delta)))
        assert (np.diff(ids) > 0).all() and (cnt > 0).all()
        assert ({t.terms[i]: int(c) for i, c in zip(ids.tolist(), cnt.tolist())}, n) == _fresh(new)


def _repo_corpora(repo_builder):
    rng = random.Random(3)
    r = repo_builder("delta")
    files = {f"src/m{i}.py": _text(rng, 2000) for i in range(12)}
    revs = [r.commit("base", dict(files))]
    for k in range(6):
        for path in rng.sample(sorted(files), 4):
            files[path] = _edit(rng, files[path], rng.randint(1, 8))
        files[f"src/new{k}.py"] = _text(rng, 50)
        revs.append(r.commit(f"edit {k}", dict(files)))
    return r.path, revs


@pytest.mark.parametrize("cache", [False, True])
def test_an_engine_moved_by_deltas_holds_the_counts_and_rankings_of_fresh_builds(repo_builder, tmp_path, cache,
                                                                                  monkeypatch):
    from ctxgauge.git import Repo

    path, revs = _repo_corpora(repo_builder)
    deltas = []
    real = line_delta
    monkeypatch.setattr("ctxgauge.engines._text.terms.line_delta", lambda a, b: deltas.append(1) or real(a, b))
    with Repo(path) as repo, (work_cache.disabled() if not cache else _nothing()):
        eng = BM25Engine()
        out = tmp_path / "live"
        eng.defer_writes(out)
        corpus = Corpus.from_git(repo, revs[0])
        eng.build(corpus, out)
        for rev in revs[1:]:
            nxt = corpus.at(rev)
            eng.update(out, nxt, corpus.changes_to(nxt))
            corpus = nxt
            for f in corpus.files:
                ids, cnt, n = eng._t.blob_counts[f.blob]
                got = {eng._t.terms[i]: int(c) for i, c in zip(ids.tolist(), cnt.tolist())}
                assert (got, n) == _fresh(corpus.read(f.path)), f.path
            fresh = BM25Engine()
            with work_cache.disabled():
                fresh.build(corpus, tmp_path / f"fresh-{rev[:8]}")
            for q in ("alpha beta", "gamma delta camel case", "http server foo bar"):
                assert eng.query(out, q, 20) == fresh.query(tmp_path / f"fresh-{rev[:8]}", q, 20)
    assert deltas or cache  # cold, the changed files were counted by their deltas


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
