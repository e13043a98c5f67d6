"""Replay against the naive method, on the same commits, in one process: speed, memory, identical rankings.

    .venv/bin/python benchmarks/replay_speed.py                      # the bundled sample, every commit
    .venv/bin/python benchmarks/replay_speed.py --repo PATH --commits 200 --engine bm25

Replay: `ctxgauge.suites.replay.replay` as the CLI runs it (one engine object, each index updated from the
previous commit's by the files that changed, each blob read once).
Naive, per commit: list the parent's tree, write exactly the files replay's corpus holds to a temporary
directory, read that directory as a corpus, build a fresh engine from scratch, query.
Both rank every commit's request at the same depth; the script fails unless every ranking (paths and
scores) is identical. It prints per-commit medians and totals of both, their ratios, and the peak resident
memory of the replay phase (ru_maxrss, read before the naive phase starts).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _peak_mib() -> float:
    # Linux reports ru_maxrss in KiB (macOS in bytes).
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def naive_one(repo, spec: str, parent: str, request: str, depth: int) -> tuple[list[tuple[str, float]], float]:
    """One commit the naive way; returns (ranking, seconds)."""
    from ctxgauge.corpus import Corpus
    from ctxgauge.engines import get_engine

    t0 = time.perf_counter()
    listed = Corpus.from_git(repo, parent)
    with tempfile.TemporaryDirectory(prefix="ctxgauge-naive-") as tmp:
        src, out = Path(tmp) / "src", Path(tmp) / "index"
        listed.materialize(src)
        corpus = Corpus.from_directory(src, max_bytes=listed.max_bytes)
        out.mkdir()
        engine = get_engine(spec)
        engine.build(corpus, out)
        hits = engine.query(out, request, depth)
        getattr(engine, "close", lambda: None)()
    seconds = time.perf_counter() - t0
    if corpus.paths != listed.paths:
        raise AssertionError(f"{parent[:10]}: the written tree reads back as a different file set")
    return [(h.path, h.score) for h in hits], seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, help="a git repository (default: the bundled sample)")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--engine", default="bm25")
    ap.add_argument("--commits", type=int, default=200, help="newest eligible commits to replay (default 200)")
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args(argv)

    from ctxgauge.git import Repo
    from ctxgauge.suites.replay import ReplayConfig, replay

    with tempfile.TemporaryDirectory(prefix="ctxgauge-bench-") as tmp:
        repo_path = args.repo
        if repo_path is None:
            from ctxgauge.sample import materialize_sample

            repo_path = materialize_sample(Path(tmp) / "sample")
        with Repo(repo_path) as repo:
            files = len(repo.tree(repo.resolve(args.rev)))
        print(f"repository {repo_path.resolve().name if args.repo is None else args.repo}: {files} files at {args.rev}; "
              f"engine {args.engine}; up to {args.commits} commits; depth {args.depth}")

        t0 = time.perf_counter()
        result = replay(ReplayConfig(repo=repo_path, engine=args.engine, rev=args.rev, commits=args.commits,
                                     depth=args.depth, out=Path(tmp) / "run"))
        replay_total = time.perf_counter() - t0
        replay_peak = _peak_mib()
        commits = [c for c in result.to_dict()["commits"] if c["status"] == "ok"]
        if not commits:
            print("no commit replayed: nothing to compare")
            return 1
        from ctxgauge.records import read_units

        timing = {u["id"]: u.get("timing", {}) for u in read_units(Path(tmp) / "run")}
        per_commit = [sum(timing[c["sha"]].get(k, 0.0) for k in ("corpus_s", "index_s", "query_s")) for c in commits]

        naive_times = []
        with Repo(repo_path) as repo:
            parents = {u["id"]: u.get("parent") for u in read_units(Path(tmp) / "run")}
            for i, c in enumerate(commits, start=1):
                ranking, seconds = naive_one(repo, args.engine, parents[c["sha"]], c["request"], args.depth)
                ours = [(h["path"], h["score"]) for h in c["ranking"]]
                if ranking != ours:
                    raise AssertionError(f"{c['sha'][:10]}: replay and a fresh build rank differently")
                naive_times.append(seconds)
                print(f"\rnaive {i}/{len(commits)}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)

    n = len(commits)
    replay_med, naive_med = statistics.median(per_commit), statistics.median(naive_times)
    naive_total = sum(naive_times)
    print(f"commits compared: {n}; rankings identical on every one")
    print(f"replay: median {replay_med * 1000:.1f} ms per commit (corpus + index update + query), "
          f"total {replay_total:.1f} s including the first full build and the walk")
    print(f"naive:  median {naive_med * 1000:.1f} ms per commit, total {naive_total:.1f} s")
    print(f"ratio:  {naive_med / replay_med:.1f}x per commit (medians), {naive_total / replay_total:.1f}x in total")
    print(f"peak memory of the replay phase: {replay_peak:.0f} MiB (ru_maxrss)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
