"""Replay throughput on 1, 2 and 4 local Dask workers, on the same commits: commits per second and the ratio
to one worker, with every record checked equal to this process's.

    .venv/bin/python benchmarks/workers.py                                  # the bundled sample, 60 commits
    .venv/bin/python benchmarks/workers.py --repos repos.txt --engine bm25  # a `replay --repos` file
    .venv/bin/python benchmarks/workers.py --workers 1 2 4 --commits 100

For each worker count N a `distributed.LocalCluster` of N single-threaded worker processes is started
(its start-up time printed apart), and the same plans are replayed through it with the automatic slice
size (about two slices per worker: every slice past the first costs one fresh build, the price of
spreading). Throughput is commits replayed / wall seconds of the replay alone. The baseline, run first in
the same process, is `local` (this process, one slice per repository); `dask-local:1` shows what the
cluster itself costs. Every run starts with its own empty work cache (CTXGAUGE_CACHE, which the workers
inherit), so no run reads work another did. The script fails unless every run's units equal the
baseline's (timing and workers aside). It prints the load average, since the machine may be shared: quote ratios, not absolute rates.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path


def _plans(args):
    from ctxgauge.suites.replay import ReplayConfig, plan, read_repos_file

    template = ReplayConfig(repo=Path("."), engine=args.engine, commits=args.commits)
    if args.repos is not None:
        lines = [(ln.path, ln.rev, ln.commits) for ln in read_repos_file(args.repos, args.commits)]
    else:
        repo = args.repo
        if repo is None:
            from ctxgauge.sample import materialize_sample

            repo = materialize_sample(Path(tempfile.mkdtemp(prefix="ctxgauge-bench-")) / "shelfd")
        lines = [(repo, "HEAD", args.commits)]
    return [plan(replace(template, repo=p, rev=rev, commits=n)) for p, rev, n in lines]


def _replay(plans, executor, root: Path) -> tuple[float, int, list[list[dict]]]:
    """Replay every plan through `executor` into fresh run dirs; (seconds, commits replayed, units per plan)."""
    from ctxgauge.records import comparable_unit
    from ctxgauge.suites.replay import start_run
    from ctxgauge.suites.replay._run import RepoRun, execute_many

    runs = [RepoRun(p, start_run(p, root / f"run-{i}", resume=False)) for i, p in enumerate(plans)]
    t0 = time.perf_counter()
    execute_many(runs, executor)
    seconds = time.perf_counter() - t0
    units = [[comparable_unit(u) for u in r.ordered_units()] for r in runs]
    replayed = sum(1 for per in units for u in per if u["status"] in ("ok", "failed"))
    return seconds, replayed, units


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--repo", type=Path, help="a git repository (default: the bundled sample)")
    src.add_argument("--repos", type=Path, help="a `replay --repos` file")
    ap.add_argument("--engine", default="bm25")
    ap.add_argument("--commits", type=int, default=60, help="eligible commits per repository (default 60)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = ap.parse_args(argv)

    from ctxgauge.executors import open_executor

    plans = _plans(args)
    print(f"cpus {os.cpu_count()}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; engine {args.engine}; "
          f"{len(plans)} repositories, {sum(len(p.selection.eligible) for p in plans)} eligible commits")
    rows = []
    with tempfile.TemporaryDirectory(prefix="ctxgauge-workers-") as tmp:
        os.environ["CTXGAUGE_CACHE"] = str(Path(tmp) / "cache-local")
        with open_executor("local") as ex:
            base_s, base_n, base_units = _replay(plans, ex, Path(tmp) / "local")
        rows.append(("local (this process)", 0.0, base_s, base_n))
        for n in args.workers:
            os.environ["CTXGAUGE_CACHE"] = str(Path(tmp) / f"cache-{n}")
            t0 = time.perf_counter()
            with open_executor(f"dask-local:{n}") as ex:
                start_s = time.perf_counter() - t0
                seconds, replayed, units = _replay(plans, ex, Path(tmp) / f"dask-{n}")
            if units != base_units:
                print(f"FAIL: dask-local:{n} recorded different units than this process", file=sys.stderr)
                return 1
            rows.append((f"dask-local:{n}", start_s, seconds, replayed))
    one = next((r for r in rows if r[0] == "dask-local:1"), rows[0])
    print(f"{'executor':<22}{'start s':>9}{'replay s':>10}{'commits':>9}{'commits/s':>11}{'vs 1 worker':>13}")
    for name, start_s, seconds, replayed in rows:
        rate = replayed / seconds if seconds else float("inf")
        ratio = rate / (one[3] / one[2])
        print(f"{name:<22}{start_s:>9.2f}{seconds:>10.2f}{replayed:>9}{rate:>11.2f}{ratio:>12.2f}x")
    print("units identical across every executor: yes")
    for p in plans:
        p.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
