"""bm25's own score matrix (engines/bm25/_csc.py) against bm25s, the oracle: over random corpora and several
parameter sets, the artifact a build writes is byte for byte what `bm25s.BM25.index` and `.save` write over
the same tokens, and every query's scores are bm25s's `get_scores_from_ids` on the index bm25s loads."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

from ctxgauge.corpus import Corpus
from ctxgauge.engines import get_engine
from ctxgauge.engines.bm25._csc import csc
from ctxgauge.engines._text.tokens import code_tokens, path_tokens

bm25s = pytest.importorskip("bm25s")

WORDS = [f"w{i}" for i in range(30)] + ["fetchUserRecord", "parse_payload", "RetryQueue", "é_accent", "naïve"]
BM25S_FILES = ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy", "vocab.index.json",
               "params.index.json")
SPECS = ("bm25", "bm25(k1=2,b=0.3,path_weight=1)", "bm25(method=bm25l)", "bm25(method=robertson,b=1)")


def _corpus(root, rng: random.Random) -> Corpus:
    root.mkdir()
    for i in range(rng.randint(1, 25)):
        n = rng.choice([0, 1, 3, 10, 60])
        text = " ".join(WORDS[min(int(rng.paretovariate(1.2)) - 1, len(WORDS) - 1)] for _ in range(n))
        path = root / rng.choice(["src", "lib/w1", "tests"]) / f"{rng.choice(WORDS)}_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    return Corpus.from_directory(root)


def _oracle(engine, corpus: Corpus, out) -> dict[str, int]:
    """bm25s indexing and saving the documents bm25 scores: content tokens, then path tokens `path_weight`
    times, stemmed; the vocabulary in code-point order. Returns the vocabulary."""
    p = engine.params
    docs = [engine._t.stem(code_tokens(corpus.text(f))) + engine._t.stem(path_tokens(f)) * p["path_weight"]
            for f in corpus.paths]
    vocab = {t: i for i, t in enumerate(sorted({t for d in docs for t in d}))}
    theirs = bm25s.BM25(k1=float(p["k1"]), b=float(p["b"]), method=p["method"])
    theirs.index(([[vocab[t] for t in d] for d in docs], vocab), show_progress=False)
    theirs.save(str(out))
    return vocab


@pytest.mark.parametrize("spec", SPECS)
def test_artifact_and_scores_are_bm25s_own(tmp_path, spec):
    checked = 0
    for seed in range(12):
        rng = random.Random(seed)
        corpus = _corpus(tmp_path / f"c{seed}", rng)
        engine = get_engine(spec)
        ours, theirs = tmp_path / f"ours{seed}", tmp_path / f"theirs{seed}"
        engine.build(corpus, ours)
        vocab = _oracle(engine, corpus, theirs)
        for name in BM25S_FILES:
            assert (ours / name).read_bytes() == (theirs / name).read_bytes(), (seed, name)
        nonoccurrence = theirs / "nonoccurrence_array.index.npy"
        assert (ours / nonoccurrence.name).exists() == nonoccurrence.exists()
        if nonoccurrence.exists():
            assert (ours / nonoccurrence.name).read_bytes() == nonoccurrence.read_bytes()
        loaded = bm25s.BM25.load(str(theirs))
        fresh = get_engine(spec)  # reads the artifact from disk (our loader), not the builder's memory
        for q in [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(5)] + ["fetch user payload"]:
            terms = [t for t in dict.fromkeys(engine._t.stem(code_tokens(q))) if t in vocab]
            if not terms:
                continue
            scores = loaded.get_scores_from_ids([vocab[t] for t in terms])
            want = sorted(((p, float(s)) for p, s in zip(corpus.paths, scores) if s > 0),
                          key=lambda ps: (-ps[1], ps[0].encode()))
            for e in (engine, fresh):
                assert [(h.path, h.score) for h in e.query(ours, q, 1000)] == want, (seed, q)
            checked += bool(want)
    assert checked > 10  # queries matched documents (some corpora are tiny or empty)


def test_csc_orders_by_column_then_row_as_bm25s_does():
    rng = np.random.default_rng(5)
    dense = rng.random((40, 30)) * (rng.random((40, 30)) < 0.2)
    doc, col = np.nonzero(dense)  # sorted by document, then column: what a build passes
    scores = dense[doc, col].astype(np.float32)
    m = csc(scores, doc, col, 40, 30)
    data, indices, indptr = bm25s.BM25._np_csc(scores, doc.astype("int32"), col.astype("int32"), (40, 30))
    for mine, want in ((m.data, data.astype("float32")), (m.indices, indices), (m.indptr, indptr)):
        assert mine.dtype == want.dtype and np.array_equal(mine, want)
    assert np.array_equal(m.scores([3, 0, 7]), bm25s.BM25._compute_relevance_from_scores(
        data.astype("float32"), indptr, indices, 40, np.array([3, 0, 7], dtype="int32"), np.dtype("float32")))


def test_a_bm25_build_and_query_never_import_bm25s_or_scipy(tmp_path):
    # What keeps bm25s off the path: its import (scipy.sparse, tqdm, asyncio) cost a quarter of a second.
    root = tmp_path / "c"
    root.mkdir()
    (root / "a.py").write_text("alpha beta\n")
    code = ("import sys; from pathlib import Path; from ctxgauge.corpus import Corpus; "
            "from ctxgauge.engines import get_engine; e = get_engine('bm25'); "
            f"e.build(Corpus.from_directory(Path({str(root)!r})), Path({str(tmp_path / 'o')!r})); "
            f"assert get_engine('bm25').query(Path({str(tmp_path / 'o')!r}), 'alpha', 5); "
            "assert e.available()[0]; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('bm25s', 'scipy', 'tqdm')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

