"""Scoring for the graph engine: BM25 over per-file fields, personalised PageRank over imports.

A field (a file's names, a file's content) is stored as postings in compressed-column form: the terms
sorted, and per term a run of (document index, term frequency) pairs in document order (`postings`,
`Field`). Both scores are plain numpy with a fixed order of operations, so a query gives the same bits on
every run: element-wise array arithmetic, `np.bincount` (a sequential loop in input order) for every
scatter-add, and `math.fsum` (exact, so independent of order and of SIMD width) for every sum to a scalar.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np


def postings(docs: Sequence[Mapping[str, int]]) -> dict[str, list]:
    """The field of `docs` (term -> frequency per document) as stored in the artifact (see `field`)."""
    ids: dict[str, int] = {}
    arrays = []
    for doc in docs:
        arrays.append((np.fromiter((ids.setdefault(t, len(ids)) for t in doc), dtype=np.int64, count=len(doc)),
                       np.fromiter(doc.values(), dtype=np.int64, count=len(doc))))
    return field(arrays, list(ids))


def field(docs: Sequence[tuple[np.ndarray, np.ndarray]], terms: Sequence[str]) -> dict[str, list]:
    """A field as stored in the artifact, from each document's distinct term ids and their frequencies
    (`terms[id]` is the term): `terms` sorted, `offsets` (len(terms) + 1: term j's pairs are positions
    offsets[j]..offsets[j+1]), and `docs` and `tf`, the (document index, frequency) pairs in term order,
    then document order. Which ids name the terms does not matter: only the terms' own order is read."""
    lengths = np.fromiter((len(ids) for ids, _ in docs), dtype=np.int64, count=len(docs))
    if not lengths.sum():
        return {"terms": [], "offsets": [0], "docs": [], "tf": []}
    doc_index = np.repeat(np.arange(len(docs), dtype=np.int64), lengths)
    ids = np.concatenate([d[0] for d in docs])
    tf = np.concatenate([d[1] for d in docs])
    used = sorted(np.unique(ids).tolist(), key=terms.__getitem__)
    position = np.zeros(max(used) + 1, dtype=np.int64)
    position[used] = np.arange(len(used), dtype=np.int64)
    column = position[ids]
    order = np.lexsort((doc_index, column))
    offsets = np.concatenate([[0], np.cumsum(np.bincount(column, minlength=len(used)))])
    return {"terms": [terms[i] for i in used], "offsets": offsets.tolist(), "docs": doc_index[order].tolist(),
            "tf": tf[order].tolist()}


class Field:
    """One stored field read for queries: term -> (document indices, frequencies) as numpy arrays."""

    def __init__(self, stored: Mapping[str, list]):
        self._column = {t: j for j, t in enumerate(stored["terms"])}
        self._offsets = stored["offsets"]
        self._docs = np.asarray(stored["docs"], dtype=np.int64)
        self._tf = np.asarray(stored["tf"], dtype=np.float64)

    def __contains__(self, term: str) -> bool:
        return term in self._column

    def get(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        j = self._column.get(term)
        if j is None:
            return None
        lo, hi = self._offsets[j], self._offsets[j + 1]
        return self._docs[lo:hi], self._tf[lo:hi]


def bm25(terms: Sequence[str], field: Field, lengths: np.ndarray, groups: np.ndarray,
         *, k1: float, b: float) -> np.ndarray:
    """BM25 (idf = ln(1 + (N - df + 0.5) / (df + 0.5)), Lucene's non-negative form) of every document for
    the distinct `terms`. Length normalisation uses the mean length of the document's own group
    (`groups[i]`, an integer), so short code documents are not judged against long Markdown or JSON ones."""
    n = len(lengths)
    scores = np.zeros(n, dtype=np.float64)
    if n == 0:
        return scores
    avg = np.ones(n, dtype=np.float64)
    for g in sorted(set(groups.tolist())):
        members = groups == g
        mean = math.fsum(lengths[members].tolist()) / int(members.sum())
        avg[members] = mean if mean > 0 else 1.0
    norm = k1 * (1.0 - b + b * lengths / avg)
    for term in sorted(set(terms)):  # fixed term order: float addition is not associative
        found = field.get(term)
        if found is None:
            continue
        docs, tf = found
        idf = math.log(1.0 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
        scores[docs] += idf * tf * (k1 + 1.0) / (tf + norm[docs])
    return scores


def personalised_pagerank(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, seed: np.ndarray,
                          *, damping: float, iterations: int, tolerance: float) -> np.ndarray:
    """Stationary scores of a walk that, at each step, follows an edge with probability `damping` (choosing
    among the node's out-edges in proportion to `weight`) and otherwise restarts at a node drawn from
    `seed` (a distribution). A node without out-edges restarts with all its mass. Stops after
    `iterations` steps, or earlier once the L1 change of a step is below `tolerance`."""
    if n == 0:
        return np.zeros(0, dtype=np.float64)
    out_weight = np.bincount(src, weights=weight, minlength=n)
    share = weight / out_weight[src] if len(src) else weight
    dangling = out_weight == 0
    r = seed.astype(np.float64).copy()
    for _ in range(int(iterations)):
        spread = np.bincount(dst, weights=r[src] * share, minlength=n)
        lost = math.fsum(r[dangling].tolist())
        new = (1.0 - damping) * seed + damping * (spread + lost * seed)
        delta = math.fsum(np.abs(new - r).tolist())
        r = new
        if delta < tolerance:
            break
    return r
