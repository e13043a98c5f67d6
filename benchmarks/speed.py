"""The speed table of issue 12, each row cold and side by side with its baseline, interleaved, in one run.

    python benchmarks/speed.py --corpus DIR [--contextbenchmark CB_DIR] [--repo GIT_DIR] [--rounds 3]

Rows (each round runs a row's baseline and ctxgauge back to back, alternating which goes first; every
ctxgauge command gets its own empty work-cache directory, so every figure is cold):

- determinism: `ctxgauge determinism DIR -e bm25 --queries DIR/queries.json --rebuilds 3 --trials 5 -k 10
  --families rebuild,query,drift` against ContextBenchmark's `node contextbenchmark.mjs run --adapters bm25
  --corpus DIR` with the same settings (DIR/queries.json must hold the queries; fetch aabhisrv/contextbenchmark).
- replay (with --repo): `ctxgauge replay REPO -e bm25 --commits 50` against the naive floor, per commit
  `git archive PARENT | tar -x` into a fresh directory with no index at all, on the same commits.

Prints each run's wall and CPU seconds (children's rusage), the medians, the ratio baseline/ctxgauge, and the
load average before and after: the machines are shared, so ratios, not seconds, are the result.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CTXGAUGE = [sys.executable, "-m", "ctxgauge"]


def timed(cmd: list[str] | str, cwd: Path | None = None, env: dict | None = None, shell: bool = False) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one command; fails loudly when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})}, shell=shell, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):  # 1: a gate failed, which is a finished run
        raise SystemExit(f"{cmd if isinstance(cmd, str) else ' '.join(cmd)} failed ({r.returncode}): {r.stderr[-800:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def row(name: str, baseline, ours, rounds: int) -> None:
    base, mine = [], []
    for i in range(rounds):
        order = [("baseline", baseline, base), ("ctxgauge", ours, mine)]
        for label, fn, acc in (order if i % 2 == 0 else order[::-1]):
            w, c = fn(i)
            acc.append((w, c))
            print(f"  {name} round {i + 1} {label}: {w:.1f} s wall, {c:.1f} CPU s", flush=True)
    bw, bc = statistics.median(w for w, _ in base), statistics.median(c for _, c in base)
    mw, mc = statistics.median(w for w, _ in mine), statistics.median(c for _, c in mine)
    print(f"{name}: baseline median {bw:.1f} s wall / {bc:.1f} CPU s; ctxgauge {mw:.1f} s / {mc:.1f} CPU s; "
          f"ratio {bw / mw:.2f}x wall, {bc / mc:.2f}x CPU", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="a directory holding queries.json")
    ap.add_argument("--contextbenchmark", type=Path, help="a checkout of aabhisrv/contextbenchmark")
    ap.add_argument("--repo", type=Path, help="a git repository for the replay row")
    ap.add_argument("--commits", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="ctxgauge-speed-") as tmp:
        tmp = Path(tmp)

        def ours_det(i: int):
            out = tmp / f"det{i}"
            shutil.rmtree(out, ignore_errors=True)
            return timed([*CTXGAUGE, "--cache-dir", str(tmp / f"cache-det{i}"), "determinism", str(args.corpus),
                          "-e", "bm25", "--queries", str(args.corpus / "queries.json"), "--rebuilds", "3",
                          "--trials", "5", "-k", "10", "--families", "rebuild,query,drift", "--out", str(out)])

        if args.contextbenchmark:
            def ref_det(i: int):
                return timed(["node", "contextbenchmark.mjs", "run", "--adapters", "bm25", "--corpus", str(args.corpus),
                              "--rebuilds", "3", "--trials", "5", "--k", "10", "--families", "rebuild,query,drift"],
                             cwd=args.contextbenchmark)

            row("determinism (bm25, 3 rebuilds, 5 trials, 10 queries, drift) vs ContextBenchmark", ref_det, ours_det,
                args.rounds)
        if args.repo:
            def ours_replay(i: int):
                return timed([*CTXGAUGE, "--cache-dir", str(tmp / f"cache-replay{i}"), "replay", str(args.repo),
                              "-e", "bm25", "--commits", str(args.commits), "--json"])

            shas = None

            def naive(i: int):
                nonlocal shas
                if shas is None:  # the commits replay measures: its own record says which
                    out = subprocess.run([*CTXGAUGE, "--no-cache", "replay", str(args.repo), "-e", "grep", "--commits",
                                          str(args.commits), "--json"], capture_output=True, text=True, check=True)
                    shas = [c["sha"] for c in json.loads(out.stdout)["commits"]]
                script = "".join(f"d=$(mktemp -d) && git archive {s}~1 | tar -x -C $d && rm -rf $d\n" for s in shas)
                return timed(script, cwd=args.repo, shell=True)

            row(f"bm25 replay of {args.commits} commits vs the naive floor (git archive | tar -x per commit)",
                naive, ours_replay, args.rounds)
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
