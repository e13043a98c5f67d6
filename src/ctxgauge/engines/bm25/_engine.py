"""bm25: BM25 (bm25s's Lucene variant) over code-aware, Snowball-stemmed tokens, path terms weighted.

Each document is a file's content tokens plus its path tokens repeated `path_weight` times. The index is
bm25s's own layout (score matrix in CSC form, sorted vocabulary), so `bm25s.BM25.load` reads it, but it is
built, read and scored with numpy alone (`_csc`, checked against bm25s as the oracle); bm25s itself
scores only the other variants. Ties that bm25s leaves in arbitrary order are broken by path.

Term counts are cached per blob id (and per path) on the engine object (`_text.terms`), so a replay over
many commits tokenises each unique blob once. A build derives the whole score matrix from those counts in a few
vectorised numpy passes (BM25's idf and mean length depend on every document, so no entry can be kept),
computing each entry with exactly bm25s's arithmetic: the artifact is byte-identical to `bm25s.BM25.index`
over the same tokens, and an update's to a fresh build's. The last index built or loaded is kept in memory
for queries while its files are unchanged on disk.

A caller that never reads the artifact's bytes (replay, cases) may ask for `defer_writes(out_dir)`: builds
and updates there then keep a live index (`_live`: postings updated by the changed files only, the
entries a query reads computed at query time with the same arithmetic, so rankings and scores are the
same floats) and write no artifact until `flush(out_dir)`, which writes exactly what a fresh build writes.
An update then costs the files that changed, not the repository.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from pathlib import Path
from typing import Sequence

import numpy as np

from ctxgauge._io import write_text_atomic
from ctxgauge.corpus import Change, Corpus
import ctxgauge.engines.bm25._csc as _csc
from ctxgauge.engines._base import Engine, Hit, rank
from ctxgauge.engines._spans_rank import SPAN_PARAMS, SpanEngine
from ctxgauge.engines.bm25._live import LiveIndex, lucene_entries, lucene_idf, mean_length, top_candidates
from ctxgauge.engines.bm25._stamp import DOCS_FILE, INDEX_FILES, NONOCCURRENCE_FILE, Held, Stamp, stat_of
from ctxgauge.engines._text.terms import Counts, Terms
from ctxgauge.engines._text.keyed import sum_by_key
from ctxgauge.engines._spec import Param
from ctxgauge.engines._text.tokens import code_tokens


class BM25Engine(SpanEngine, Engine):
    kind = "bm25"
    defaults = {
        "k1": Param(1.2, ge=0),
        "b": Param(0.75, ge=0, le=1),
        "path_weight": Param(2, ge=0),
        "method": Param("lucene", choices=("atire", "bm25+", "bm25l", "lucene", "robertson")),
        **SPAN_PARAMS,
    }
    libraries = ("bm25s", "PyStemmer", "numpy", "scipy")

    def __init__(self, **params):
        super().__init__(**params)
        self._t = Terms(int(self.params["path_weight"]))  # per-blob term counts, interned terms
        self._quoted: list[str] = []  # term id -> the term as a JSON string
        self._loaded: tuple | None = None  # (out_dir, Stamp, Matrix, paths, term -> column) last built/loaded
        self._written_vocab: tuple | None = None  # (out_dir, file stamp, vocabulary ids) last written
        self._deferred: set[Path] = set()  # out dirs whose artifact waits for flush (defer_writes)
        self._held: Held | None = None  # the live index of the last deferred build or update

    def available(self) -> tuple[bool, str | None]:
        # Looked up, not imported: bm25s is read only for its version (the params file) and for the variants
        # other than Lucene; importing it costs a quarter of a second of every process.
        from importlib.util import find_spec

        for module, package in (("bm25s", "bm25s"), ("Stemmer", "PyStemmer")):
            if find_spec(module) is None:
                return False, f"{package} is not installed (pip install bm25s PyStemmer)"
        return True, None

    def _entries(self, content: list[Counts], paths: list[Counts]):
        """Every (document, term, frequency) entry of the documents whose content and path counts are given,
        sorted by document then term id, and each document's length."""
        n_docs = len(content)
        parts = [a for c, p in zip(content, paths) for a in (c, p)]
        sizes = np.array([len(a[0]) for a in parts], dtype=np.int64)
        doc = np.repeat(np.arange(n_docs, dtype=np.int64).repeat(2), sizes)
        ids = np.concatenate([a[0] for a in parts])
        cnt = np.concatenate([a[1] for a in parts])
        n_terms = max(len(self._t.terms), 1)
        # A term in both a file's content and its path is one entry whose counts add up. The keys are two
        # sorted runs per document, which a stable (merge) sort orders in about linear time.
        key, tf = sum_by_key(doc * n_terms + ids, cnt)
        doc_len = np.array([c[2] + p[2] for c, p in zip(content, paths)], dtype=np.int64)
        return key // n_terms, key % n_terms, tf, doc_len

    def _matrix(self, corpus: Corpus) -> tuple[_csc.Matrix, np.ndarray, np.ndarray]:
        """The score matrix `bm25s.BM25.index((ids, vocab))` computes over the same documents, the ids of
        the vocabulary's terms in column order, and each term id's column (-1: absent)."""
        content, paths = self._t.doc_counts(corpus)
        n_docs = len(content)
        doc, ids, tf, doc_len = self._entries(content, paths)
        tf = tf.astype(np.float32)
        n_terms = max(len(self._t.terms), 1)
        # The vocabulary: the terms present, in term order; a term's column is its position there.
        present = np.zeros(n_terms, dtype=bool)
        present[ids] = True
        sorted_ids = self._t.term_order()
        vocab_ids = sorted_ids[present[sorted_ids]]
        column = np.full(n_terms, -1, dtype=np.int64)
        column[vocab_ids] = np.arange(len(vocab_ids))
        col = column[ids]
        n_vocab = len(vocab_ids)
        k1, b = float(self.params["k1"]), float(self.params["b"])
        if self.params["method"] != "lucene":
            # Other variants: bm25s scores the same documents itself (each term id repeated by its count;
            # the order of a document's tokens changes no score). Slower, and only the default is tuned.
            import bm25s

            retriever = bm25s.BM25(k1=k1, b=b, method=self.params["method"], dtype=_csc.DTYPE,
                                   int_dtype=_csc.INT_DTYPE, backend="numpy")
            bounds = np.searchsorted(doc, np.arange(n_docs + 1))
            tfi = tf.astype(np.int64)
            docs = [np.repeat(col[s:e], tfi[s:e]).tolist() for s, e in zip(bounds[:-1], bounds[1:])]
            vocab = {self._t.terms[i]: c for c, i in enumerate(vocab_ids.tolist())}
            retriever.index((docs, vocab), show_progress=False)
            sc = retriever.scores
            matrix = _csc.Matrix(sc["data"], sc["indices"], sc["indptr"], n_docs, retriever.nonoccurrence_array)
            return matrix, vocab_ids, column
        # bm25s's arithmetic, entry by entry (see _bm25_live): idf from math.log stored as float32; a
        # document's length factor in float64 (Python float with a numpy float64 mean); rounded to float32.
        avg_doc_len = mean_length(int(doc_len.sum()), n_docs)
        idf = lucene_idf(np.bincount(col, minlength=n_vocab), n_docs)
        scores = lucene_entries(idf[col], tf, doc_len[doc], avg_doc_len, k1, b)
        return _csc.csc(scores, doc, col, n_docs, n_vocab), vocab_ids, column

    def _vocab_json(self, vocab_ids: np.ndarray) -> str:
        """`json.dumps(vocab, ensure_ascii=False)` of bm25s's vocabulary (terms in column order, then the
        empty token bm25s appends), joined from per-term strings: the whole dict costs far more to encode."""
        if _csc.has_orjson():  # bm25s then writes orjson's compact form
            terms = [self._t.terms[i] for i in vocab_ids.tolist()]
            return _csc.dumps_vocab({**{t: c for c, t in enumerate(terms)}, "": len(terms)})
        quoted = self._quoted
        if len(quoted) < len(self._t.terms):  # each term is quoted once per engine object
            quoted.extend(map(encode_basestring, self._t.terms[len(quoted):]))
        body = ", ".join([f"{quoted[i]}: {c}" for c, i in enumerate(vocab_ids.tolist())] + [f'"": {len(vocab_ids)}'])
        return "{" + body + "}"

    def _save(self, out_dir: Path, matrix: _csc.Matrix, vocab_ids: np.ndarray) -> None:
        """Write what bm25s's `BM25.save(out_dir)` writes, byte for byte, skipping the vocabulary file when
        it already holds this vocabulary (the costliest file to write, and often unchanged by an update)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        _csc.save(out_dir, matrix)
        vocab_path = out_dir / INDEX_FILES[3]
        last = self._written_vocab
        if not (last and last[0] == out_dir.resolve() and last[1] == stat_of(vocab_path)
                and np.array_equal(last[2], vocab_ids)):
            with open(vocab_path, "wt", encoding="utf-8") as f:
                f.write(self._vocab_json(vocab_ids))
            self._written_vocab = (out_dir.resolve(), stat_of(vocab_path), vocab_ids)
        with open(out_dir / INDEX_FILES[4], "w") as f:
            f.write(_csc.params_json(float(self.params["k1"]), float(self.params["b"]), self.params["method"],
                                     matrix.num_docs))

    # -- build, update, query ------------------------------------------------------------------------------
    def defer_writes(self, out_dir: Path) -> bool:
        """From now on, builds and updates into `out_dir` keep a live index in memory and leave `out_dir`
        without an artifact until `flush(out_dir)`; queries through this object give what a written
        artifact gives. Lucene only (the other variants' scores come from bm25s itself): False otherwise."""
        if self.params["method"] != "lucene":
            return False
        self._deferred.add(Path(out_dir).resolve())
        return True

    def flush(self, out_dir: Path) -> None:
        """Write the artifact a deferred build or update left unwritten: the bytes a fresh build writes."""
        out_dir = Path(out_dir)
        held = self._held_for(out_dir)
        if held is not None and not held.written:
            self._write(held.corpus, out_dir)
            held.written, held.stamp = True, Stamp(out_dir)

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        out_dir = Path(out_dir)
        self._loaded = None
        self._held = None
        self.hold(out_dir, corpus)
        key = out_dir.resolve()
        if key not in self._deferred:
            return self._write(corpus, out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        for name in (*INDEX_FILES, NONOCCURRENCE_FILE, DOCS_FILE):  # no stale artifact left to be read
            (out_dir / name).unlink(missing_ok=True)
        content, paths = self._t.doc_counts(corpus)
        doc, ids, tf, doc_len = self._entries(content, paths) if corpus.files else (np.zeros(0, dtype=np.int64),) * 4
        live = LiveIndex(float(self.params["k1"]), float(self.params["b"]), corpus.paths, doc, ids, tf, doc_len,
                         len(self._t.terms))
        self._held = Held(key, corpus, live, Stamp(out_dir))
        return {"documents": len(corpus.files), "vocabulary": live.vocabulary_size()}

    def _write(self, corpus: Corpus, out_dir: Path) -> dict:
        n_vocab = 0
        if corpus.files:
            matrix, vocab_ids, column = self._matrix(corpus)
            self._save(out_dir, matrix, vocab_ids)
            n_vocab = len(vocab_ids)
        paths = [f.path for f in corpus.files]
        write_text_atomic(
            out_dir / DOCS_FILE,
            json.dumps({"paths": paths, "blobs": [f.blob for f in corpus.files]}, ensure_ascii=False) + "\n",
        )
        if corpus.files:
            term_id = self._t.term_id

            def lookup(term: str) -> int | None:
                i = term_id.get(term)
                c = int(column[i]) if i is not None and i < len(column) else -1
                return c if c >= 0 else None

            self._loaded = (out_dir.resolve(), Stamp(out_dir), matrix, paths, lookup)
        return {"documents": len(corpus.files), "vocabulary": n_vocab}

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        # Deferred: the live index moves by the changed files (only those are read and tokenised). Else
        # only changed blobs are tokenised (the rest come from the per-blob counts) and the index is derived
        # again from the counts, which is what keeps it byte-identical to a fresh build.
        out_dir = Path(out_dir)
        held = self._held_for(out_dir)
        if held is None or not self._move(held, corpus, changes):
            return self.build(corpus, out_dir)
        if held.written:  # flushed since: the files on disk are the older revision's
            for name in (*INDEX_FILES, NONOCCURRENCE_FILE, DOCS_FILE):
                (out_dir / name).unlink(missing_ok=True)
            held.written, held.stamp = False, Stamp(out_dir)
            self._loaded = None
        self.hold(out_dir, corpus)
        return {"documents": len(corpus.files), "vocabulary": held.live.vocabulary_size()}

    def _held_for(self, out_dir: Path) -> "Held | None":
        """The live index of `out_dir`, if this object made it and nothing else has written there since."""
        held = self._held
        if held is None or held.out_dir != out_dir.resolve() or held.out_dir not in self._deferred:
            return None
        return held if held.stamp.holds(out_dir) else None

    def _move(self, held: "Held", corpus: Corpus, changes: Sequence[Change]) -> bool:
        """Bring the live index from `held.corpus` to `corpus` by `changes`; False (nothing touched) when the
        changes do not lead from one to the other, and the caller builds afresh."""
        old = held.corpus
        gone, new = [], []
        for c in changes:
            src = c.old_path if c.status == "renamed" and c.old_path else c.path
            if c.status in ("deleted", "modified", "renamed"):
                f = old.get(src)
                if f is None or (c.old_blob is not None and f.blob != c.old_blob):
                    return False
                gone.append(f)
            elif c.status == "added" and old.get(c.path) is not None:
                return False
            if c.status in ("added", "modified", "renamed"):
                f = corpus.get(c.path)
                if f is None or (c.new_blob is not None and f.blob != c.new_blob):
                    return False
                new.append(f)
            elif c.status == "deleted" and corpus.get(c.path) is not None:
                return False
            elif c.status not in ("deleted", "added", "modified", "renamed"):
                return False
        if len(old) - len(gone) + len(new) != len(corpus):
            return False
        live = held.live
        for f in gone:
            live.remove(f.path)
        self._t.doc_counts(corpus, new, before=old)
        for f in new:
            ids, tf, length = self._t.doc_terms(f)
            live.add(f.path, ids, tf, length)
        held.corpus = corpus
        return True

    def query_files(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        out_dir = Path(out_dir)
        held = self._held_for(out_dir)
        if held is not None and not held.written:
            df, term_id = held.live.df, self._t.term_id
            ids = [t for t in (term_id.get(w) for w in dict.fromkeys(self._t.stem(code_tokens(text))))
                   if t is not None and t < len(df) and df[t] > 0]
            return rank(held.live.scores(ids, k), k) if ids else []
        loaded = self._loaded
        if loaded is not None and loaded[0] == out_dir.resolve() and loaded[1].holds(out_dir):
            matrix, paths, lookup = loaded[2:]
        else:
            stamp = Stamp(out_dir)  # before reading: a write meanwhile then fails the next check
            with open(out_dir / DOCS_FILE, encoding="utf-8") as fh:
                paths = json.load(fh)["paths"]
            if not paths:
                return []
            matrix, vocab = _csc.load(out_dir)
            lookup = vocab.get
            self._loaded = (out_dir.resolve(), stamp, matrix, paths, lookup)
        # Query terms in order, each once, as bm25s's get_scores(tokens) would look them up.
        ids = [c for c in (lookup(t) for t in dict.fromkeys(self._t.stem(code_tokens(text)))) if c is not None]
        if not ids:
            return []
        scores = matrix.scores(ids)
        top = top_candidates(scores, k).tolist()  # rank sorts these, not every file
        return rank({paths[i]: float(scores[i]) for i in top}, k)
