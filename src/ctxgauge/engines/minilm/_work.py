"""What decides minilm's work and where it is kept: the key of a file version's chunks and vectors
(`WorkKey`), the work cache's two stages for them (`chunk_stage` per file version, `text_stage` per chunk
text), both keyed by the weights' own hash (`cached_weights_hash`), and the opt-in sharing of embedded chunks
between engine objects of one process (`shared_embeddings`). Knows nothing of chunking or the model's passes.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from typing import Iterator, NamedTuple, Sequence

import ctxgauge.cache as work_cache
from ctxgauge.engines.minilm._model import DIM, WEIGHTS_FILE, WINDOW, model_dir, weights_hash

_VECTOR_MODULES = ("ctxgauge.engines.minilm._model", "ctxgauge.engines.minilm._vectors")
"""The code a chunk text's vector depends on (not the chunking)."""


class WorkKey(NamedTuple):
    """`MiniLMEngine._work_key`: the chunking (caps) and then the `_text_key` (rounding, precision, threads)."""

    max_chunks: int
    skip_generated: bool
    locale_chunks: int
    test_chunks: int | None
    decimals: int
    precision: str
    threads: int


# Opt-in, process-wide sharing of embedded chunks between engine objects (see `shared_embeddings`).
_shared: dict[tuple, dict] | None = None
_shared_depth = 0


@contextmanager
def shared_embeddings() -> Iterator[None]:
    """Within this block, minilm engine objects created with the same chunking and rounding share their
    embedded chunks (a chunk's vector is a function of its text alone, so sharing changes no bit).

    For replay and qa work, where several engine objects (minilm itself, hybrid's sub-engine, a `--vs`
    pair) embed the same files. Never around Rebuild Identity, which must build cold or it would measure
    the cache. Leaving the outermost block drops everything shared.
    """
    global _shared, _shared_depth
    if _shared_depth == 0:
        _shared = {}
    _shared_depth += 1
    try:
        yield
    finally:
        _shared_depth -= 1
        if _shared_depth == 0:
            _shared = None


def shared_table(key: tuple) -> dict:
    """The table engine objects with this key share inside `shared_embeddings()`; a fresh one outside it."""
    return {} if _shared is None else _shared.setdefault(key, {})


def cached_weights_hash(store: work_cache.WorkCache) -> str:
    """The weights' SHA-256, remembered in the work cache by the file's stat (path, size, mtime, ctime,
    inode: what any rewrite of the file changes, as git's index trusts), so a warm process does not hash
    90 MB again (about 0.2 CPU seconds, a sixth of a warm query)."""
    path = model_dir() / WEIGHTS_FILE
    st = path.stat()
    stamp = f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}"
    key = hashlib.sha256(stamp.encode("utf-8", "surrogateescape")).hexdigest()
    stage = store.stage("minilm.weights-hash", work_cache.stage_identity(("ctxgauge.engines.minilm._model",)))
    known = stage.get(key)
    if known is not None and known.startswith(b"sha256:"):
        return known.decode()
    digest = weights_hash()
    stage.put(key, digest.encode())
    return digest


def chunk_stage(work: WorkKey, backend: str, modules: Sequence[str], libraries: Sequence[str]):
    """The work cache's stage for a file version's chunks and vectors (None when the cache is off): keyed by
    the chunking and embedding code (`modules`), the rounding and caps, the library versions and the weights'
    own hash, never by batch size or threads (which by design change no bit)."""
    store = work_cache.current()
    if store is None:
        return None
    config = {"decimals": work.decimals, "max_chunks_per_file": work.max_chunks,
              "skip_generated": work.skip_generated, "locale_chunks": work.locale_chunks,
              "test_chunks": work.test_chunks,
              "window": WINDOW, "dim": DIM, "backend": backend, "threads": work.threads,
              "weights": cached_weights_hash(store), "format": 2}
    return store.stage("minilm.chunks", work_cache.stage_identity(tuple(modules), config, tuple(libraries)))


def text_stage(decimals: int, threads: int, backend: str, libraries: Sequence[str]):
    """The work cache's stage for one chunk text's vector (None when the cache is off). A vector is a
    function of the text alone, so this stage does not depend on the chunking: only on the model, its
    backend, the window and the rounding."""
    store = work_cache.current()
    if store is None:
        return None
    config = {"decimals": decimals, "window": WINDOW, "dim": DIM, "backend": backend, "threads": threads,
              "weights": cached_weights_hash(store), "format": 1}
    return store.stage("minilm.chunk-vectors", work_cache.stage_identity(_VECTOR_MODULES, config, tuple(libraries)))
