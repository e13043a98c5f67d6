"""bm25's live index (engines/bm25/_live.py) against bm25s: over many random corpora and random updates, an
index kept in memory and moved by the changed files ranks exactly (paths and float scores, bit for bit) as
a fresh build's bm25s score matrix does, and `flush` writes exactly the fresh build's bytes."""

from __future__ import annotations

import filecmp
import random
import shutil

import numpy as np
import pytest

import ctxgauge.cache as work_cache
from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.engines.bm25._live import LiveIndex, lucene_entries, mean_length

WORDS = [f"w{i}" for i in range(40)] + ["fetchUserRecord", "parse_payload", "RetryQueue", "é_accent"]
ARTIFACT = ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy", "vocab.index.json",
            "params.index.json", "docs.json")


def _text(rng: random.Random) -> str:
    # Zipf-like word choice: a few words in most files (high df, many ties), most words rare
    n = rng.choice([0, 1, 3, 10, 40, 200])
    return " ".join(WORDS[min(int(rng.paretovariate(1.2)) - 1, len(WORDS) - 1)] for _ in range(n)) + "\n"


def _path(rng: random.Random) -> str:
    return f"{rng.choice(['src', 'lib/w1', 'tests'])}/{rng.choice(WORDS)}_{rng.randint(0, 30)}.py"


def _step(root, rng: random.Random, files: dict[str, str]) -> None:
    """Add, modify or delete a few files (sometimes every file, sometimes none)."""
    for _ in range(rng.choice([0, 1, 2, 5])):
        op = rng.random()
        if files and op < 0.3:
            p = rng.choice(sorted(files))
            del files[p]
            (root / p).unlink(missing_ok=True)
        elif files and op < 0.7:
            p = rng.choice(sorted(files))
            files[p] = _text(rng)
        else:
            files[_path(rng)] = _text(rng)
    if rng.random() < 0.05:  # now and then the corpus empties
        for p in list(files):
            del files[p]
            (root / p).unlink(missing_ok=True)
    for p, t in files.items():
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(t)


def _queries(rng: random.Random) -> list[str]:
    return [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(4)] + ["fetch user payload retry",
                                                                                  "nothing matches zzz"]


def _fresh(corpus: Corpus, out, spec: str):
    engine = get_engine(spec)  # a fresh object each time: nothing carried over
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    with work_cache.disabled():
        engine.build(corpus, out)
    return engine


@pytest.mark.parametrize("seed", range(6))
def test_a_live_index_moved_by_updates_ranks_exactly_as_a_fresh_build(tmp_path, seed, monkeypatch):
    rng = random.Random(seed)
    if seed % 2:  # fold the log into the base postings at every chance, not only once it is large
        monkeypatch.setattr(LiveIndex, "COMPACT_MIN", 0)
    spec = ["bm25", "bm25(k1=0.9,b=0.4)", "bm25(path_weight=0)"][seed % 3]
    root, live_out, fresh_out = tmp_path / "c", tmp_path / "live", tmp_path / "fresh"
    root.mkdir()
    files: dict[str, str] = {}
    _step(root, rng, files)
    live = get_engine(spec)
    assert live.defer_writes(live_out)
    prev = Corpus.from_directory(root)
    live.build(prev, live_out)
    compared = 0
    for i in range(25):
        _step(root, rng, files)
        corpus = Corpus.from_directory(root)
        live.update(live_out, corpus, prev.changes_to(corpus))
        assert not any((live_out / n).exists() for n in ARTIFACT), "a deferred update writes no artifact"
        fresh = _fresh(corpus, fresh_out, spec)
        for q in _queries(rng):
            got = [(h.path, h.score) for h in live.query(live_out, q, 1000)]
            assert got == [(h.path, h.score) for h in fresh.query(fresh_out, q, 1000)], (i, q)
            compared += bool(got)
            for k in (1, 3):  # a short top k: ties at its boundary go by path, as in the whole ranking
                assert [(h.path, h.score) for h in live.query(live_out, q, k)] == got[:k], (i, q, k)
                assert [(h.path, h.score) for h in fresh.query(fresh_out, q, k)] == got[:k], (i, q, k)
        if i % 6 == 5:  # flush: the bytes of a fresh build; then the live index moves on
            live.flush(live_out)
            for name in ARTIFACT:
                assert (live_out / name).exists() == (fresh_out / name).exists(), name
                if (fresh_out / name).exists():
                    assert filecmp.cmp(live_out / name, fresh_out / name, shallow=False), name
        prev = corpus
    assert compared > 20  # the queries matched something (often: many files are empty or tiny)


def test_live_scores_are_bm25s_own_get_scores_from_ids(tmp_path):
    # Against bm25s itself, not only against our matrix: bm25s indexes the same token ids and scores.
    bm25s = pytest.importorskip("bm25s")
    rng = random.Random(7)
    root = tmp_path / "c"
    root.mkdir()
    files: dict[str, str] = {}
    for _ in range(8):
        _step(root, rng, files)
    engine = get_engine("bm25")
    engine.defer_writes(tmp_path / "live")
    corpus = Corpus.from_directory(root)
    engine.build(corpus, tmp_path / "live")
    w = engine.params["path_weight"]
    from ctxgauge.engines._text.tokens import code_tokens, path_tokens

    docs = [engine._t.stem(code_tokens(corpus.text(p))) + engine._t.stem(path_tokens(p)) * w for p in corpus.paths]
    vocab = {t: i for i, t in enumerate(sorted({t for d in docs for t in d}))}
    theirs = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    theirs.index(([[vocab[t] for t in d] for d in docs], vocab), show_progress=False)
    for q in _queries(rng):
        terms = [t for t in dict.fromkeys(engine._t.stem(code_tokens(q))) if t in vocab]
        if not terms:
            continue
        scores = theirs.get_scores_from_ids([vocab[t] for t in terms])
        expected = sorted(((p, float(s)) for p, s in zip(corpus.paths, scores) if s > 0),
                          key=lambda ps: (-ps[1], ps[0].encode()))
        assert [(h.path, h.score) for h in engine.query(tmp_path / "live", q, 1000)] == expected, q


def test_entries_are_the_same_floats_alone_or_in_a_whole_matrix():
    rng = np.random.default_rng(3)
    tf = rng.integers(1, 50, 5000)
    dl = rng.integers(1, 5000, 5000)
    idf = rng.random(5000).astype(np.float32) * 5
    avg = mean_length(int(dl.sum()), len(dl))
    assert avg == dl.mean()  # the running total gives numpy's mean, bit for bit
    whole = lucene_entries(idf, tf.astype(np.float32), dl, avg, 1.2, 0.75)
    pick = rng.choice(5000, 300, replace=False)
    alone = lucene_entries(idf[pick[0]:pick[0] + 1], tf[pick], dl[pick], avg, 1.2, 0.75)
    assert np.array_equal(whole[pick][:1], alone[:1])
    assert np.array_equal(whole[pick], lucene_entries(idf[pick], tf[pick], dl[pick], avg, 1.2, 0.75))


@pytest.mark.parametrize("cache", ["off", "cold", "warm"])
def test_deferred_rankings_are_the_same_with_and_without_the_work_cache(tmp_path, cache):
    rng = random.Random(11)
    root = tmp_path / "c"
    root.mkdir()
    files: dict[str, str] = {}
    corpora = []
    for i in range(6):
        _step(root, rng, files)
        shutil.copytree(root, tmp_path / f"c{i}")  # a directory corpus reads its files when it builds
        corpora.append(Corpus.from_directory(tmp_path / f"c{i}", name="c"))
    queries = _queries(rng)

    def run(out) -> list:
        engine = get_engine("bm25")
        engine.defer_writes(out)
        engine.build(corpora[0], out)
        got = []
        for a, b in zip(corpora, corpora[1:]):
            engine.update(out, b, a.changes_to(b))
            got.append([[(h.path, h.score) for h in engine.query(out, q, 50)] for q in queries])
        return got

    with work_cache.disabled():
        expected = run(tmp_path / "off")
    if cache == "off":
        with work_cache.disabled():
            assert run(tmp_path / "again") == expected
        return
    if cache == "warm":
        run(tmp_path / "fill")
    assert run(tmp_path / "on") == expected


def test_an_update_with_changes_that_do_not_fit_rebuilds(tmp_path):
    # changes relative to another corpus than the one held must not corrupt the live index
    root = tmp_path / "c"
    root.mkdir()
    (root / "a.py").write_text("alpha beta\n")
    (root / "b.py").write_text("beta gamma\n")
    first = Corpus.from_directory(root)
    (root / "a.py").write_text("alpha alpha delta\n")
    second = Corpus.from_directory(root)
    (root / "c.py").write_text("gamma delta\n")
    third = Corpus.from_directory(root)
    engine = get_engine("bm25")
    engine.defer_writes(tmp_path / "out")
    engine.build(first, tmp_path / "out")
    engine.update(tmp_path / "out", third, second.changes_to(third))  # wrong base: only c.py added
    fresh = _fresh(third, tmp_path / "fresh", "bm25")
    for q in ("alpha delta", "gamma", "beta"):
        assert [(h.path, h.score) for h in engine.query(tmp_path / "out", q, 10)] == \
            [(h.path, h.score) for h in fresh.query(tmp_path / "fresh", q, 10)]


def test_another_writer_in_a_deferred_dir_is_read_from_disk(tmp_path):
    root = tmp_path / "c"
    root.mkdir()
    (root / "a.py").write_text("alpha beta\n")
    (root / "b.py").write_text("beta gamma\n")
    small = Corpus.from_directory(root)
    (root / "c.py").write_text("gamma gamma gamma\n")
    big = Corpus.from_directory(root)
    deferred = get_engine("bm25")
    deferred.defer_writes(tmp_path / "out")
    deferred.build(small, tmp_path / "out")
    get_engine("bm25").build(big, tmp_path / "out")  # someone else writes a full artifact there
    fresh = _fresh(big, tmp_path / "fresh", "bm25")
    assert [(h.path, h.score) for h in deferred.query(tmp_path / "out", "gamma", 10)] == \
        [(h.path, h.score) for h in fresh.query(tmp_path / "fresh", "gamma", 10)]


def test_other_bm25_variants_do_not_defer(tmp_path):
    assert not get_engine("bm25(method=bm25l)").defer_writes(tmp_path / "out")


def _random_doc(rng: np.random.Generator, n_terms: int) -> tuple[np.ndarray, np.ndarray, int]:
    ids = np.unique(rng.integers(0, n_terms, rng.choice([0, 1, 5, 30])))
    tf = rng.integers(1, 9, len(ids))
    return ids, tf, int(tf.sum())


def _postings_by_path(live: LiveIndex) -> dict[int, list[tuple[str, int]]]:
    out = {}
    for t in range(len(live.df)):
        slots, tfs = live._postings(t)
        if len(slots):
            out[t] = sorted((live.paths[s], f) for s, f in zip(slots.tolist(), tfs.tolist()))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_a_live_index_after_many_adds_removes_and_compactions_is_a_fresh_one(seed):
    # Driven directly (no engine): removal by path alone uses the ids the slot was added with, and a
    # compaction merges the log into the base exactly as one stable sort of both by term would.
    rng = np.random.default_rng(seed)
    n_terms = [3, 40, 400, 4000][seed]
    held = {f"f{i}": _random_doc(rng, n_terms) for i in range(rng.integers(0, 30))}
    paths = sorted(held)
    doc = np.concatenate([np.full(len(held[p][0]), i) for i, p in enumerate(paths)] + [np.zeros(0, np.int64)])
    ids = np.concatenate([held[p][0] for p in paths] + [np.zeros(0, np.int64)])
    tf = np.concatenate([held[p][1] for p in paths] + [np.zeros(0, np.int64)])
    lens = np.array([held[p][2] for p in paths], dtype=np.int64)
    live = LiveIndex(1.2, 0.75, paths, doc.astype(np.int64), ids, tf, lens, n_terms)
    compactions = 0
    for step in range(300):
        if held and rng.random() < 0.45:
            p = sorted(held)[rng.integers(len(held))]
            live.remove(p)
            del held[p]
        else:
            p = f"g{step}"
            held[p] = _random_doc(rng, n_terms + step)  # new terms appear too
            live.add(p, *held[p])
        if rng.random() < 0.2:
            order = np.argsort(np.concatenate([np.repeat(np.arange(len(live._ptr) - 1), np.diff(live._ptr)),
                                               live._log_arrays()[1]]), kind="stable")
            want_slots = np.concatenate([live._slots, live._log_arrays()[0]])[order]
            want_tfs = np.concatenate([live._tfs, live._log_arrays()[2]])[order]
            keep = live.alive[want_slots]
            live._compact()
            compactions += 1
            assert np.array_equal(live._slots, want_slots[keep]) and np.array_equal(live._tfs, want_tfs[keep])
            assert live._ptr[-1] == len(live._slots) and len(live._ptr) == len(live.df) + 1
        paths = sorted(held)
        doc = np.concatenate([np.full(len(held[p][0]), i) for i, p in enumerate(paths)] + [np.zeros(0, np.int64)])
        fresh = LiveIndex(1.2, 0.75, paths, doc.astype(np.int64),
                          np.concatenate([held[p][0] for p in paths] + [np.zeros(0, np.int64)]),
                          np.concatenate([held[p][1] for p in paths] + [np.zeros(0, np.int64)]),
                          np.array([held[p][2] for p in paths], dtype=np.int64), len(live.df))
        assert np.array_equal(live.df, fresh.df) and live.total == fresh.total and live.n_docs == fresh.n_docs
        if step % 10 == 0 or step == 299:
            assert _postings_by_path(live) == _postings_by_path(fresh), step
            for q in ([0, 1, 2], list(range(0, n_terms, 7))):
                assert live.scores(q) == fresh.scores(q), step
    assert compactions > 30
