"""The speed table of issue 12, each row cold and side by side with its baseline, interleaved, in one run.

    python benchmarks/speed.py [--memos MEMOS_GIT] [--corpus DIR ...] [--contextbenchmark CB] [--repo GIT_DIR]
        [--commits 50] [--rounds 3] [--swebench FILE_OR_CLONE --repos DIR [--cases-baseline REV] [--cases-lite]]

The determinism row in one command, from two clones (bare or not) and the committed queries:

    python benchmarks/speed.py --memos MEMOS_GIT --contextbenchmark CB_GIT --rounds 5

Rows (each round runs a row's baseline and ctxgauge back to back, alternating which goes first; every
ctxgauge command gets its own empty work-cache directory, so every figure is cold):

- determinism (with --memos, and per --corpus): `ctxgauge determinism DIR -e bm25 --queries DIR/queries.json
  --rebuilds 3 --trials 5 -k 10 --families rebuild,query,drift` against ContextBenchmark's `node
  contextbenchmark.mjs run --adapters bm25 --corpus DIR` with the same settings (DIR/queries.json holds the
  queries; CB, aabhisrv/contextbenchmark, is a checkout or a clone read at --contextbenchmark-rev). With
  --memos, DIR is made here: usememos/memos at --memos-rev (a fixed commit, by `git archive`) with
  benchmarks/determinism_queries.json (10 handwritten queries about the memos code) as its queries.json.
  ctxgauge's sources are compiled to bytecode first, as installing the package does (under
  PYTHONDONTWRITEBYTECODE every run would compile every module again). Both tools read one copy of DIR made
  here with an empty `src/shared/` added when it has none: the reference writes its noise file there and,
  without it, dies at drift (exit 1) after the other families, which would time a run that skipped a family.
  A reference run counts only when it wrote its report with all three families. The same corpus is not the
  same indexed files: the reference indexes only .ts .tsx .js .mjs .py .md .json .txt files, ctxgauge every
  text file; both counts are printed. With --also-src, ctxgauge from that source tree too; with
  --determinism-executor local:2, ctxgauge with its rebuilds in a worker process too (a third arm).
- replay (with --repo): `ctxgauge replay REPO -e bm25 --commits 50` against the naive floor, per commit
  `git archive PARENT | tar -x` into a fresh directory with no index at all, on the same commits.
- cases (with --swebench): `ctxgauge cases INSTANCES --repos DIR -e bm25` over the SWE-bench Lite instances
  whose repository has a clone under DIR (instances of the others are left out; the count is printed), against
  the same command run by ctxgauge at --cases-baseline (default dc65eaf, the code the issue measured: every
  case built its index from nothing), extracted from this checkout's history with `git archive` and run from
  there, on the same instances. INSTANCES is a JSON file, or a clone holding swe-bench-lite.json (read with
  `git show`). Each arm's rankings (every case's paths and scores) are hashed; the row fails unless both arms
  give the same hash. `--cases-lite`: at most 4 instances per repository, for a quick run.
- hybrid replay (with --hybrid-repo, at --hybrid-rev): `ctxgauge replay REPO --rev REV -e hybrid --commits 50`
  and `-e minilm` on the same commits, each cold, against the goal of 120 CPU seconds; with --also-src, hybrid
  from that source tree too (before and after in one interleaved run). The embedding engines cost minutes to
  hours here, so `--hybrid-rounds` defaults to 1.

Prints each run's wall and CPU seconds and peak memory (the command's own rusage, its children included) with
the load average after it, the medians, the ratio of the medians baseline/ctxgauge and the median of each
round's ratio (the two runs of a round side by side), and the load average before and after: the machines are
shared, so ratios, not seconds, are the result.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CTXGAUGE = [sys.executable, "-m", "ctxgauge"]


def timed(cmd: list[str] | str, cwd: Path | None = None, env: dict | None = None,
          shell: bool = False) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak resident MB) of one command and everything it waited for; fails
    loudly when it fails. Taken from the child's own rusage (wait4), so other children do not mix in."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env={**os.environ, **(env or {})}, shell=shell,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):  # 1: a gate failed, which is a finished run
            err.seek(0)
            raise SystemExit(f"{cmd if isinstance(cmd, str) else ' '.join(cmd)} failed ({proc.returncode}): "
                             f"{err.read().decode(errors='replace')[-800:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def row(name: str, baseline, ours, rounds: int, others: dict | None = None) -> None:
    """Run the arms interleaved (the order rotating each round); print each arm's medians and the ratio of the
    baseline's to each other arm's. `others`: label -> another arm (e.g. ctxgauge from an older source tree)."""
    arms = [("baseline", baseline), ("ctxgauge", ours), *(others or {}).items()]
    got: dict[str, list] = {label: [] for label, _ in arms}
    for i in range(rounds):
        for label, fn in arms[i % len(arms):] + arms[:i % len(arms)]:
            w, c, m = fn(i)
            got[label].append((w, c, m))
            print(f"  {name} round {i + 1} {label}: {w:.1f} s wall, {c:.2f} CPU s, peak {m:.0f} MB; "
                  f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    bw, bc = statistics.median(w for w, _, _ in got["baseline"]), statistics.median(c for _, c, _ in got["baseline"])
    print(f"{name}: baseline median {bw:.1f} s wall / {bc:.2f} CPU s", flush=True)
    for label, _ in arms[1:]:
        mw, mc = statistics.median(w for w, _, _ in got[label]), statistics.median(c for _, c, _ in got[label])
        rw = statistics.median(b[0] / o[0] for b, o in zip(got["baseline"], got[label]))
        rc = statistics.median(b[1] / o[1] for b, o in zip(got["baseline"], got[label]))
        print(f"  {label}: median {mw:.1f} s wall / {mc:.2f} CPU s, peak {max(m for _, _, m in got[label]):.0f} MB; "
              f"ratio baseline/{label} {bw / mw:.2f}x wall, {bc / mc:.2f}x CPU (median of the {rounds} rounds' "
              f"ratios: {rw:.2f}x wall, {rc:.2f}x CPU)", flush=True)


REFERENCE_EXTS = (".ts", ".tsx", ".js", ".mjs", ".py", ".md", ".json", ".txt")  # adapters/bm25.mjs's EXTS


def reference_files(root: Path) -> int:
    """How many files the reference bm25 adapter indexes (its walk: EXTS, no node_modules or .git, no
    queries.json)."""
    n = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("node_modules", ".git")]
        n += sum(1 for f in filenames if os.path.splitext(f)[1] in REFERENCE_EXTS)
    return n - (root / "queries.json").is_file()


MEMOS_REV = "76a762924306e782871204f131f4033be5e8e41a"  # usememos/memos, 2026: 1,181 files
QUERIES = Path(__file__).with_name("determinism_queries.json")


def git_tree(repo: Path, rev: str, dest: Path) -> str:
    """`git archive REV` of `repo` (a clone, bare or not) extracted into `dest`; returns the commit."""
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", f"{rev}^{{commit}}"], capture_output=True,
                         text=True, check=True).stdout.strip()
    dest.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(repo), "archive", sha], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait() != 0:
        raise SystemExit(f"git archive {sha} failed in {repo}")
    return sha


def memos_corpus(repo: Path, rev: str, tmp: Path) -> Path:
    """The memos tree at `rev` with the committed queries as its queries.json."""
    dest = tmp / "source" / "memos"
    sha = git_tree(repo, rev, dest)
    (dest / "queries.json").write_bytes(QUERIES.read_bytes())
    print(f"memos corpus: {repo} at {sha}, queries {QUERIES.name}", flush=True)
    return dest


def reference_checkout(cb: Path, rev: str, tmp: Path) -> Path:
    """A checkout of the reference: `cb` itself when it holds contextbenchmark.mjs, else `git archive` of it."""
    if (cb / "contextbenchmark.mjs").is_file():
        return cb
    sha = git_tree(cb, rev, tmp / "contextbenchmark")
    print(f"ContextBenchmark: {cb} at {sha}", flush=True)
    return tmp / "contextbenchmark"


def compile_ctxgauge(src: Path | None = None) -> None:
    """Compile the ctxgauge package the timed commands import to bytecode beside its sources, as installing it
    does (and as a second run does where bytecode may be written): each timed run then reads, not compiles."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src is not None:
        env["PYTHONPATH"] = str(src.resolve())
    where = subprocess.run([*CTXGAUGE[:1], "-c", "import ctxgauge, os; print(os.path.dirname(ctxgauge.__file__))"],
                           capture_output=True, text=True, check=True, env=env).stdout.strip()
    subprocess.run([*CTXGAUGE[:1], "-m", "compileall", "-q", where], env=env, check=True, stdout=subprocess.DEVNULL)
    print(f"ctxgauge from {where} (compiled to bytecode first)", flush=True)


def determinism_row(source: Path, cb: Path | None, rounds: int, tmp: Path, also_src: Path | None = None,
                    executors: list[str] | None = None) -> None:
    """One corpus: ctxgauge's determinism suite and (with `cb`) the reference, interleaved; with `also_src`,
    ctxgauge from that source tree too (before and after in one run); with `executors`, ctxgauge with each
    `--executor` too (rebuilds in worker processes)."""
    compile_ctxgauge()
    if also_src is not None:
        compile_ctxgauge(also_src)
    queries = json.loads((source / "queries.json").read_text())
    corpus = tmp / "corpora" / source.name  # one copy both tools read; its name is the corpus's name
    shutil.copytree(source, corpus, symlinks=True)
    (corpus / "src" / "shared").mkdir(parents=True, exist_ok=True)
    print(f"determinism on {source.name}: bm25, {len(queries)} queries, k 10, 3 rebuilds, 5 trials, drift", flush=True)

    def ours(i: int, src: Path | None = None, tag: str = "", executor: str = "local"):
        out = tmp / f"det-{source.name}{tag}-{i}"
        shutil.rmtree(out, ignore_errors=True)
        figures = timed([*CTXGAUGE, "--cache-dir", str(tmp / f"cache-det-{source.name}{tag}-{i}"), "determinism",
                         str(corpus), "-e", "bm25", "--queries", str(corpus / "queries.json"), "--rebuilds", "3",
                         "--trials", "5", "-k", "10", "--families", "rebuild,query,drift", "--out", str(out),
                         *(["--executor", executor] if executor != "local" else [])],
                        env={"PYTHONPATH": str(src.resolve())} if src else None)
        if i == 0 and not tag:
            record = json.loads((out / "run.json").read_text())
            label = record["results"]["engines"]["bm25"].get("label")
            print(f"  {source.name}: ctxgauge indexed {record['context']['corpus']['files']} files ({label}); "
                  f"the reference indexes {reference_files(corpus)}", flush=True)
        return figures

    if cb is None:
        print("  no --contextbenchmark: ctxgauge alone", flush=True)
        for i in range(rounds):
            w, c, *_ = ours(i)
            print(f"  round {i + 1} ctxgauge: {w:.1f} s wall, {c:.2f} CPU s; load {os.getloadavg()}", flush=True)
        return

    def reference(i: int):
        out = tmp / f"ref-{source.name}-{i}.json"  # written only when the run finished every family
        figures = timed(["node", "contextbenchmark.mjs", "run", "--adapters", "bm25", "--corpus", str(corpus),
                         "--rebuilds", "3", "--trials", "5", "--k", "10", "--families", "rebuild,query,drift",
                         "--out", str(out)], cwd=cb)
        report = json.loads(out.read_text())["adapters"]["bm25"]["family"] if out.is_file() else {}
        if set(report) != {"rebuild", "query", "drift"}:  # a run that skipped a family is not the same work
            raise SystemExit(f"the reference did not finish rebuild, query and drift on {corpus} "
                             f"(report: {sorted(report) or 'none'}); a corpus without src/shared/ kills its drift")
        return figures

    others = {f"ctxgauge({also_src})": lambda i: ours(i, also_src, "-other")} if also_src else {}
    for spec in executors or ():
        others[f"ctxgauge --executor {spec}"] = lambda i, spec=spec: ours(i, tag=f"-{spec}", executor=spec)
    row(f"determinism on {source.name} vs ContextBenchmark", reference, ours, rounds, others)


CASES_BASELINE = "dc65eaf"  # issue 12's "today": cases built every index from nothing
LITE_PER_REPO = 4


def swebench_instances(source: Path, repos: Path, lite: bool, tmp: Path) -> Path:
    """The instances whose repository is cloned under `repos` (at most LITE_PER_REPO per repository with
    `lite`), in the file's order, written to a file of their own."""
    if source.is_dir():
        raw = subprocess.run(["git", "-C", str(source), "show", "HEAD:swe-bench-lite.json"], capture_output=True,
                             check=True).stdout
    else:
        raw = source.read_bytes()
    records = json.loads(raw)
    kept, per_repo, left_out = [], {}, 0

    def cloned(repo: str) -> bool:
        owner, _, name = repo.partition("/")
        return any(p.is_dir() for p in (repos / f"{owner}__{name}", repos / name, repos / owner / name,
                                         repos / f"{owner}+{name}" / "repo", repos / f"{owner}+{name}"))

    for rec in records:
        if not cloned(rec["repo"]):
            left_out += 1
            continue
        if lite and per_repo.get(rec["repo"], 0) >= LITE_PER_REPO:
            continue
        per_repo[rec["repo"]] = per_repo.get(rec["repo"], 0) + 1
        kept.append(rec)
    out = tmp / "instances.json"
    out.write_text(json.dumps(kept))
    print(f"cases: {len(kept)} instances of {len(per_repo)} repositories "
          f"({', '.join(f'{r} {n}' for r, n in sorted(per_repo.items()))}); {left_out} of repositories not cloned "
          f"under {repos} left out", flush=True)
    return out


def rankings_hash(run_dir: Path) -> str:
    """SHA-256 (first 16 digits) of every case's ranking (paths and scores) in a cases run directory, by case
    name: two runs that ranked every case the same have the same hash."""
    import hashlib

    rankings = {}
    for line in (run_dir / "units.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            unit = json.loads(line)
            rankings[unit["id"]] = [[h["path"], h["score"]] for h in unit.get("ranking", [])]
    return hashlib.sha256(json.dumps(sorted(rankings.items())).encode()).hexdigest()[:16]


def baseline_source(rev: str, tmp: Path) -> Path:
    """This project's `src` at `rev`, extracted with `git archive` (no worktree, nothing checked out)."""
    here = Path(__file__).resolve().parents[1]
    dest = tmp / f"src-{rev}"
    dest.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(here), "archive", rev, "src"], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait() != 0:
        raise SystemExit(f"git archive {rev} failed in {here}")
    return dest / "src"


def cases_row(instances: Path, repos: Path, baseline_rev: str, rounds: int, tmp: Path) -> None:
    """ctxgauge's cases over `instances` against the same command run by ctxgauge at `baseline_rev`, each cold,
    interleaved; both arms' rankings hashes printed, and the row fails unless they are equal."""
    old_src = baseline_source(baseline_rev, tmp)
    compile_ctxgauge()
    compile_ctxgauge(old_src)
    hashes: dict[str, set] = {"baseline": set(), "ctxgauge": set()}

    def arm(label: str, src: Path | None):
        def run(i: int):
            out = tmp / f"cases-{label}-{i}"
            cache = tmp / f"cache-cases-{label}-{i}"  # empty: cold (the baseline has no work cache at all)
            env = {"CTXGAUGE_CACHE": str(cache), **({"PYTHONPATH": str(src.resolve())} if src else {})}
            figures = timed([*CTXGAUGE, "cases", str(instances), "--repos", str(repos), "-e", "bm25",
                             "--out", str(out)], env=env)
            hashes[label].add(rankings_hash(out))
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)
            return figures
        return run

    row(f"cases over {instances.name} with bm25 vs ctxgauge at {baseline_rev}", arm("baseline", old_src),
        arm("ctxgauge", None), rounds)
    print(f"  rankings hash: baseline {' '.join(sorted(hashes['baseline']))}, ctxgauge "
          f"{' '.join(sorted(hashes['ctxgauge']))}", flush=True)
    if len(hashes["baseline"] | hashes["ctxgauge"]) != 1:
        raise SystemExit("cases: the two arms (or two rounds) ranked differently")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, action="append", default=[],
                    help="a directory holding queries.json (the determinism row; repeat for several corpora)")
    ap.add_argument("--memos", type=Path, help="a clone of usememos/memos: the determinism row's corpus is its tree "
                    "at --memos-rev with benchmarks/determinism_queries.json")
    ap.add_argument("--memos-rev", default=MEMOS_REV)
    ap.add_argument("--contextbenchmark", type=Path, help="aabhisrv/contextbenchmark: a checkout, or a clone read "
                    "at --contextbenchmark-rev")
    ap.add_argument("--contextbenchmark-rev", default="HEAD")
    ap.add_argument("--repo", type=Path, help="a git repository for the replay row")
    ap.add_argument("--commits", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--also-src", type=Path, help="also time the determinism and replay rows with ctxgauge from "
                    "this source tree (PYTHONPATH), e.g. an older checkout's src: before and after in one run")
    ap.add_argument("--swebench", type=Path, help="SWE-bench instances for the cases row: a JSON file, or a clone "
                    "holding swe-bench-lite.json")
    ap.add_argument("--repos", type=Path, help="where the instances' repositories are cloned (cases row)")
    ap.add_argument("--cases-baseline", default=CASES_BASELINE, help="the ctxgauge commit the cases row compares "
                    "against (this checkout's history)")
    ap.add_argument("--cases-lite", action="store_true", help=f"at most {LITE_PER_REPO} instances per repository")
    ap.add_argument("--cases-rounds", type=int, help="rounds of the cases row (default --rounds)")
    ap.add_argument("--determinism-executor", action="append", default=[], metavar="SPEC",
                    help="also time the determinism row with `--executor SPEC` (e.g. local:2; repeat for several)")
    ap.add_argument("--hybrid-repo", type=Path, help="a git repository for the hybrid replay row")
    ap.add_argument("--hybrid-rev", default="HEAD", help="the newest revision the hybrid row walks back from")
    ap.add_argument("--hybrid-rounds", type=int, default=1)
    args = ap.parse_args()
    if args.contextbenchmark and not (args.corpus or args.memos):
        ap.error("--contextbenchmark needs --memos or --corpus DIR (the corpus both tools measure)")
    if args.swebench and not args.repos:
        ap.error("--swebench needs --repos DIR (where the instances' repositories are cloned)")
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="ctxgauge-speed-") as tmp:
        tmp = Path(tmp)

        corpora = ([memos_corpus(args.memos, args.memos_rev, tmp)] if args.memos else []) + args.corpus
        cb = args.contextbenchmark and reference_checkout(args.contextbenchmark, args.contextbenchmark_rev, tmp)
        for corpus in corpora:
            determinism_row(corpus, cb, args.rounds, tmp, args.also_src, args.determinism_executor)
        if args.swebench:
            instances = swebench_instances(args.swebench, args.repos, args.cases_lite, tmp)
            cases_row(instances, args.repos, args.cases_baseline, args.cases_rounds or args.rounds, tmp)
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

            others = {}
            if args.also_src:
                def other_replay(i: int):
                    return timed([*CTXGAUGE, "--cache-dir", str(tmp / f"cache-other{i}"), "replay", str(args.repo),
                                  "-e", "bm25", "--commits", str(args.commits), "--json"],
                                 env={"PYTHONPATH": str(args.also_src.resolve())})

                others[f"ctxgauge({args.also_src})"] = other_replay
            row(f"bm25 replay of {args.commits} commits vs the naive floor (git archive | tar -x per commit)",
                naive, ours_replay, args.rounds, others)
        if args.hybrid_repo:
            hybrid_row(args.hybrid_repo, args.hybrid_rev, args.commits, args.hybrid_rounds, args.also_src, tmp)
    print(f"load average at end: {os.getloadavg()}")
    return 0


HYBRID_GOAL_CPU_S = 120.0  # issue 12: a hybrid replay of 50 commits of a 1,000-file repository


def hybrid_row(repo: Path, rev: str, commits: int, rounds: int, also_src: Path | None, tmp: Path) -> None:
    """hybrid and minilm replays of the same commits, each cold (its own empty work cache), interleaved with
    hybrid from `also_src` when given; prints each arm's CPU seconds against the goal."""
    def replay(engine: str, src: Path | None = None, tag: str = ""):
        def run(i: int):
            name = f"{engine}{tag}-{i}"
            return timed([*CTXGAUGE, "--cache-dir", str(tmp / f"cache-{name}"), "replay", str(repo), "--rev", rev,
                          "-e", engine, "--commits", str(commits), "--out", str(tmp / f"run-{name}"), "--json"],
                         env={"PYTHONPATH": str(src.resolve())} if src else None)
        return run

    arms = [("hybrid", replay("hybrid")), ("minilm", replay("minilm"))]
    if also_src:
        arms.append((f"hybrid({also_src})", replay("hybrid", also_src, "-other")))
    print(f"hybrid replay of {commits} commits of {repo} at {rev}, each arm cold; goal <= {HYBRID_GOAL_CPU_S:.0f} "
          f"CPU s for hybrid", flush=True)
    got: dict[str, list] = {label: [] for label, _ in arms}
    for i in range(rounds):
        for label, fn in arms[i % len(arms):] + arms[:i % len(arms)]:
            w, c, m = fn(i)
            got[label].append((w, c))
            print(f"  round {i + 1} {label}: {w:.1f} s wall, {c:.1f} CPU s, peak {m:.0f} MB; load {os.getloadavg()}",
                  flush=True)
    for label, runs in got.items():
        cpu = statistics.median(c for _, c in runs)
        print(f"  {label}: median {statistics.median(w for w, _ in runs):.1f} s wall / {cpu:.1f} CPU s "
              f"({cpu / HYBRID_GOAL_CPU_S:.2f}x the goal)", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
