"""Per-query latency cost of spans, in one run: each built-in engine with spans (the default) against the
same engine with `spans=false`, on the same build inputs and the same requests.

    PYTHONPATH=src python benchmarks/span_latency.py [--source REPO] [--queries 40] [-k 10] [-e ENGINE ...]

The requests are the source's recent commit subjects (the bundled sample by default). Each variant gets
its own engine object and build (builds are not timed); then every request is asked of both variants in
turn (off, then on: the machine's noise falls on both alike), after one warm-up request each. The span
ranker's per-blob caches start empty and fill as the requests go, as they do in a replay. The rankings
are checked equal first (files and scores): the cost is of the same answers plus their spans. Prints the
median and 90th percentile per variant and the median ratio on / off.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ctxgauge.corpus import open_corpus
from ctxgauge.engines import engine_available, get_engine
from ctxgauge.sample import materialize_sample
from ctxgauge.suites._requests import recent_requests

ENGINES = ("grep", "bm25", "graph", "history", "fusion", "minilm", "hybrid")


def without_spans(spec: str) -> str:
    return spec[:-1] + ",spans=false)" if spec.endswith(")") else spec + "(spans=false)"


def p90(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(round(0.9 * len(xs))) - 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, help="a git repository (default: the bundled sample)")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("-e", "--engine", action="append", help=f"engine spec (repeat; default {', '.join(ENGINES)})")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="span-latency-") as tmp:
        source = args.source or materialize_sample(Path(tmp) / "sample")
        corpus = open_corpus(source)
        requests = recent_requests(corpus, args.queries)
        print(f"{Path(source).name}: {len(corpus.files)} files, {len(requests)} requests, k={args.k}")
        print(f"{'engine':<10} {'off median':>11} {'on median':>10} {'off p90':>9} {'on p90':>9} {'ratio':>6}")
        for spec in args.engine or ENGINES:
            off, on = get_engine(without_spans(spec)), get_engine(spec)
            ok, why = engine_available(off)
            if not ok:
                print(f"{spec:<10} skipped: {why}")
                continue
            dirs = {}
            for name, e in (("off", off), ("on", on)):
                d = dirs[name] = Path(tmp) / f"{spec}-{name}"
                d.mkdir()
                e.build(corpus, d)
                e.query(d, requests[0], args.k)  # warm-up (models, artifacts loaded)
            seconds: dict[str, list[float]] = {"off": [], "on": []}
            for q in requests:
                answers = {}
                for name, e in (("off", off), ("on", on)):
                    t = time.perf_counter()
                    hits = e.query(dirs[name], q, args.k)
                    seconds[name].append(time.perf_counter() - t)
                    answers[name] = [(h.path, h.score) for h in hits]
                if answers["off"] != answers["on"]:
                    raise SystemExit(f"{spec}: spans changed the ranking of {q!r}")
            ms = {n: [s * 1000 for s in v] for n, v in seconds.items()}
            m_off, m_on = statistics.median(ms["off"]), statistics.median(ms["on"])
            print(f"{spec:<10} {m_off:>9.2f}ms {m_on:>8.2f}ms {p90(ms['off']):>7.2f}ms {p90(ms['on']):>7.2f}ms "
                  f"{m_on / m_off:>5.2f}x")
            off.close(), on.close()


if __name__ == "__main__":
    main()
