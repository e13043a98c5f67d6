"""Engine build time, peak memory and query latency, on the bundled sample and optionally a real repository.

    python benchmarks/engines.py                          # the bundled sample, every reference engine
    python benchmarks/engines.py --repo PATH [--rev REV]  # a real repository too
    python benchmarks/engines.py --engine bm25 --engine graph --twice

Each engine runs in its own subprocess so its peak resident memory (ru_maxrss) is its own. The baseline,
measured in the same run and the same way, is reading the corpus (listing the tree and every blob): every
build time is printed as a ratio to it. Latency is the median over every request, each asked 3 times.
`--twice` builds a second time into a fresh directory and reports whether the artifacts are identical.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENGINES = ("grep", "bm25", "minilm", "graph", "hybrid")


def worker(args: argparse.Namespace) -> None:
    from ctxgauge.corpus import open_corpus
    from ctxgauge.engines import engine_available, get_engine
    from ctxgauge.fingerprints import artifact_hash_of_dir
    from ctxgauge.suites._requests import recent_requests

    t0 = time.perf_counter()
    corpus = open_corpus(args.source, args.rev)
    list(corpus.iter_bytes())
    read_s = time.perf_counter() - t0
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {"engine": args.worker, "files": len(corpus), "read_seconds": read_s, "rss_before_kib": rss0}
    if args.worker == "read":
        print(json.dumps(out))
        return
    eng = get_engine(args.worker)
    ok, why = engine_available(eng)
    if not ok:
        print(json.dumps({**out, "skipped": why}))
        return
    requests = recent_requests(corpus, 10)
    with tempfile.TemporaryDirectory() as tmp:
        a = Path(tmp) / "a"
        a.mkdir()
        t0 = time.perf_counter()
        eng.build(corpus, a)
        out["build_seconds"] = time.perf_counter() - t0
        out["peak_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out["artifact_bytes"] = sum(p.stat().st_size for p in a.rglob("*") if p.is_file())
        lat = []
        for q in requests:
            for _ in range(3):
                t0 = time.perf_counter()
                eng.query(a, q, 10)
                lat.append(time.perf_counter() - t0)
        out["query_median_ms"] = statistics.median(lat) * 1000
        if args.twice:
            # A fresh engine object: a warm per-blob cache must not hide a nondeterministic cold build.
            b = Path(tmp) / "b"
            b.mkdir()
            get_engine(args.worker).build(corpus, b)
            af = getattr(eng, "artifact_file", None)
            out["identical"] = artifact_hash_of_dir(a, af) == artifact_hash_of_dir(b, af)
    print(json.dumps(out))


def run_one(engine: str, source: str, rev: str | None, twice: bool) -> dict:
    cmd = [sys.executable, __file__, "--worker", engine, "--source", source]
    if rev:
        cmd += ["--rev", rev]
    if twice:
        cmd.append("--twice")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"engine": engine, "error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", help="a real repository (working tree or bare) to measure besides the sample")
    ap.add_argument("--rev", default=None)
    ap.add_argument("--engine", action="append", help="engine spec (repeat); default: every reference engine")
    ap.add_argument("--twice", action="store_true", help="build twice and report artifact identity")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--source", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return

    from ctxgauge.sample import materialize_sample

    targets = []
    with tempfile.TemporaryDirectory() as tmp:
        targets.append(("sample", str(materialize_sample(Path(tmp) / "sample")), None))
        if args.repo:
            targets.append((Path(args.repo).resolve().name if Path(args.repo).name != "repo" else Path(args.repo).resolve().parent.name,
                            args.repo, args.rev))
        for label, source, rev in targets:
            base = run_one("read", source, rev, False)
            print(f"\n== {label}: {base['files']} files; baseline (read the corpus) {base['read_seconds']:.3f} s, "
                  f"{base['rss_before_kib'] / 1024:.0f} MiB")
            print(f"{'engine':<10} {'build s':>9} {'x baseline':>11} {'peak MiB':>9} {'query ms (median)':>18} "
                  f"{'artifact KiB':>13} {'identical':>9}")
            for engine in args.engine or ENGINES:
                r = run_one(engine, source, rev, args.twice)
                if "error" in r or "skipped" in r:
                    print(f"{engine:<10} {'skipped: ' + str(r.get('skipped') or r.get('error'))}")
                    continue
                print(f"{engine:<10} {r['build_seconds']:>9.2f} {r['build_seconds'] / max(base['read_seconds'], 1e-9):>11.1f} "
                      f"{r['peak_rss_kib'] / 1024:>9.0f} {r['query_median_ms']:>18.1f} {r['artifact_bytes'] / 1024:>13.0f} "
                      f"{str(r.get('identical', '-')):>9}")


if __name__ == "__main__":
    main()
