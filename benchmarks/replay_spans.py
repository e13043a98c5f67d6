"""What spans cost a replay: `fusion` (spans on, the default) against `fusion(spans=false)`, CPU of whole runs.

    .venv/bin/python benchmarks/replay_spans.py --repo /tmp/poetry        # the issue's figure (see below)
    .venv/bin/python benchmarks/replay_spans.py --commits 20 --runs 1     # the bundled sample, a quick look

Each run is `ctxgauge --cache-dir EMPTY replay REPO --engine SPEC --commits N -k 5 -k 10 --json` in its own
process, with a fresh empty work cache and a fresh --out, so no run reuses another's tokens, parses or
embeddings. A run's cost is the CPU seconds (user + system) of that process and its children
(`resource.getrusage(RUSAGE_CHILDREN)` before and after), not wall time: the machine may be shared. The
variants alternate (off, on, off, on, ...) so drift in the machine's load falls on both. The script checks
that both variants replayed the same commits with the same files and scores (spans change no ranking),
and prints each variant's CPU seconds per run, the medians and the ratio on / off (the issue's goal: at
most 1.5).

Measured for issue 37 (2 shared cores, other jobs running): python-poetry/poetry at f46702336 (1,006 files),
50 newest eligible commits, CPU seconds per run:
    fusion(spans=false)  39.34  40.27  39.50   median 39.50
    fusion               45.06  41.20  41.58   median 41.58    ratio 1.053x (goal <= 1.5x)
with identical files and scores on every commit.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

VARIANTS = (("off", "fusion(spans=false)"), ("on", "fusion"))


def run_once(repo: Path, spec: str, commits: int, work: Path) -> tuple[float, dict]:
    """One replay in its own process with an empty cache: (CPU seconds of it and its children, --json)."""
    cache, out = Path(tempfile.mkdtemp(dir=work, prefix="cache-")), Path(tempfile.mkdtemp(dir=work, prefix="run-"))
    out.rmdir()  # replay makes it
    cmd = [sys.executable, "-m", "ctxgauge", "--cache-dir", str(cache), "replay", str(repo), "--engine", spec,
           "--commits", str(commits), "-k", "5", "-k", "10", "--json", "--out", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{spec}: replay exited {proc.returncode}: {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(proc.stdout)


def ranking_files(result: dict) -> list[tuple[str, list[tuple[str, float]]]]:
    return [(c["sha"], [(h["path"], h["score"]) for h in c.get("ranking") or []]) for c in result["commits"]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, help="a git repository (default: the bundled sample)")
    ap.add_argument("--commits", type=int, default=50, help="newest eligible commits to replay (default 50)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each variant; the median is reported (default 3)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ctxgauge-replay-spans-") as tmp:
        work = Path(tmp)
        repo = args.repo
        if repo is None:
            from ctxgauge.sample import materialize_sample

            repo = materialize_sample(work / "sample")
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=9", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        files = len(subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "HEAD"],
                                   capture_output=True, text=True, check=True).stdout.splitlines())
        print(f"repository {Path(repo).name} at {head}: {files} files; {args.commits} newest eligible commits; "
              f"{args.runs} run(s) per variant, each its own process with an empty --cache-dir")
        cpu: dict[str, list[float]] = {name: [] for name, _ in VARIANTS}
        rankings: dict[str, list] = {}
        replayed = 0
        for i in range(args.runs):
            for name, spec in VARIANTS:
                seconds, result = run_once(Path(repo), spec, args.commits, work)
                cpu[name].append(seconds)
                ranks = ranking_files(result)
                if name in rankings and rankings[name] != ranks:
                    raise SystemExit(f"{spec}: run {i + 1} ranked differently from run 1")
                rankings[name] = ranks
                replayed = sum(1 for c in result["commits"] if c.get("status") == "ok")
                print(f"  run {i + 1} {spec:<22} {seconds:8.2f} s CPU  ({replayed} commits replayed)", flush=True)
        if rankings["on"] != rankings["off"]:
            raise SystemExit("spans changed a ranking: fusion and fusion(spans=false) disagree on files or scores")
        med = {name: statistics.median(xs) for name, xs in cpu.items()}
        ratio = med["on"] / med["off"]
        print(f"median CPU: fusion(spans=false) {med['off']:.2f} s, fusion {med['on']:.2f} s; "
              f"ratio on/off {ratio:.3f}x (goal <= 1.5x) {'OK' if ratio <= 1.5 else 'OVER'}")
        print("rankings (files and scores) identical on every commit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
