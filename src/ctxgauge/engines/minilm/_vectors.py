"""minilm's stored vectors: int16 rounding, a file version's work-cache entry, the artifact's files, scoring.

Vectors are L2-normalised by the model, then stored as int16 `round(v * 10**decimals)` (decimals <= 4, so
|value| <= 10**4): half the bytes of float32 and the same values float32-after-rounding would hold. Scores are
exact integer dot products computed in float64 (every product and partial sum is an integer below 2**53, so
BLAS order and threads cannot change a bit); a request is embedded and rounded the same way. At 4 decimals
scores moved by at most 1.6e-4 from float32 and the top 10 chunks kept their order (6 of 6 queries; 5 of 6
at 3 decimals, 1 of 6 at 2).

Artifact (the whole directory is the record, and holds only these plainly named files): `vectors.npy` (int16,
one row per chunk, in `chunks.json` order), `chunks.json` (one row per chunk: path, blob, chunk index, first
and last line; files in corpus order, chunks in file order) and `params.json` (written by the engine).
"""

from __future__ import annotations

import hashlib
import io
import json
from itertools import groupby
from pathlib import Path
from typing import Iterable

import numpy as np

from ctxgauge._io import canonical_json, read_json, write_bytes_atomic, write_text_atomic
from ctxgauge.engines.minilm._model import DIM

VECTORS_FILE, CHUNKS_FILE, PARAMS_FILE = "vectors.npy", "chunks.json", "params.json"
SCORE_ROWS = 1 << 16  # rows scored per block, to bound the float64 copy of a large vectors.npy

Rows = list[tuple[int, int, int]]  # (chunk index, first line, last line) of each chunk of one file version
Unit = tuple[Rows, np.ndarray]  # a file version's chunk rows and their int16 vectors


def round_vectors(vectors: np.ndarray, decimals: int) -> np.ndarray:
    """int16 `rint(v * 10**decimals)`."""
    # float64 so the scaling adds no rounding of its own; rint rounds half to even, the same everywhere
    return np.rint(np.asarray(vectors, dtype=np.float64) * 10.0 ** decimals).astype(np.int16)


def unit_id(blob: str, path: str) -> str:
    """A file version's content id in the work cache: its chunks begin with its path, so both count."""
    return hashlib.sha256(f"{blob}\0{path}".encode("utf-8", "surrogateescape")).hexdigest()


def text_id(text: str) -> str:
    """A chunk text's content id (its vector is a function of the text alone)."""
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def vector_to_bytes(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype="<i2").tobytes()


def vector_from_bytes(payload: bytes | None) -> np.ndarray | None:
    """The vector `vector_to_bytes` wrote, or None for a missing entry or one of the wrong size."""
    if payload is None or len(payload) != 2 * DIM:
        return None
    return np.frombuffer(payload, dtype="<i2").astype(np.int16)


def unit_to_bytes(unit: Unit) -> bytes:
    rows, vectors = unit
    head = json.dumps([list(r) for r in rows], separators=(",", ":")).encode() + b"\n"
    return head + np.ascontiguousarray(vectors, dtype="<i2").tobytes()


def unit_from_bytes(payload: bytes | None) -> Unit | None:
    """The entry `unit_to_bytes` wrote, or None for a missing entry or one this code cannot read."""
    if payload is None:
        return None
    try:
        head, _, body = payload.partition(b"\n")
        rows = [(int(i), int(a), int(b)) for i, a, b in json.loads(head)]
        vectors = np.frombuffer(body, dtype="<i2").astype(np.int16).reshape(len(rows), DIM)
    except (ValueError, TypeError):
        return None  # embed again
    return rows, vectors


def write_vectors(out_dir: Path, units: Iterable[tuple[str, str, Unit]]) -> int:
    """`vectors.npy` and `chunks.json` of (path, blob, unit) in the given order; returns the chunk count."""
    lines, blocks = [], []
    for path, blob, (rows, vectors) in units:
        lines.extend(canonical_json({"path": path, "blob": blob, "chunk": i, "lines": [a, b]}) for i, a, b in rows)
        blocks.append(vectors)
    matrix = np.concatenate(blocks) if blocks else np.zeros((0, DIM), dtype=np.int16)
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(matrix, dtype=np.int16), allow_pickle=False)
    write_bytes_atomic(out_dir / VECTORS_FILE, buf.getvalue())
    # One chunk per line: still one JSON document, and a diff between two artifacts reads row by row.
    write_text_atomic(out_dir / CHUNKS_FILE, "[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n")
    return len(lines)


def read_units(out_dir: Path) -> dict[tuple[str, str], Unit]:
    """Every (blob, path)'s unit in an artifact; empty when there is none or it cannot be read."""
    try:
        rows = read_json(out_dir / CHUNKS_FILE)
        vectors = np.load(out_dir / VECTORS_FILE, allow_pickle=False)
        if vectors.shape != (len(rows), DIM) or vectors.dtype != np.int16:
            return {}
        units, at = {}, 0
        for key, group in groupby(rows, key=lambda r: (r["blob"], r["path"])):
            unit_rows = [(int(r["chunk"]), int(r["lines"][0]), int(r["lines"][1])) for r in group]
            units[key] = (unit_rows, vectors[at:at + len(unit_rows)].copy())
            at += len(unit_rows)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return {}
    return units


def chunk_scores(out_dir: Path, query: np.ndarray) -> tuple[list[dict], np.ndarray]:
    """The artifact's chunk rows and each chunk's integer dot product with the rounded int16 `query`."""
    rows = read_json(out_dir / CHUNKS_FILE)
    if not rows:
        return [], np.zeros(0, dtype=np.float64)
    vectors = np.load(out_dir / VECTORS_FILE, mmap_mode="r", allow_pickle=False)
    q = query.astype(np.float64)
    scores = np.empty(len(rows), dtype=np.float64)
    for start in range(0, len(rows), SCORE_ROWS):
        scores[start:start + SCORE_ROWS] = vectors[start:start + SCORE_ROWS].astype(np.float64) @ q
    return rows, scores


def best_per_file(out_dir: Path, query: np.ndarray, decimals: int,
                  scored: tuple[list[dict], np.ndarray] | None = None) -> dict[str, float]:
    """Each file's best chunk cosine to the rounded int16 `query` (exact integer arithmetic, then scaled);
    `scored` is `chunk_scores`' answer when the caller has it already."""
    rows, scores = scored if scored is not None else chunk_scores(out_dir, query)
    if not rows:
        return {}
    paths = [r["path"] for r in rows]
    starts = [i for i in range(len(paths)) if i == 0 or paths[i] != paths[i - 1]]
    best = np.maximum.reduceat(scores, starts)
    scale = 10.0 ** (2 * decimals)
    return {paths[i]: float(s) / scale for i, s in zip(starts, best)}
