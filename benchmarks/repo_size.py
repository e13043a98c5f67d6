"""How bm25 replay's per-commit cost grows with the repository: synthetic repositories of 1k, 5k and 20k files.

    python benchmarks/repo_size.py [--sizes 1000 5000 20000] [--commits 20] [--engine bm25] [--modes rewrite replay]

Each repository is made with `git fast-import` (seeded, so the same bytes every run): one commit with N
Python-looking files in nested directories, then `--commits` commits that each modify two files. The
engine builds the first commit, then is updated commit by commit (one engine object, `update` by the
changed files), in two modes measured on the same repositories in the same run:

    rewrite   every commit listed whole (`Corpus.from_git`, `changes_to`) and the artifact written whole by
              each update: what replay did before, and what every update whose bytes a suite hashes does
    replay    what replay does now: each commit listed from the previous one by the tree diff
              (`Corpus.at`), the engine asked to `defer_writes` (bm25: a live index moved by the changed
              files, its artifact written only by `flush`)

Every phase of each update is timed apart (exclusive times):

    corpus     listing the new tree and the changes against the previous one   (flat: the change)
    tokenise   reading and tokenising the changed blobs                         (flat)
    move       moving the live index by the changed files                      (flat)
    derive     deriving the score matrix from the per-blob counts             (grows: whole index)
    write      writing the artifact files                                      (grows: whole index)
    query      one request over the whole index                                (may grow)

and beside them the naive floor of the issue: `git archive PARENT | tar -x` into a fresh directory, per
commit, with no index at all. Medians per commit, the growth from the smallest to the largest size, what
one `flush` costs at the end (a suite that needs the bytes pays it once), peak memory, and the load average
(the machine is shared) are printed.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("account balance cache client config connect decode encode event fetch handler index loader merge "
         "parse payload queue record render request response retry route schema session signal stream token "
         "update upload user validate widget worker").split()


def _file_text(rng: random.Random, i: int) -> str:
    lines = [f'"""Module {i}: {" ".join(rng.sample(WORDS, 4))}."""', ""]
    for f in range(rng.randint(3, 8)):
        name = "_".join(rng.sample(WORDS, 2))
        lines += [f"def {name}_{i}_{f}({', '.join(rng.sample(WORDS, 2))}):",
                  f"    # {' '.join(rng.sample(WORDS, 6))}",
                  f"    return {rng.choice(WORDS)}.{rng.choice(WORDS)}({rng.randint(0, 999)})", ""]
    return "\n".join(lines) + "\n"


def make_repo(path: Path, n_files: int, commits: int, seed: int = 12) -> None:
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    paths = [f"pkg{i % 37}/sub{i % 11}/mod_{i}.py" for i in range(n_files)]
    out = []
    date = 1_700_000_000

    def commit(subject: str, files: dict[str, str]) -> None:
        nonlocal date
        date += 3600
        msg = subject.encode()
        out.append(b"commit refs/heads/main\n")
        out.append(f"committer Ada Tester <ada@example.org> {date} +0000\n".encode())
        out.append(b"data %d\n%s\n" % (len(msg), msg))
        for p, text in files.items():
            data = text.encode()
            out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (p.encode(), len(data), data))

    commit("Initial import", {p: _file_text(rng, i) for i, p in enumerate(paths)})
    for c in range(commits):
        picked = rng.sample(range(n_files), 2)
        topic = " ".join(rng.sample(WORDS, 3))
        commit(f"Fix {topic} handling", {paths[i]: _file_text(rng, i + 100_000 * (c + 1)) for i in picked})
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=b"".join(out), check=True, env=env)


class Timers:
    """Wraps an engine's phases with timers (the engine's own methods, unchanged), each phase's time
    exclusive of the wrapped phases it calls."""

    def __init__(self, engine):
        self.t: dict[str, float] = {}
        self._stack: list[float] = []  # time spent in wrapped callees of each open call
        terms = getattr(engine, "_t", None)
        for obj, name, phase in ((terms, "doc_counts", "tokenise"), (engine, "_retriever", "derive"),
                                 (engine, "_save", "write"), (engine, "_move", "move")):
            if obj is not None and hasattr(obj, name):
                self._wrap(obj, name, phase)

    def _wrap(self, obj, name, phase):
        real = getattr(obj, name)

        def timed(*a, **k):
            t0 = time.perf_counter()
            self._stack.append(0.0)
            try:
                return real(*a, **k)
            finally:
                took = time.perf_counter() - t0
                inner = self._stack.pop()
                self.t[phase] = self.t.get(phase, 0.0) + took - inner
                if self._stack:
                    self._stack[-1] += took

        setattr(obj, name, timed)


PHASES = ("corpus", "tokenise", "move", "derive", "write", "query", "total", "naive")


def measure(repo_path: Path, spec: str, query: str, mode: str, naive: bool = True
            ) -> tuple[dict[str, list[float]], float]:
    """Per-commit phase times of one mode (and of the naive floor when `naive`), and what a final `flush`
    costs (0 when nothing was deferred)."""
    from ctxgauge.corpus import Corpus
    from ctxgauge.engines import get_engine
    from ctxgauge.git import Repo

    phases: dict[str, list[float]] = {k: [] for k in PHASES}
    flush_s = 0.0
    with Repo(repo_path) as repo, tempfile.TemporaryDirectory() as tmp:
        revs = subprocess.run(["git", "rev-list", "--reverse", "main"], cwd=repo_path, capture_output=True,
                              text=True, check=True).stdout.split()
        engine = get_engine(spec)
        timers = Timers(engine)
        out = Path(tmp) / "index"
        out.mkdir()
        deferred = mode == "replay" and bool(getattr(engine, "defer_writes", lambda d: False)(out))
        import ctxgauge.cache as work_cache

        binary: dict[str, bool] = {}  # blob id -> is binary, kept across commits as replay keeps it
        with work_cache.disabled():  # what the engine itself costs, not what a cache saves
            prev = Corpus.from_git(repo, revs[0], binary_cache=binary)
            engine.build(prev, out)
            for rev in revs[1:]:
                timers.t.clear()
                t0 = time.perf_counter()
                if mode == "replay":
                    corpus = prev.at(rev, binary_cache=binary, known_commit=True)
                else:
                    corpus = Corpus.from_git(repo, rev, binary_cache=binary)
                changes = prev.changes_to(corpus)
                t1 = time.perf_counter()
                engine.update(out, corpus, changes)
                t2 = time.perf_counter()
                engine.query(out, query, 10)
                t3 = time.perf_counter()
                inner = sum(timers.t.values())
                phases["corpus"].append(t1 - t0)
                for phase in ("tokenise", "move", "derive", "write"):
                    phases[phase].append(timers.t.get(phase, 0.0))
                # the rest of update (bookkeeping, docs.json) goes with the phase that does the most
                rest = (t2 - t1) - inner
                phases["move" if deferred else "write"][-1] += rest
                phases["query"].append(t3 - t2)
                phases["total"].append(t3 - t0)
                prev = corpus
                if not naive:
                    continue
                # the naive floor: the parent's tree extracted into a fresh directory, no index at all
                t0 = time.perf_counter()
                dest = Path(tempfile.mkdtemp(dir=tmp))
                subprocess.run(f"git archive {rev}~1 | tar -x -C {dest}", shell=True, cwd=repo_path, check=True)
                phases["naive"].append(time.perf_counter() - t0)
                subprocess.run(["rm", "-rf", str(dest)], check=True)
            if deferred:
                t0 = time.perf_counter()
                engine.flush(out)
                flush_s = time.perf_counter() - t0
        engine.close()
    return phases, flush_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--commits", type=int, default=20)
    ap.add_argument("--engine", default="bm25")
    ap.add_argument("--modes", nargs="+", default=["rewrite", "replay"], choices=["rewrite", "replay"])
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}; engine {args.engine}; {args.commits} commits of 2 files each")
    rows: dict[tuple[str, int], dict[str, float]] = {}
    flushes: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory(prefix="ctxgauge-repo-size-") as tmp:
        for n in args.sizes:
            repo = Path(tmp) / f"r{n}"
            t0 = time.perf_counter()
            make_repo(repo, n, args.commits)
            print(f"{n} files: repository made in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            for i, mode in enumerate(args.modes):  # the naive floor once per size (it has no mode)
                phases, flushes[mode, n] = measure(repo, args.engine, "retry the queue worker", mode, naive=i == 0)
                if i:
                    phases["naive"] = naive_times
                naive_times = phases["naive"]
                rows[mode, n] = {k: statistics.median(v) * 1000 for k, v in phases.items()}
    for mode in args.modes:
        print(f"\nmode {mode}: median ms per commit")
        print(f"{'files':>7} " + " ".join(f"{c:>9}" for c in PHASES) + f" {'naive/total':>11}")
        for n in args.sizes:
            r = rows[mode, n]
            print(f"{n:>7} " + " ".join(f"{r[c]:9.1f}" for c in PHASES) + f" {r['naive'] / r['total']:11.2f}")
        lo, hi = min(args.sizes), max(args.sizes)
        print(f"growth {lo} -> {hi} files ({hi / lo:.0f}x): " + ", ".join(
            f"{c} {rows[mode, hi][c] / max(rows[mode, lo][c], 1e-6):.1f}x" for c in PHASES if rows[mode, lo][c] > 0.05))
        if any(flushes[mode, n] for n in args.sizes):
            print("one flush at the end (the artifact's bytes, once): " + ", ".join(
                f"{n} files {flushes[mode, n] * 1000:.0f} ms" for n in args.sizes))
    if len(args.modes) == 2:
        a, b = args.modes
        print(f"\n{a} / {b} total per commit: " + ", ".join(
            f"{n} files {rows[a, n]['total'] / rows[b, n]['total']:.1f}x" for n in args.sizes))
    print(f"peak memory (this process): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
