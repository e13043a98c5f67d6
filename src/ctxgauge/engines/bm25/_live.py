"""bm25's live index: term postings kept up to date file by file, scored at query time like bm25s.

bm25's artifact of record is bm25s's precomputed score matrix (one float32 per term and document). BM25's
idf and mean document length move with any change, so every entry moves and keeping that matrix current
costs the whole index on every commit. This index keeps what the matrix is computed from instead (each
term's postings: document slot and term frequency; each document's length; document frequencies) and
computes only the entries a query reads, with the same functions the matrix is built with
(`lucene_idf`, `lucene_entries`) and summed in bm25s's order: a float32 sum over the query's distinct
terms in query order, from zero, as `BM25.get_scores_from_ids` sums the matrix's columns. So its scores
are the same floats as a fresh build's, bit for bit (tested over random corpora and updates).

Updates cost the changed documents, in numpy: removing a document marks its slot dead, adding one appends
its entries to a log that a query reads beside the base postings (and that is folded into them once it
grows). Slots are never reused, so a slot names one document for the index's whole life.
"""

from __future__ import annotations

import math

import numpy as np


def lucene_idf(df: np.ndarray, n_docs: int) -> np.ndarray:
    """bm25s's Lucene idf of each document frequency, stored as float32: log(1 + (N - df + .5) / (df + .5))
    in Python floats (math.log), computed once per distinct frequency."""
    dfs, which = np.unique(np.asarray(df, dtype=np.int64), return_inverse=True)
    idf = np.array([math.log(1 + (n_docs - d + 0.5) / (d + 0.5)) for d in dfs.tolist()], dtype=np.float64)
    return idf[which.reshape(-1)].astype(np.float32)


def lucene_entries(idf: np.ndarray, tf: np.ndarray, doc_len: np.ndarray, avg_doc_len: np.float64, k1: float,
                   b: float) -> np.ndarray:
    """bm25s's score of (term, document) entries, elementwise: the float32 idf widened to float64, times
    tf / (tf + k1 (1 - b + b dl / avgdl)) in float64 (bm25s's Python-float k1 and b, numpy float64 mean),
    rounded to float32. Elementwise, so an entry is the same float whichever other entries it is computed
    with: a whole-matrix build and a query over a few postings agree bit for bit."""
    # path_weight=0 leaves path terms with frequency 0 in the index; when every document is empty too, the
    # mean length is 0 and their entries are NaN, as in bm25s: never returned (a hit scores above 0).
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = k1 * ((1 - b) + b * doc_len.astype(np.float64) / avg_doc_len)
        tf64 = tf.astype(np.float64)
        return (idf.astype(np.float64) * (tf64 / (norm + tf64))).astype(np.float32)


def mean_length(total: int, n_docs: int) -> np.float64:
    """numpy's mean of the documents' int64 lengths: their float64 sum is exact (integers below 2**53, in
    any order), divided once, so a running total gives the same float as `lengths.mean()`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float64(total) / n_docs


class LiveIndex:
    """Postings of every term over the documents held, updated document by document.

    Term ids are the engine's interned ids; a document is added with its distinct term ids (sorted) and
    their frequencies (content and path counts summed), which the index keeps per slot, so a removal needs
    only the path. A removal only marks its slot dead; an addition appends its entries to a log. A query
    reads a term's base postings and its log entries, live slots only; the log is folded into the base (dead
    entries dropped) when a query finds it grown past a quarter of the base, so a change costs O(its terms)
    amortised and no Python step runs per posting (however many documents an update adds, it is folded in
    once)."""

    COMPACT_MIN = 4096
    """A query folds the log in when it holds more entries than this and a quarter of the base."""

    def __init__(self, k1: float, b: float, paths: list[str], doc: np.ndarray, ids: np.ndarray, tf: np.ndarray,
                 doc_len: np.ndarray, n_terms: int):
        """Start from every document at once (what a full build derives): `doc`, `ids`, `tf` are the
        entries (document number in `paths`, term id, frequency), `doc_len` each document's length."""
        self.k1, self.b = k1, b
        doc, ids, tf = (np.asarray(a, dtype=np.int64) for a in (doc, ids, tf))
        if len(doc) > 1 and not (doc[1:] >= doc[:-1]).all():  # a build gives them by document already
            order = np.argsort(doc, kind="stable")
            doc, ids, tf = doc[order], ids[order], tf[order]
        # Each first document's term ids are a run of `ids` (`_first_ids[_first_ptr[d]:_first_ptr[d + 1]]`);
        # an added document's are kept as given (`_added_ids`, by slot).
        self._first_ids = ids
        self._first_ptr = np.searchsorted(doc, np.arange(len(paths) + 1)).astype(np.int64)
        self._added_ids: dict[int, np.ndarray] = {}
        self.paths: list[str] = list(paths)  # slot -> path ("" once removed)
        self.slot = {p: i for i, p in enumerate(self.paths)}
        self.lens = np.asarray(doc_len, dtype=np.int64).copy()
        self.alive = np.ones(len(self.paths), dtype=bool)
        self.total = int(self.lens.sum())
        self.df = np.bincount(ids, minlength=n_terms).astype(np.int64)
        self._fold(doc, ids, tf)
        self._log: list[tuple[np.ndarray, int, np.ndarray]] = []  # (term ids, slot, frequencies) added since
        self._logged = 0
        self._pending: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # the log concatenated

    def _fold(self, doc: np.ndarray, ids: np.ndarray, tf: np.ndarray) -> None:
        """Make (doc, ids, tf) the base postings: ordered by term, then as given."""
        order = np.argsort(ids, kind="stable")
        self._slots = doc[order].astype(np.int64)
        self._tfs = tf[order].astype(np.int64)
        counts = np.bincount(ids, minlength=len(self.df))
        self._ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    @property
    def n_docs(self) -> int:
        return len(self.slot)

    def vocabulary_size(self) -> int:
        """How many terms occur in some document (the artifact's vocabulary, without bm25s's empty token)."""
        return int(np.count_nonzero(self.df))

    def remove(self, path: str) -> None:
        """Take out the document at `path` (held), by the term ids it was added with."""
        slot = self.slot.pop(path)
        self.paths[slot] = ""
        self.alive[slot] = False
        self.total -= int(self.lens[slot])
        if slot + 1 < len(self._first_ptr):
            ids = self._first_ids[self._first_ptr[slot]:self._first_ptr[slot + 1]]
        else:
            ids = self._added_ids.pop(slot)
        self.df[ids] -= 1

    def add(self, path: str, ids: np.ndarray, tf: np.ndarray, length: int) -> None:
        """Put in a document at `path` (not held) with distinct terms `ids`, frequencies `tf`, `length` tokens."""
        slot = len(self.paths)
        self.paths.append(path)
        self.slot[path] = slot
        if slot >= len(self.lens):
            grow = max(len(self.lens), 16)
            self.lens = np.concatenate([self.lens, np.zeros(grow, dtype=np.int64)])
            self.alive = np.concatenate([self.alive, np.zeros(grow, dtype=bool)])
        self.lens[slot] = length
        self.alive[slot] = True
        self.total += length
        top = int(ids.max(initial=-1)) + 1
        if top > len(self.df):
            self.df = np.concatenate([self.df, np.zeros(max(top - len(self.df), len(self.df) // 2), dtype=np.int64)])
        self.df[ids] += 1
        self._added_ids[slot] = ids
        self._log.append((ids, slot, tf))
        self._logged += len(ids)
        self._pending = None

    def _compact(self) -> None:
        """Fold the log into the base postings and drop the entries of removed documents: each term's base
        postings, then its log entries in the order logged (what one stable sort of both by term gives).
        Only the log is sorted; its entries are inserted at the end of their term's base run."""
        doc, ids, tf = self._log_arrays()
        order = np.argsort(ids, kind="stable")
        doc, ids, tf = doc[order], ids[order], tf[order]
        ptr = np.concatenate([self._ptr, np.full(len(self.df) + 1 - len(self._ptr), self._ptr[-1], dtype=np.int64)])
        at = ptr[ids + 1]  # np.insert keeps the order of values inserted at one place
        slots, tfs = np.insert(self._slots, at, doc), np.insert(self._tfs, at, tf)
        keep = self.alive[slots]
        ends = ptr + np.concatenate([[0], np.cumsum(np.bincount(ids, minlength=len(self.df)))])
        self._slots, self._tfs = slots[keep], tfs[keep]
        self._ptr = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])[ends]
        self._log, self._logged, self._pending = [], 0, None

    def _log_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._pending is None:
            if self._log:
                ids = np.concatenate([i for i, _, _ in self._log])
                doc = np.concatenate([np.full(len(i), s, dtype=np.int64) for i, s, _ in self._log])
                tf = np.concatenate([f for _, _, f in self._log])
            else:
                ids = doc = tf = np.zeros(0, dtype=np.int64)
            self._pending = (doc, ids.astype(np.int64), tf.astype(np.int64))
        return self._pending

    def _postings(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """(slots, frequencies) of term t over the documents held."""
        if t + 1 < len(self._ptr):
            s, e = self._ptr[t], self._ptr[t + 1]
            slots, tfs = self._slots[s:e], self._tfs[s:e]
        else:
            slots, tfs = self._slots[:0], self._tfs[:0]
        doc, ids, tf = self._log_arrays()
        if len(ids):
            mine = ids == t
            slots, tfs = np.concatenate([slots, doc[mine]]), np.concatenate([tfs, tf[mine]])
        live = self.alive[slots]
        return slots[live], tfs[live]

    def scores(self, terms: list[int], k: int | None = None) -> dict[str, float]:
        """path -> score of every document some of `terms` (distinct term ids, query order) occurs in: the
        floats `get_scores_from_ids(terms)` gives on a fresh build's matrix (others score 0 there). With
        `k`, only the documents that can be in the top k (`top_candidates`)."""
        n = self.n_docs
        if not n:
            return {}
        if self._logged > max(len(self._slots) // 4, self.COMPACT_MIN):  # once per query, not per addition
            self._compact()
        avg = mean_length(self.total, n)
        acc = np.zeros(len(self.paths), dtype=np.float32)
        touched = []
        for t in terms:
            slots, tfs = self._postings(t)
            if not len(slots):
                continue
            idf = lucene_idf(self.df[t:t + 1], n)  # one term: broadcast over its postings
            # a term's postings hold each slot once, so this is bm25s's np.add.at, float32 in query order
            acc[slots] += lucene_entries(idf, tfs, self.lens[slots], avg, self.k1, self.b)
            touched.append(slots)
        if not touched:
            return {}
        hit = np.unique(np.concatenate(touched))
        values = acc[hit]
        if k is not None:
            keep = top_candidates(values, k)
            hit, values = hit[keep], values[keep]
        paths = self.paths
        return {paths[s]: float(v) for s, v in zip(hit.tolist(), values.tolist())}


def top_candidates(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of every positive score that can be in a top k ranked by score then path: all above the k-th
    largest and every tie with it (which of those ties wins is the path's to decide, in `rank`, which also
    drops scores of 0 or less). Picked in numpy, so `rank` sorts about k entries, not every file."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) <= k or k <= 0:
        return positive if k > 0 else positive[:0]
    values = scores[positive]
    kth = np.partition(values, len(values) - k)[len(values) - k]
    return positive[values >= kth]
