"""How much embedding work a replay's commits cause: chunks whose text was never seen before, per commit.

    python benchmarks/chunk_churn.py REPO [--rev REV] [--commits 50] [--max-chunks 64]

Walks the commits `ctxgauge replay REPO --rev REV --commits N` would score (oldest first, each parent's corpus
listed from the previous one, as replay does), chunks every file version not chunked before with minilm's
chunker (`engines/minilm/_chunks.py` as imported: point PYTHONPATH at another checkout to measure its chunker), and
counts the chunks whose exact text is new: minilm embeds a chunk's text once, so these are the embedding work.
Needs no model run, only the packaged tokenizer, so it costs seconds, not the hours an embedding replay does.

Prints the cold build (the first parent), then per commit the files new since the previous parent, their
chunks and how many of those are new texts (and their tokens), and the totals over the commits after the first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from ctxgauge.corpus import Corpus
import ctxgauge.engines.minilm._chunks as _chunks
from ctxgauge.engines.minilm._model import WINDOW, WordPiece, model_dir
from ctxgauge.git import Repo
from ctxgauge.suites.replay._select import select_commits


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--commits", type=int, default=50)
    ap.add_argument("--max-files", type=int, default=8)
    ap.add_argument("--max-chunks", type=int, default=64)
    ap.add_argument("--reach-share", type=float, help="override _chunks.REACH_SHARE (when the chunker has it)")
    args = ap.parse_args(argv)
    if args.reach_share is not None:
        _chunks.REACH_SHARE = args.reach_share

    tokenizer = WordPiece(model_dir())
    repo = Repo(args.repo)
    t0, c0 = time.perf_counter(), os.times()
    head = repo.resolve(args.rev)
    cases = list(reversed(select_commits(repo, head, commits=args.commits, max_files=args.max_files).eligible))
    seen_files: set[tuple[str, str]] = set()
    seen_texts: set[str] = set()
    rows = []
    corpus = None
    cache: dict[str, bool] = {}
    for n, case in enumerate(cases):
        corpus = Corpus.from_git(repo, case.parent, binary_cache=cache) if corpus is None else \
            corpus.at(case.parent, binary_cache=cache)
        todo = sorted((f for f in corpus.files if (f.blob, f.path) not in seen_files), key=lambda f: (f.blob, f.path))
        chunks = new = new_tokens = 0
        fresh: list[str] = []
        for f, data in corpus.iter_bytes(todo):
            seen_files.add((f.blob, f.path))
            text = data.decode("utf-8", "replace")
            if _chunks.skip_reason(f.path, text):
                text = ""
            for c in _chunks.chunk_file(f.path, text, tokenizer, WINDOW, args.max_chunks):
                chunks += 1
                if c.text not in seen_texts:
                    seen_texts.add(c.text)
                    fresh.append(c.text)
        new = len(fresh)
        new_tokens = sum(len(ids) for ids in tokenizer.ids(fresh))
        rows.append((case.sha[:12], len(todo), chunks, new, new_tokens))
        label = "cold" if n == 0 else f"{n:4d}"
        print(f"{label} {case.sha[:12]} files {len(todo):5d} chunks {chunks:6d} new {new:6d} tokens {new_tokens:8d}",
              flush=True)
    c1 = os.times()
    later = rows[1:]
    print(f"\n{len(cases)} commits; cold: {rows[0][1]} files, {rows[0][3]} chunks, {rows[0][4]} tokens")
    if later:
        print(f"after the first ({len(later)} commits): files {sum(r[1] for r in later)}, chunks of those files "
              f"{sum(r[2] for r in later)}, new chunks {sum(r[3] for r in later)} "
              f"(median {statistics.median(r[3] for r in later)}, max {max(r[3] for r in later)}), "
              f"new tokens {sum(r[4] for r in later)}")
    print(f"chunker: {_chunks.__file__} REACH_SHARE {getattr(_chunks, 'REACH_SHARE', None)}; "
          f"{time.perf_counter() - t0:.1f} s wall, "
          f"{c1.user - c0.user + c1.system - c0.system:.1f} CPU s; load {os.getloadavg()}")
    repo.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
