from __future__ import annotations

import math
import time

import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.engines._text.tokens import code_tokens, path_tokens, split_identifier

DOCS = {
    "shelfd/loans.py": "def compute_overdue_fee(loan, today):\n    days = (today - loan.due).days\n    return round(days * FEE, 2)\n",
    "shelfd/members.py": "class MemberSearch:\n    def paginate(self, page, size):\n        return self.items[page*size:(page+1)*size]\n",
    "web/src/api.ts": "export async function fetchLoans(memberId: string) { return get(`/loans/${memberId}`) }\n",
    "docs/fees.md": "# Fees\nOverdue fees are charged per day, rounded to cents.\n",
    "README.md": "shelfd lends books to members.\n",
}


def test_identifiers_split_like_a_programmer_reads_them():
    assert split_identifier("parseHTTPRequest_v2") == ["parse", "http", "request", "v", "2"]
    assert code_tokens("computeOverdueFee") == ["computeoverduefee", "compute", "overdue", "fee"]
    assert path_tokens("web/src/api.ts") == ["web", "src", "api", "ts"]


@pytest.fixture
def built(tmp_path):
    root = tmp_path / "c"
    for rel, text in DOCS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    corpus = Corpus.from_directory(root)
    engine = get_engine("bm25")
    out = tmp_path / "out"
    out.mkdir()
    engine.build(corpus, out)
    return corpus, engine, out


def _lucene_scores(corpus, engine, query):
    """BM25 as Lucene computes it (Kamphuis et al. 2020: idf log(1 + (N - df + .5)/(df + .5)), term
    frequency tf / (tf + k1 (1 - b + b dl/avgdl)), no (k1 + 1) factor), by hand from the same documents."""
    k1, b, w = engine.params["k1"], engine.params["b"], engine.params["path_weight"]
    docs = [engine._t.stem(code_tokens(corpus.text(p))) + engine._t.stem(path_tokens(p)) * w for p in corpus.paths]
    n, avgdl = len(docs), sum(map(len, docs)) / len(docs)
    terms = list(dict.fromkeys(engine._t.stem(code_tokens(query))))
    scores = {}
    for path, d in zip(corpus.paths, docs):
        s = 0.0
        for t in terms:
            df = sum(1 for x in docs if t in x)
            if df == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = d.count(t)
            s += idf * tf / (tf + k1 * (1 - b + b * len(d) / avgdl))
        scores[path] = s
    return scores


@pytest.mark.parametrize("query", ["Fix overdue fee rounding", "paginate member search", "fetch loans in the web api"])
def test_scores_equal_a_hand_computed_bm25(built, query):
    corpus, engine, out = built
    expected = _lucene_scores(corpus, engine, query)
    hits = engine.query(out, query, 10)
    assert hits, "the query should match something"
    for h in hits:
        assert h.score == pytest.approx(expected[h.path], rel=1e-5)  # bm25s stores float32
    assert {h.path for h in hits} == {p for p, s in expected.items() if s > 0}


def test_scores_equal_rank_bm25(built):
    rank_bm25 = pytest.importorskip("rank_bm25")
    corpus, engine, out = built

    class Lucene(rank_bm25.BM25Okapi):
        def _calc_idf(self, nd):
            self.idf = {w: math.log(1 + (self.corpus_size - f + 0.5) / (f + 0.5)) for w, f in nd.items()}

    w = engine.params["path_weight"]
    docs = [engine._t.stem(code_tokens(corpus.text(p))) + engine._t.stem(path_tokens(p)) * w for p in corpus.paths]
    oracle = Lucene(docs, k1=engine.params["k1"], b=engine.params["b"])
    query = "overdue fee per day"
    terms = list(dict.fromkeys(engine._t.stem(code_tokens(query))))
    expected = dict(zip(corpus.paths, oracle.get_scores(terms)))
    # rank-bm25 keeps Robertson's (k1 + 1) factor, which Lucene drops: same ranking, scaled scores.
    for h in engine.query(out, query, 10):
        assert h.score * (engine.params["k1"] + 1) == pytest.approx(expected[h.path], rel=1e-5)


def test_ties_break_by_path(tmp_path):
    root = tmp_path / "c"
    root.mkdir()
    for name in ("c.py", "a.py", "b.py"):
        (root / name).write_text("same words here\n")
    engine, out = get_engine("bm25(path_weight=0)"), tmp_path / "out"
    out.mkdir()
    engine.build(Corpus.from_directory(root), out)
    assert [h.path for h in engine.query(out, "same words", 3)] == ["a.py", "b.py", "c.py"]


def test_counting_words_in_bytes_gives_the_tokens_of_the_decoded_text():
    # bm25 counts a blob's tokens per distinct word found in its bytes; that must be exactly the multiset
    # code_tokens gives on the text decoded with replacement: malformed UTF-8, accents, NULs, digits, case.
    import random

    import numpy as np

    from ctxgauge.engines._text.tokens import _WORD, word_counts

    rng = random.Random(5)
    alphabet = [b"a", b"Z", b"_", b"9", b" ", b"\n", b"\t", b"\x00", b"\xc3\xa9", b"\xe2", b"\x80", b"\xff",
                b"camelCase", b"HTTPServer", b"snake_case_2", b"the", b"x", b"\x0b", b"-", b"."]
    engine = get_engine("bm25")
    for _ in range(300):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        text = data.decode("utf-8", "replace")
        assert sorted(word_counts(data).elements()) == sorted(w.encode() for w in _WORD.findall(text))
        got, want = engine._t.content_counts(data), engine._t.counts(engine._t.stem(code_tokens(text)))
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]) and got[2] == want[2]


def _two_corpora(tmp_path):
    root = tmp_path / "c"
    root.mkdir()
    (root / "a.py").write_text("alpha beta\n")
    (root / "b.py").write_text("beta gamma\n")
    return Corpus.from_directory(root)


def test_an_index_rewritten_in_place_is_never_answered_from_memory(tmp_path, monkeypatch):
    # Another engine object with other parameters rewrites the directory: the same files, the same sizes
    # (one score per entry), other scores. Right after a write (racy times) even a rewrite no `stat` could
    # tell apart is caught by the digest; once the times are older than a tick, any rewrite moves a time.
    import ctxgauge.engines.bm25._stamp as stamp
    corpus, out = _two_corpora(tmp_path), tmp_path / "out"
    first, other = get_engine("bm25"), get_engine("bm25(k1=2.0)")
    first.build(corpus, out)
    mine = [(h.path, h.score) for h in first.query(out, "beta gamma", 5)]
    other.build(corpus, out)
    theirs = [(h.path, h.score) for h in other.query(out, "beta gamma", 5)]
    assert mine != theirs and [p for p, _ in mine] == [p for p, _ in theirs]
    assert [(h.path, h.score) for h in first.query(out, "beta gamma", 5)] == theirs  # read from disk again
    first.build(corpus, out)
    frozen = stamp.stats(out)
    monkeypatch.setattr(stamp, "stats", lambda d: frozen)  # a rewrite within one tick: every stat the same
    monkeypatch.setattr(stamp, "racy", lambda stats, now: True)
    other.build(corpus, out)
    assert [(h.path, h.score) for h in first.query(out, "beta gamma", 5)] == theirs


def test_a_settled_index_is_checked_by_stat_alone(tmp_path, monkeypatch):
    import ctxgauge.engines.bm25._stamp as stamp
    corpus, out = _two_corpora(tmp_path), tmp_path / "out"
    engine = get_engine("bm25")
    engine.build(corpus, out)
    digests = []
    real = stamp.digest
    monkeypatch.setattr(stamp, "digest", lambda d: digests.append(d) or real(d))
    monkeypatch.setattr(stamp, "racy", lambda stats, now: False)  # the files are older than a tick now
    want = [(h.path, h.score) for h in engine.query(out, "alpha", 5)]
    assert len(digests) <= 1  # at most once more, to settle a stamp taken while the files were racy
    for _ in range(5):
        assert [(h.path, h.score) for h in engine.query(out, "alpha", 5)] == want
    assert len(digests) <= 1
    time.sleep(2 * stamp.FINE_NS / 1e9)  # what `racy` waits for before it lets a stamp settle
    get_engine("bm25(k1=2.0)").build(corpus, out)  # a later rewrite moves a time: read from disk
    assert [(h.path, h.score) for h in engine.query(out, "alpha", 5)] != want


def test_racy_means_within_one_timestamp_tick():
    from ctxgauge.engines.bm25._stamp import COARSE_NS as _COARSE_NS, FINE_NS as _FINE_NS, racy as _racy

    now = 1_700_000_000_123_456_789
    fine = (1, 10, now - 2 * _FINE_NS, now - 2 * _FINE_NS)
    assert not _racy((fine, None), now)
    assert _racy(((1, 10, now - _FINE_NS // 2, now - 2 * _FINE_NS),), now)  # a recent modification time
    assert _racy(((1, 10, now - 2 * _FINE_NS, now),), now)  # or change time
    whole = now - now % 1_000_000_000 - 1_000_000_000  # a file system keeping whole seconds
    assert _racy(((1, 10, whole, whole),), now)
    assert not _racy(((1, 10, whole - _COARSE_NS, whole - _COARSE_NS),), now)


def test_path_counts_in_one_batch_equal_them_path_by_path():
    # Terms numbered in the same order and each path's counts equal counts(stem(path_tokens(path)), weight),
    # paths whose tokens are new, old, shared or none at all.
    import numpy as np

    from ctxgauge.engines._text.terms import Terms
    from ctxgauge.engines._text.tokens import path_tokens

    paths = ["src/fetchUser.ts", "src/fetch_user.py", "a", "README", "docs/the/of.md", ".github/x.yml",
             "lib/HTTPServer/http_server.go", "x/y/z/Error.java", "-", "1/2/3.txt", "web/api.ts"]
    for weight in (0, 1, 2):
        batch, one = Terms(weight), Terms(weight)
        batch.ids(["fetch", "zzz"])
        one.ids(["fetch", "zzz"])
        got = batch.path_counts_many(paths)
        want = [one.counts(one.stem(path_tokens(p)), weight) for p in paths]
        assert batch.terms == one.terms
        for (gi, gc, gn), (wi, wc, wn) in zip(got, want):
            assert gi.tolist() == wi.tolist() and gc.tolist() == wc.tolist() and gn == wn
            assert gi.dtype == wi.dtype == np.int64 and gc.dtype == wc.dtype
