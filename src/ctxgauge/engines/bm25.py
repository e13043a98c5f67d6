"""bm25: BM25 (bm25s, Lucene variant) over code-aware, Snowball-stemmed tokens, path terms weighted.

Each document is a file's content tokens plus its path tokens repeated `path_weight` times. The index is
bm25s's own layout (score matrix in CSC form, sorted vocabulary), so `bm25s.BM25.load` reads it; ties that
bm25s leaves in arbitrary order are broken by path.

Term counts are cached per blob id (and per path) on the engine object, so a replay over many commits
tokenises each unique blob once. Every build, fresh or an `update`, then derives the whole score matrix
from those counts in a few vectorised numpy passes (BM25's idf and mean length depend on every document,
so no entry can be kept), computing each entry with exactly bm25s's arithmetic: the artifact is
byte-identical to `bm25s.BM25.index` over the same tokens, and an update's to a fresh build's. The last
index built or loaded is kept in memory for queries while its files are unchanged on disk.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
from json.encoder import encode_basestring
import os
from pathlib import Path
from typing import Sequence

import numpy as np

import ctxgauge.cache as work_cache
from ctxgauge._io import write_text_atomic
from ctxgauge.corpora import Change, Corpus
from ctxgauge.engines._base import Engine, Hit, rank
from ctxgauge.engines._spec import Param
from ctxgauge.engines._tokens import code_tokens, path_tokens

DOCS_FILE = "docs.json"
NONOCCURRENCE_FILE = "nonoccurrence_array.index.npy"
_INDEX_FILES = ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy", "vocab.index.json",
                "params.index.json")

_Counts = tuple[np.ndarray, np.ndarray, int]  # (term ids, sorted; their counts; number of tokens)


class BM25Engine(Engine):
    kind = "bm25"
    defaults = {
        "k1": Param(1.2, ge=0),
        "b": Param(0.75, ge=0, le=1),
        "path_weight": Param(2, ge=0),
        "method": Param("lucene", choices=("atire", "bm25+", "bm25l", "lucene", "robertson")),
    }
    libraries = ("bm25s", "PyStemmer", "numpy", "scipy")
    identity_modules = ("ctxgauge.engines._base", "ctxgauge.engines._tokens")

    def __init__(self, **params):
        super().__init__(**params)
        self._stemmer = None
        # Terms are interned once per engine object: id -> term, term -> id, and the ids in term order
        # (merged in as each build needs them, so ordering a build's vocabulary is a boolean mask).
        self._terms: list[str] = []
        self._term_id: dict[str, int] = {}
        self._sorted_ids = np.zeros(0, dtype=np.int64)
        self._order_terms: list[str] = []  # every interned term, in term order
        self._order_ids: list[int] = []  # their ids, in the same order
        self._quoted: list[str] = []  # term id -> the term as a JSON string
        self._blob_counts: dict[str, _Counts] = {}
        self._path_counts: dict[str, _Counts] = {}
        self._loaded: tuple | None = None  # (out_dir, stamps, retriever, paths, term -> column) last built/loaded
        self._written_vocab: tuple | None = None  # (out_dir, file stamp, vocabulary ids) last written

    def available(self) -> tuple[bool, str | None]:
        try:
            import bm25s  # noqa: F401
            import Stemmer  # noqa: F401
        except ImportError as exc:
            return False, f"{exc.name} is not installed (pip install bm25s PyStemmer)"
        return True, None

    def _stem(self, tokens: list[str]) -> list[str]:
        if self._stemmer is None:
            import Stemmer

            self._stemmer = Stemmer.Stemmer("english")
        return self._stemmer.stemWords(tokens)

    # -- per-blob term counts -----------------------------------------------------------------------------
    def _counts(self, tokens: list[str], weight: int = 1) -> _Counts:
        term_id = self._term_id
        for t in tokens:
            if t not in term_id:
                term_id[t] = len(self._terms)
                self._terms.append(t)
        ids = np.fromiter((term_id[t] for t in tokens), dtype=np.int64, count=len(tokens))
        uniq, counts = np.unique(ids, return_counts=True)
        return uniq, counts * weight, len(tokens) * weight

    def _term_order(self) -> np.ndarray:
        """Every term id in term order, merging the terms interned since the last call into the order.

        Python orders str by code point, which is UTF-8 byte order. (A fixed-width numpy byte array was
        tried first: one 50,000-character token in a data file widened every key to its length, and a
        2,193-file repository then took 1.7 GB and 30 s to build.)"""
        start = len(self._order_ids)
        if start < len(self._terms):
            terms = self._terms
            new = sorted(range(start, len(terms)), key=terms.__getitem__)
            if len(new) > 64:  # many new terms (a first build): one sort of everything is cheaper
                self._order_ids = sorted(range(len(terms)), key=terms.__getitem__)
                self._order_terms = [terms[i] for i in self._order_ids]
            else:  # a few new terms (an update): insert each at its place
                for i in new:
                    at = bisect.bisect_left(self._order_terms, terms[i])
                    self._order_terms.insert(at, terms[i])
                    self._order_ids.insert(at, i)
            self._sorted_ids = np.array(self._order_ids, dtype=np.int64)
        return self._sorted_ids

    def _content_stage(self):
        """The work cache's stage for a blob's content terms (None when the cache is off). Keyed by this
        module's and the tokeniser's source and the stemmer's version, not by k1, b or path_weight: every
        bm25 configuration shares the same per-blob work."""
        store = work_cache.current()
        if store is None:
            return None
        return store.stage("bm25.content-terms", work_cache.stage_identity(
            (__name__, "ctxgauge.engines._tokens"), {"stemmer": "english", "format": 1}, ("PyStemmer",)))

    def _cached_counts(self, payload: bytes) -> _Counts:
        terms, counts, n = json.loads(payload)
        term_id = self._term_id
        for t in terms:
            if t not in term_id:
                term_id[t] = len(self._terms)
                self._terms.append(t)
        ids = np.fromiter((term_id[t] for t in terms), dtype=np.int64, count=len(terms))
        order = np.argsort(ids, kind="stable")
        return ids[order], np.asarray(counts, dtype=np.int64)[order], int(n)

    def _doc_counts(self, corpus: Corpus) -> tuple[list[_Counts], list[_Counts]]:
        todo = {f.blob: f for f in corpus.files if f.blob not in self._blob_counts}
        stage = self._content_stage() if todo else None
        if stage is not None:
            for blob in list(todo):
                payload = stage.get(blob)
                if payload is not None:
                    self._blob_counts[blob] = self._cached_counts(payload)
                    del todo[blob]
        for f, data in corpus.iter_bytes(list(todo.values())):
            counts = self._counts(self._stem(code_tokens(data.decode("utf-8", "replace"))))
            self._blob_counts[f.blob] = counts
            if stage is not None:
                terms = [self._terms[i] for i in counts[0].tolist()]
                stage.put(f.blob, json.dumps([terms, counts[1].tolist(), counts[2]], ensure_ascii=False).encode())
        weight = int(self.params["path_weight"])
        for f in corpus.files:
            if f.path not in self._path_counts:
                self._path_counts[f.path] = self._counts(self._stem(path_tokens(f.path)), weight)
        return [self._blob_counts[f.blob] for f in corpus.files], [self._path_counts[f.path] for f in corpus.files]

    # -- index --------------------------------------------------------------------------------------------
    def _retriever(self, corpus: Corpus):
        """A bm25s.BM25 holding the scores `index((ids, vocab))` would compute over the same documents, and
        the ids of the vocabulary's terms in column order."""
        import bm25s

        content, paths = self._doc_counts(corpus)
        n_docs = len(content)
        parts = [a for c, p in zip(content, paths) for a in (c, p)]
        sizes = np.array([len(a[0]) for a in parts], dtype=np.int64)
        doc = np.repeat(np.arange(n_docs, dtype=np.int64).repeat(2), sizes)
        ids = np.concatenate([a[0] for a in parts])
        cnt = np.concatenate([a[1] for a in parts])
        n_terms = max(len(self._terms), 1)
        # A term in both a file's content and its path is one entry whose counts add up. The keys are two
        # sorted runs per document, which a stable (merge) sort orders in about linear time.
        keys = doc * n_terms + ids
        order = np.argsort(keys, kind="stable")
        keys, cnt = keys[order], cnt[order]
        first = np.ones(len(keys), dtype=bool)
        first[1:] = keys[1:] != keys[:-1]
        starts = np.flatnonzero(first)
        tf = np.add.reduceat(cnt, starts).astype(np.float32)
        key = keys[starts]
        doc, ids = key // n_terms, key % n_terms
        # The vocabulary: the terms present, in term order; a term's column is its position there.
        present = np.zeros(n_terms, dtype=bool)
        present[ids] = True
        sorted_ids = self._term_order()
        vocab_ids = sorted_ids[present[sorted_ids]]
        column = np.full(n_terms, -1, dtype=np.int64)
        column[vocab_ids] = np.arange(len(vocab_ids))
        col = column[ids]
        n_vocab = len(vocab_ids)
        # bm25s's arithmetic, entry by entry: idf from math.log stored as float32; a document's length
        # factor in float64 (Python float with a numpy float64 mean); the product rounded to float32.
        doc_len = np.array([c[2] + p[2] for c, p in zip(content, paths)], dtype=np.int64)
        avg_doc_len = doc_len.mean()
        df = np.bincount(col, minlength=n_vocab)
        k1, b = float(self.params["k1"]), float(self.params["b"])
        retriever = bm25s.BM25(k1=k1, b=b, method=self.params["method"])
        if self.params["method"] != "lucene":
            # Other variants: bm25s scores the same documents itself (each term id repeated by its count;
            # the order of a document's tokens changes no score). Slower, and only the default is tuned.
            bounds = np.searchsorted(doc, np.arange(n_docs + 1))
            tfi = tf.astype(np.int64)
            docs = [np.repeat(col[s:e], tfi[s:e]).tolist() for s, e in zip(bounds[:-1], bounds[1:])]
            vocab = {self._terms[i]: c for c, i in enumerate(vocab_ids.tolist())}
            retriever.index((docs, vocab), show_progress=False)
            return retriever, vocab_ids, column
        dfs, which = np.unique(df, return_inverse=True)
        idf = np.array([math.log(1 + (n_docs - d + 0.5) / (d + 0.5)) for d in dfs.tolist()])[which].astype(np.float32)
        norm = k1 * ((1 - b) + b * doc_len.astype(np.float64) / avg_doc_len)
        tf64 = tf.astype(np.float64)
        scores = (idf[col].astype(np.float64) * (tf64 / (norm[doc] + tf64))).astype(np.float32)
        # bm25s's own CSC builder with the arrays it would pass, so order and index dtypes are its own.
        data, indices, indptr = retriever._np_csc(data=scores, rows=doc.astype(retriever.int_dtype),
                                                  cols=col.astype(retriever.int_dtype), shape=(n_docs, n_vocab))
        retriever.scores = {"data": data.astype(retriever.dtype), "indices": indices, "indptr": indptr,
                            "num_docs": n_docs}
        retriever.nonoccurrence_array = None
        return retriever, vocab_ids, column

    def _vocab_json(self, vocab_ids: np.ndarray) -> str:
        """`json.dumps(vocab, ensure_ascii=False)` of bm25s's vocabulary (terms in column order, then the
        empty token bm25s appends), joined from per-term strings: the whole dict costs far more to encode."""
        from bm25s.utils import json_functions

        if json_functions.ORJSON_AVAILABLE:  # bm25s then writes orjson's compact form
            terms = [self._terms[i] for i in vocab_ids.tolist()]
            return json_functions.dumps({**{t: c for c, t in enumerate(terms)}, "": len(terms)}, ensure_ascii=False)
        quoted = self._quoted
        if len(quoted) < len(self._terms):  # each term is quoted once per engine object
            quoted.extend(encode_basestring(t) for t in self._terms[len(quoted):])
        body = ", ".join([f"{quoted[i]}: {c}" for c, i in enumerate(vocab_ids.tolist())] + [f'"": {len(vocab_ids)}'])
        return "{" + body + "}"

    def _save(self, out_dir: Path, retriever, vocab_ids: np.ndarray) -> None:
        """Write what `retriever.save(out_dir)` writes, byte for byte, skipping the vocabulary file when it
        already holds this vocabulary (the costliest file to write, and often unchanged by an update)."""
        import bm25s

        out_dir.mkdir(parents=True, exist_ok=True)
        for name, key in zip(_INDEX_FILES[:3], ("data", "indices", "indptr")):
            np.save(out_dir / name, retriever.scores[key], allow_pickle=False)
        if retriever.nonoccurrence_array is not None:  # BM25L and BM25+ only
            np.save(out_dir / NONOCCURRENCE_FILE, retriever.nonoccurrence_array, allow_pickle=False)
        vocab_path = out_dir / _INDEX_FILES[3]
        last = self._written_vocab
        if not (last and last[0] == out_dir.resolve() and last[1] == _stat(vocab_path)
                and np.array_equal(last[2], vocab_ids)):
            with open(vocab_path, "wt", encoding="utf-8") as f:
                f.write(self._vocab_json(vocab_ids))
            self._written_vocab = (out_dir.resolve(), _stat(vocab_path), vocab_ids)
        params = dict(k1=retriever.k1, b=retriever.b, delta=retriever.delta, method=retriever.method,
                      idf_method=retriever.idf_method, dtype=retriever.dtype, int_dtype=retriever.int_dtype,
                      num_docs=retriever.scores["num_docs"], version=bm25s.__version__, backend=retriever.backend)
        with open(out_dir / _INDEX_FILES[4], "w") as f:
            json.dump(params, f, indent=4)

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        out_dir = Path(out_dir)
        self._loaded = None
        n_vocab = 0
        if corpus.files:
            retriever, vocab_ids, column = self._retriever(corpus)
            self._save(out_dir, retriever, vocab_ids)
            n_vocab = len(vocab_ids)
        paths = [f.path for f in corpus.files]
        write_text_atomic(
            out_dir / DOCS_FILE,
            json.dumps({"paths": paths, "blobs": [f.blob for f in corpus.files]}, ensure_ascii=False) + "\n",
        )
        if corpus.files:
            term_id = self._term_id

            def lookup(term: str) -> int | None:
                i = term_id.get(term)
                c = int(column[i]) if i is not None and i < len(column) else -1
                return c if c >= 0 else None

            self._loaded = (out_dir.resolve(), _stamps(out_dir), retriever, paths, lookup)
        return {"documents": len(corpus.files), "vocabulary": n_vocab}

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        # Only changed blobs are tokenised (the rest come from the per-blob counts); the index is then
        # derived again from the counts, which is what keeps it byte-identical to a fresh build.
        return self.build(corpus, out_dir)

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        out_dir = Path(out_dir)
        stamps = _stamps(out_dir)
        if self._loaded is not None and self._loaded[:2] == (out_dir.resolve(), stamps):
            retriever, paths, lookup = self._loaded[2:]
        else:
            import bm25s

            with open(out_dir / DOCS_FILE, encoding="utf-8") as fh:
                paths = json.load(fh)["paths"]
            if not paths:
                return []
            retriever = bm25s.BM25.load(str(out_dir), mmap=False)
            lookup = retriever.vocab_dict.get
            self._loaded = (out_dir.resolve(), stamps, retriever, paths, lookup)
        # Query terms in order, each once, as bm25s's get_scores(tokens) would look them up.
        ids = [c for c in (lookup(t) for t in dict.fromkeys(self._stem(code_tokens(text)))) if c is not None]
        if not ids:
            return []
        scores = retriever.get_scores_from_ids(ids)
        return rank({p: float(s) for p, s in zip(paths, scores)}, k)


def _stat(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _stamps(out_dir: Path) -> tuple:
    """What identifies the index files on disk: their inodes, sizes and times, and a digest of the score
    and document files (times are coarse, and another engine object with other parameters may rewrite
    the same directory within one tick: the digest tells its scores apart)."""
    digest = hashlib.blake2b(digest_size=16)
    for name in (_INDEX_FILES[0], DOCS_FILE):
        try:
            digest.update((out_dir / name).read_bytes())
        except OSError:
            digest.update(b"\0missing")
    return (*(_stat(out_dir / name) for name in (DOCS_FILE, *_INDEX_FILES)), digest.hexdigest())
