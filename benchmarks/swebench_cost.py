"""CPU cost of fusion against bm25 on SWE-bench Lite, and whether every ranking is the same each time.

    .venv/bin/python benchmarks/swebench_cost.py --mirror /work/.mirror
    .venv/bin/python benchmarks/swebench_cost.py --mirror /work/.mirror --old-src /tmp/old/src   # also 5d251ae
    .venv/bin/python benchmarks/swebench_cost.py --mirror /work/.mirror --limit 5 --reps 1       # a smoke run

The instances: SWE-bench Lite (read from `benchmarks/quality_split.json`'s `source`, a file in a git
repository, through `git show`, never written by hand) of pytest, sphinx, requests, flask, seaborn, sympy,
astropy, pylint and xarray (both halves of the split; 140 instances). Clones are found as
`benchmarks/quality.py` finds them (`--paths`, then `--mirror`); an instance whose `base_commit` a clone
lacks is named and left out, and the count is printed.

Each run is `ctxgauge --cache-dir EMPTY cases INSTANCES --engine E --json` in its own process (the code
under test on PYTHONPATH), with a fresh empty work cache and a fresh run directory. Its cost is the CPU
time of that process and everything it waited for (`RUSAGE_CHILDREN` of this script, read before and
after: git runs as its children). Engines alternate within each repetition (bm25, fusion, bm25, ...), so
a busy spell on a shared machine falls on both. Printed: each run's CPU and wall seconds, the median CPU
of each engine over `--reps` (default 3), the ratio fusion / bm25 against the 3.0x goal, and whether
all rankings (paths, scores and spans of every hit of every instance) of each engine are identical across
the repetitions. With `--old-src DIR` (the `src` of another checkout, e.g. 5d251ae's via `git worktree
add`), each engine also runs once with that code, and its rankings are compared with the new ones by
paths and scores (5d251ae had no spans). The script exits 1 when a ranking differs, 0 otherwise; the
cost goal is reported, not enforced (a shared machine's CPU seconds vary).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from quality import SPLIT, find_clone  # noqa: E402  (the clone lookup quality.py uses)

REPOS = ("pytest-dev/pytest", "sphinx-doc/sphinx", "psf/requests", "pallets/flask", "mwaskom/seaborn",
         "sympy/sympy", "astropy/astropy", "pylint-dev/pylint", "pydata/xarray")
GOAL = 3.0


def children_cpu() -> float:
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return c.ru_utime + c.ru_stime


def _git(clone: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(clone), *args], capture_output=True)


def absent_blobs(clone: Path, commit: str) -> list[str]:
    """Paths of the commit's tree whose blobs the clone lacks (a snapshot may leave its largest files out;
    the cases suite then fails the instance as `missing-object`)."""
    rows = [line.split("\t", 1) for line in _git(clone, "ls-tree", "-r", commit).stdout.decode().splitlines()]
    blobs = [(meta.split()[2], path) for meta, path in rows if meta.split()[1] == "blob"]
    check = subprocess.run(["git", "-C", str(clone), "cat-file", "--batch-check"], capture_output=True,
                           input="".join(f"{oid}\n" for oid, _ in blobs).encode())
    gone = {line.split()[0] for line in check.stdout.decode().splitlines() if line.endswith(" missing")}
    return sorted(path for oid, path in blobs if oid in gone)


def instances(paths: dict, mirror: Path | None, limit: int | None) -> tuple[list[dict], list[str], list[str]]:
    """(kept instances, instances left out with why, repositories with no clone)."""
    split = json.loads(SPLIT.read_text())
    src_repo, _, src_path = split["swebench"]["source"].partition(":")
    src = find_clone(src_repo, paths, mirror)
    if src is None:
        raise SystemExit(f"no clone of {src_repo} (the SWE-bench Lite source); give --mirror or --paths")
    shown = _git(src, "show", f"HEAD:{src_path}")
    if shown.returncode:
        raise SystemExit(f"{src_repo}: cannot read {src_path}: {shown.stderr.decode().strip()}")
    data = [d for d in json.loads(shown.stdout) if d["repo"] in REPOS]
    data.sort(key=lambda d: d["instance_id"])
    keep, left_out, absent = [], [], sorted({d["repo"] for d in data if find_clone(d["repo"], paths, mirror) is None})
    for d in data:
        if d["repo"] in absent:
            left_out.append(f"{d['instance_id']} (no clone)")
            continue
        clone = find_clone(d["repo"], paths, mirror)
        if _git(clone, "cat-file", "-e", f"{d['base_commit']}^{{commit}}").returncode:
            left_out.append(f"{d['instance_id']} (base_commit {d['base_commit'][:12]} absent)")
            continue
        gone = absent_blobs(clone, d["base_commit"])
        if gone:
            left_out.append(f"{d['instance_id']} ({len(gone)} blob(s) of base_commit absent: {', '.join(gone[:3])})")
            continue
        keep.append(d)
    return (keep[:limit] if limit else keep), left_out, absent


def run_once(src: Path, engine: str, case_file: Path, repos_dir: Path, work: Path, tag: str,
             keep: Path | None = None) -> dict:
    """One `ctxgauge cases` process with an empty work cache: CPU (self + children), wall, rankings."""
    cache, out = work / f"cache-{tag}", work / f"run-{tag}"
    cache.mkdir()
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("CTXGAUGE_CACHE", None)
    cmd = [sys.executable, "-m", "ctxgauge", "--cache-dir", str(cache), "cases", str(case_file),
           "--repos", str(repos_dir), "--engine", engine, "--out", str(out), "--json"]
    c0, w0 = children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, cwd=work)
    cpu, wall = children_cpu() - c0, time.perf_counter() - w0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{tag}: exit {proc.returncode}\n{proc.stderr.decode()[-3000:]}")
    data = json.loads(proc.stdout)
    rankings = {c["name"]: [(h["path"], h["score"], [tuple(s) for s in h.get("spans") or ()])
                            for h in c.get("ranking") or []]
                for c in data["cases"]}
    status = {c["name"]: c.get("status") for c in data["cases"]}
    result = {"cpu_s": cpu, "wall_s": wall, "rankings": rankings, "status": status}
    if keep is not None:  # each run as it finishes, so an interrupted benchmark still leaves what it measured
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{tag}.json").write_text(json.dumps(result))
    return result


def differing(a: dict, b: dict, *, spans: bool = True) -> list[str]:
    """Instance names whose ranking differs between two runs (paths and scores, and spans when asked)."""
    def key(r):
        return r if spans else [h[:2] for h in r]
    return sorted(n for n in set(a) | set(b) if key(a.get(n, [])) != key(b.get(n, [])))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path, default=None, help="directory holding clones (owner+name/repo, ...)")
    ap.add_argument("--paths", type=Path, default=None, help='JSON {"owner/name": "/local/clone"}')
    ap.add_argument("--engines", default="bm25,fusion", help="the baseline first, then the engine costed")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None, help="only the first N instances (a smoke run)")
    ap.add_argument("--src", type=Path, default=HERE.parent / "src", help="code under test (default: this checkout)")
    ap.add_argument("--old-src", type=Path, default=None, help="src of an older checkout whose rankings must be equal")
    ap.add_argument("--keep", type=Path, default=None, help="directory: each run's CPU, wall and rankings as TAG.json, written as it finishes")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    paths = json.loads(args.paths.read_text()) if args.paths else {}
    base, costed = args.engines.split(",")

    keep, left_out, absent = instances(paths, args.mirror, args.limit)
    print(f"instances: {len(keep)} measured, {len(left_out)} left out", file=sys.stderr)
    for why in left_out:
        print(f"  left out: {why}", file=sys.stderr)
    runs: dict[str, list[dict]] = {base: [], costed: []}
    old: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="swebench-cost-") as tmp:
        work = Path(tmp)
        repos_dir = work / "repos"
        repos_dir.mkdir()
        for repo in sorted({d["repo"] for d in keep}):
            owner, _, name = repo.partition("/")
            (repos_dir / f"{owner}__{name}").symlink_to(find_clone(repo, paths, args.mirror).resolve())
        case_file = work / "instances.json"
        case_file.write_text(json.dumps(keep))
        # The older code runs right after the first repetition, so an interrupted benchmark has both checks.
        schedule = [(rep, eng) for rep in range(args.reps) for eng in ((base, costed) if rep % 2 == 0 else (costed, base))]
        if args.old_src:
            schedule[2:2] = [("old", base), ("old", costed)]
        for rep, eng in schedule:
            r = run_once(args.old_src if rep == "old" else args.src, eng, case_file, repos_dir, work,
                         f"{eng}-{rep}", args.keep)
            if rep == "old":
                old[eng] = r
            else:
                runs[eng].append(r)
            print(f"  rep {rep if rep == 'old' else rep + 1} {eng:8s} cpu {r['cpu_s']:8.1f} s  "
                  f"wall {r['wall_s']:8.1f} s  load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)

    med = {e: statistics.median(r["cpu_s"] for r in rs) for e, rs in runs.items()}
    ratio = med[costed] / med[base] if med[base] else None
    report = {"instances": len(keep), "left_out": left_out, "absent_clones": absent, "reps": args.reps,
              "cpu_s": {e: [round(r["cpu_s"], 1) for r in rs] for e, rs in runs.items()},
              "wall_s": {e: [round(r["wall_s"], 1) for r in rs] for e, rs in runs.items()},
              "median_cpu_s": {e: round(v, 1) for e, v in med.items()},
              "ratio": round(ratio, 2) if ratio else None, "goal": GOAL,
              "not_ok": {e: sorted(n for n, s in rs[0]["status"].items() if s != "ok") for e, rs in runs.items()},
              "unstable": {e: sorted({n for r in rs[1:] for n in differing(rs[0]["rankings"], r["rankings"])})
                           for e, rs in runs.items()}}
    if old:
        report["differs_from_old"] = {e: differing(old[e]["rankings"], runs[e][0]["rankings"], spans=False)
                                      for e in old}
        report["old_cpu_s"] = {e: round(o["cpu_s"], 1) for e, o in old.items()}
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(f"{len(keep)} SWE-bench Lite instances ({len(left_out)} left out), {args.reps} repetitions, "
              f"load average {os.getloadavg()[0]:.1f}")
        print("| engine | CPU s per run | median CPU s | wall s per run | rankings identical across runs |")
        print("|---|---|---|---|---|")
        for e in runs:
            print(f"| {e} | {', '.join(f'{v:.1f}' for v in report['cpu_s'][e])} | {med[e]:.1f} | "
                  f"{', '.join(f'{v:.1f}' for v in report['wall_s'][e])} | "
                  f"{'yes' if not report['unstable'][e] else 'NO: ' + ', '.join(report['unstable'][e])} |")
        print(f"ratio {costed} / {base} (median CPU): {ratio:.2f}x  (goal <= {GOAL}x: "
              f"{'met' if ratio is not None and ratio <= GOAL else 'NOT met'})")
        for e, names in report["not_ok"].items():
            if names:
                print(f"{e}: {len(names)} instances not ok: {', '.join(names)}")
        if old:
            for e, names in report["differs_from_old"].items():
                print(f"{e} vs --old-src ({report['old_cpu_s'][e]:.1f} CPU s): "
                      + ("all rankings equal (paths and scores)" if not names
                         else f"{len(names)} rankings differ: {', '.join(names)}"))
    bad = any(report["unstable"].values()) or any(report.get("differs_from_old", {}).values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
