"""bm25's artifact of record in bm25s's layout, built, written, read and scored with numpy alone.

The artifact is the folder `bm25s.BM25.save` writes (score matrix in CSC form, one float32 per term and
document; vocabulary; params), so `bm25s.BM25.load` reads it. Building, loading and scoring it here rather
than through bm25s keeps bm25s (and the scipy.sparse, tqdm and asyncio it imports, a quarter of a second
of every process) off the build and query path; each step reproduces bm25s's own code, and
tests/engines/test_bm25_csc.py checks the bytes and the scores against bm25s itself, the oracle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from ctxgauge.engines.bm25._stamp import INDEX_FILES, NONOCCURRENCE_FILE
from ctxgauge.engines._text.keyed import stable_order

DTYPE, INT_DTYPE = "float32", "int32"
"""bm25s's defaults for the scores and the matrix's row indices (and the query ids)."""
DELTA = 0.5
"""bm25s's default delta (read by BM25L and BM25+ only), written in the params file."""


@dataclass
class Matrix:
    """The score matrix of `num_docs` documents: column c (a term) holds `data[indptr[c]:indptr[c + 1]]`
    at rows (documents) `indices[...]`, rows ascending."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    num_docs: int
    nonoccurrence: np.ndarray | None = None
    """BM25L and BM25+ only: each term's score in a document it does not occur in."""

    def scores(self, columns: list[int]) -> np.ndarray:
        """Every document's score for the query terms at `columns` (distinct, query order): bm25s's
        `get_scores_from_ids`, a float32 sum from zero, column by column in query order (`np.add.at`
        there; `+=` here is the same adds, since a column holds each row once)."""
        scores = np.zeros(self.num_docs, dtype=DTYPE)
        ids = np.asarray(columns, dtype=INT_DTYPE)
        starts, ends = self.indptr[ids], self.indptr[ids + 1]
        for s, e in zip(starts.tolist(), ends.tolist()):
            scores[self.indices[s:e]] += self.data[s:e]
        if self.nonoccurrence is not None:
            scores += self.nonoccurrence[ids].sum()
        return scores


def csc(scores: np.ndarray, doc: np.ndarray, col: np.ndarray, n_docs: int, n_vocab: int) -> Matrix:
    """The matrix of entries (doc, col) -> score, given sorted by document, then column: bm25s's
    `_np_csc_python` over the arrays `BM25.index` passes it (rows and columns as int32, scores as
    float32). Ordering by (column, row) has one answer, as no entry repeats; a stable sort by column
    finds it, the rows being ascending already."""
    rows = doc.astype(INT_DTYPE)
    cols = col.astype(INT_DTYPE)
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols, minlength=n_vocab), out=indptr[1:])
    order = stable_order(cols)
    return Matrix(scores[order].astype(DTYPE), rows[order], indptr, n_docs)


def params_json(k1: float, b: float, method: str, num_docs: int) -> str:
    """The params file `BM25.save` writes for a numpy-backend BM25 with these parameters."""
    from ctxgauge.cache import distribution_version

    params = dict(k1=k1, b=b, delta=DELTA, method=method, idf_method=method, dtype=DTYPE, int_dtype=INT_DTYPE,
                  num_docs=num_docs, version=distribution_version("bm25s"), backend="numpy")
    return json.dumps(params, indent=4)


@cache
def has_orjson() -> bool:
    """Whether bm25s writes its vocabulary with orjson (it imports orjson when it can). Looked up once."""
    from importlib.util import find_spec

    return find_spec("orjson") is not None


def dumps_vocab(vocab: dict[str, int]) -> str:
    """The vocabulary file's text as bm25s writes it when orjson is installed (`has_orjson`): orjson's
    compact form. Without orjson bm25s writes `json.dumps(vocab, ensure_ascii=False)`, which bm25 joins
    from per-term strings itself, faster."""
    import orjson

    return orjson.dumps(vocab).decode("utf-8")


def save(out_dir: Path, matrix: Matrix) -> None:
    """The three score files (and BM25L's and BM25+'s non-occurrence scores), as `BM25.save` writes them."""
    for name, array in zip(INDEX_FILES[:3], (matrix.data, matrix.indices, matrix.indptr)):
        np.save(out_dir / name, array, allow_pickle=False)
    if matrix.nonoccurrence is not None:
        np.save(out_dir / NONOCCURRENCE_FILE, matrix.nonoccurrence, allow_pickle=False)


def load(out_dir: Path) -> tuple[Matrix, dict[str, int]]:
    """The matrix and the vocabulary (term -> column) of an artifact, as `BM25.load(out_dir)` reads them."""
    with open(out_dir / INDEX_FILES[4], encoding="utf-8") as f:
        params = json.load(f)
    data, indices, indptr = (np.load(out_dir / name, allow_pickle=False) for name in INDEX_FILES[:3])
    nonoccurrence = None
    if params.get("method") in ("bm25l", "bm25+"):
        nonoccurrence = np.load(out_dir / NONOCCURRENCE_FILE, allow_pickle=False)
    with open(out_dir / INDEX_FILES[3], encoding="utf-8") as f:
        vocab = json.load(f)
    return Matrix(data, indices, indptr, int(params["num_docs"]), nonoccurrence), vocab
