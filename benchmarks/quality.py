"""Retrieval quality of every engine on public repositories (commit replay) and on SWE-bench Lite.

    python benchmarks/quality.py --mirror /work/.mirror                  # every engine, both halves
    python benchmarks/quality.py --engines bm25,fusion --half tune --commits 20
    python benchmarks/quality.py --paths my-clones.json --json

Repositories come from `benchmarks/quality_split.json` (committed before any tuning: which repositories
tune, which report) and are looked up as local clones: `--paths FILE` (JSON `{"owner/name": "/path"}`)
first, then under `--mirror DIR` as `owner+name/repo`, `owner+name`, `owner__name` or `name`. An absent
repository is skipped and named. Nothing is copied out of any clone.

Replay: the `replay` suite itself (`ctxgauge.suites.replay.replay`), the `--commits` newest eligible
commits of each repository, every engine on the same commits. SWE-bench: the Lite instances (read from the
split's `source`, a file in a git repository, never written by hand) of the repositories present, through
the `cases` suite (`load_swebench`, `run_cases`), expected = files the gold patch modifies.

Printed per repository and per half: hit@1/5/10, recall@10, MRR, nDCG@10, cold build seconds and index
size (one build at the newest commit), median query latency, CPU seconds of the whole replay; then the
paired comparison (mean difference, 95% bootstrap interval, randomization p) of the best engine on the
tune half against bm25, on the report half.

Span figures (issue 37), read from each unit's figures under the keys the suites record:
`line_coverage_tokens@1000`, `line_coverage_tokens@4000`, `gold_lines_per_1k_tokens@1000` and
`line_coverage_auc`, each a mean over the units holding it (units without gold lines have none); a key no
unit holds prints "not recorded" (a run made before spans). On the report half the best engine is compared
with `--baseline` (default `bm25(spans=false)`, always measured): line coverage at 1,000 and 4,000 tokens
and hit@5 (paired mean difference, 95% bootstrap interval), and the ratio of gold lines per 1,000 tokens
(ratio of means, bootstrap 95% interval); a replay repository of the report half that is absent or
unfinished is named and the pooled figure says over which repositories it is. Every engine's units are kept in `--out` keyed by the
engine's identity, so a rerun measures only what changed (an engine whose code changed runs again).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPLIT = HERE / "quality_split.json"
METRICS = ("hit@1", "hit@5", "hit@10", "recall@10", "mrr", "ndcg@10")
DEFAULT_ENGINES = ("grep", "bm25", "graph", "history", "fusion", "minilm", "hybrid")
BASELINE = "bm25(spans=false)"
"""The engine the tune-half winner is compared with on the report half (whole files, no spans)."""
SPAN_METRICS = ("line_coverage_tokens@1000", "line_coverage_tokens@4000", "gold_lines_per_1k_tokens@1000",
                "line_coverage_auc")
"""Span figures read from each unit's figures (issue 37); a unit without a key has no gold lines there (or
the run predates spans): it is left out of that mean, and a key no unit holds is printed "not recorded"."""
SPAN_HEAD = ("line cov@1k", "line cov@4k", "gold lines/1k tok", "line cov AUC")


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (git runs as children)."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def find_clone(repo: str, paths: dict[str, str], mirror: Path | None) -> Path | None:
    if repo in paths:
        p = Path(paths[repo])
        return p if p.is_dir() else None
    if mirror is None:
        return None
    owner, _, name = repo.partition("/")
    for c in (mirror / f"{owner}+{name}" / "repo", mirror / f"{owner}+{name}", mirror / f"{owner}__{name}",
              mirror / name):
        if c.is_dir():
            return c
    return None


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)[:80]


CACHED_ONLY = False
"""--cached-only: print what is kept in --out whatever identity it was measured with; run nothing."""


class NotRun(Exception):
    pass


def _cached(path: Path, identity: dict) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        if CACHED_ONLY:
            raise NotRun(path.name) from None
        return None
    return data if CACHED_ONLY or data.get("identity") == identity else None


def _engine(spec: str):
    from ctxgauge.engines import engine_available, get_engine

    eng = get_engine(spec)
    ok, why = engine_available(eng)
    return eng, (None if ok else why)


def cold_build(spec: str, clone: Path) -> dict:
    """One cold build at HEAD in a fresh engine object: seconds and bytes written."""
    from ctxgauge.corpus import open_corpus

    eng, _ = _engine(spec)
    corpus = open_corpus(clone)
    with tempfile.TemporaryDirectory(prefix="quality-build-") as tmp:
        t0 = time.perf_counter()
        eng.build(corpus, Path(tmp))
        secs = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file())
    getattr(eng, "close", lambda: None)()
    return {"build_s": secs, "index_bytes": size, "files": len(corpus.files)}


def run_replay(repo: str, clone: Path, spec: str, commits: int, out: Path) -> dict:
    from ctxgauge.suites.replay import ReplayConfig, replay

    eng, why = _engine(spec)
    if why:
        return {"skipped": why}
    identity = eng.identity()
    getattr(eng, "close", lambda: None)()
    cache = out / _slug(repo) / f"{_slug(spec)}.json"
    got = _cached(cache, identity)
    if got is not None and (CACHED_ONLY or got.get("commits") == commits):
        return got
    run_dir = out / _slug(repo) / f"{_slug(spec)}.run"
    shutil.rmtree(run_dir, ignore_errors=True)
    c0, w0 = cpu_seconds(), time.perf_counter()
    result = replay(ReplayConfig(repo=clone, engine=spec, commits=commits, ks=(1, 5, 10), out=run_dir))
    cpu, wall = cpu_seconds() - c0, time.perf_counter() - w0
    timing = {}
    for line in (run_dir / "units.jsonl").read_text().splitlines():
        rec = json.loads(line)
        timing[rec.get("id")] = rec.get("timing")
    units = [{"id": c["sha"], "figures": c.get("figures"), "timing": timing.get(c["sha"]),
              "expected": c.get("expected"), "request": c.get("request"),
              "top": [h["path"] for h in (c.get("ranking") or [])[:10]]}
             for c in result.to_dict()["commits"]]
    data = {"identity": identity, "commits": commits, "cpu_s": cpu, "wall_s": wall, "units": units,
            **cold_build(spec, clone)}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(data))
    shutil.rmtree(run_dir, ignore_errors=True)
    return data


def swebench_instances(split: dict, paths: dict, mirror: Path | None, repos: list[str], out: Path) -> Path | None:
    """The Lite instances of `repos` as a JSON file under `out`, read from the split's source file."""
    from ctxgauge.git import Repo

    src_repo, _, src_path = split["swebench"]["source"].partition(":")
    clone = find_clone(src_repo, paths, mirror)
    if clone is None:
        return None
    data = json.loads(Repo(clone).run_bytes(["show", f"HEAD:{src_path}"]))
    keep = [d for d in data if d["repo"] in repos and find_clone(d["repo"], paths, mirror) is not None]
    if not keep:
        return None
    target = out / "swebench" / f"lite-{_slug('-'.join(sorted({d['repo'] for d in keep})))}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(keep))
    return target


def _carried_cpu(run_dir: Path) -> float:
    """CPU seconds spent on this run before an interruption (written as each case finishes), 0 if none."""
    try:
        return float((run_dir.parent / f"{run_dir.name}.cpu").read_text())
    except (OSError, ValueError):
        return 0.0


def _cases_resumed(case_file, config) -> tuple:
    """run_cases, continuing an unfinished run of the same engine identity and instances in `config.out`
    (hours of SWE-bench work survive an interruption); a run recorded with other options starts afresh.
    The CPU seconds spent so far are kept beside the run directory, so the total stays honest: returns
    (result, CPU seconds of the whole run)."""
    from dataclasses import replace

    from ctxgauge.errors import UserError
    from ctxgauge.suites.cases import run_cases

    run_dir = Path(config.out)
    carried = _carried_cpu(run_dir)
    c0 = cpu_seconds()
    stamp = run_dir.parent / f"{run_dir.name}.cpu"

    def progress(done: int, total: int, name: str) -> None:
        stamp.write_text(f"{carried + cpu_seconds() - c0:.1f}")
        print(f"  {done}/{total} {name}", file=sys.stderr, flush=True)

    if (run_dir / "run.json").is_file():
        try:
            result = run_cases(case_file, replace(config, resume=True), progress)
            return result, carried + cpu_seconds() - c0
        except UserError as exc:  # other options (an engine whose code changed) or a finished run
            print(f"  not resumed ({exc}); starting afresh", file=sys.stderr, flush=True)
    shutil.rmtree(run_dir, ignore_errors=True)
    stamp.unlink(missing_ok=True)
    carried, c0 = 0.0, cpu_seconds()
    return run_cases(case_file, config, progress), cpu_seconds() - c0


def run_swebench(instances: Path, spec: str, out: Path, paths: dict, mirror: Path | None) -> dict:
    from ctxgauge.suites.cases import CasesConfig, load_swebench

    eng, why = _engine(spec)
    if why:
        return {"skipped": why}
    identity = eng.identity()
    cache = out / "swebench" / f"{instances.stem}-{_slug(spec)}.json"
    got = _cached(cache, identity)
    if got is not None:
        return got
    repos_dir = Path(tempfile.mkdtemp(prefix="quality-swe-"))
    try:
        for d in {r["repo"] for r in json.loads(instances.read_text())}:
            owner, _, name = d.partition("/")
            (repos_dir / f"{owner}__{name}").symlink_to(find_clone(d, paths, mirror).resolve())
        case_file, _ = load_swebench(instances, repos_dir)
        run_dir = out / "swebench" / f"{instances.stem}-{_slug(spec)}.run"
        result, cpu = _cases_resumed(case_file, CasesConfig(engine=spec, ks=(1, 5, 10), out=run_dir))
    finally:
        shutil.rmtree(repos_dir, ignore_errors=True)
    units = [{"id": c["name"] if "name" in c else c.get("id"), "figures": c.get("figures"),
              "expected": c.get("expected"), "top": [h["path"] for h in (c.get("ranking") or [])[:10]]}
             for c in result.to_dict()["cases"]]
    data = {"identity": identity, "cpu_s": cpu, "units": units}
    cache.write_text(json.dumps(data))
    shutil.rmtree(run_dir, ignore_errors=True)
    (run_dir.parent / f"{run_dir.name}.cpu").unlink(missing_ok=True)
    return data


def _by_repo(units: list[dict]) -> dict[str, list[dict]]:
    """SWE-bench units by repository (an instance id is `owner__name-number`)."""
    out: dict[str, list[dict]] = {}
    for u in units:
        out.setdefault(u["id"].rsplit("-", 1)[0], []).append(u)
    return out


def _ok(units: list[dict]) -> list[dict]:
    return [u for u in units if u.get("figures") and u["figures"].get("mrr") is not None]


def summary(units: list[dict]) -> dict:
    ok = _ok(units)
    out = {m: (statistics.fmean(u["figures"][m] for u in ok) if ok else None) for m in METRICS}
    lat = [u["timing"]["query_s"] for u in ok if u.get("timing") and "query_s" in u["timing"]]
    out["n"] = len(ok)
    out["query_ms"] = statistics.median(lat) * 1000 if lat else None
    return out


def span_summary(units: list[dict]) -> dict:
    """Macro mean of each span figure over the units that hold it (None: no unit does), and how many."""
    out = {}
    for m in SPAN_METRICS:
        vals = [u["figures"][m] for u in _ok(units) if u["figures"].get(m) is not None]
        out[m] = (statistics.fmean(vals) if vals else None, len(vals))
    return out


def span_table(title: str, rows: list[tuple[str, str, dict]]) -> str:
    head = ["repo", "engine", *(f"{h} (n)" for h in SPAN_HEAD)]
    lines = [f"\n### {title}\n", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for repo, eng, d in rows:
        if "units" not in d:
            continue
        s = span_summary(d["units"])
        cells = ["not recorded" if s[m][0] is None else f"{s[m][0]:.3f} ({s[m][1]})" for m in SPAN_METRICS]
        lines.append("| " + " | ".join([repo, eng, *cells]) + " |")
    return "\n".join(lines)


def ratio_ci(a: list[float], b: list[float], seed: int = 0, n: int = 10000) -> tuple[float, float, float] | None:
    """mean(a) / mean(b) over paired units with a seeded percentile bootstrap 95% interval (units resampled
    together); None when mean(b) is 0."""
    import numpy as np

    xa, xb = np.asarray(a, float), np.asarray(b, float)
    if not len(xa) or xb.mean() == 0:
        return None
    idx = np.random.default_rng(seed).integers(0, len(xa), size=(n, len(xa)))
    num, den = xa[idx].mean(axis=1), xb[idx].mean(axis=1)
    ratios = np.divide(num, den, out=np.full(n, np.nan), where=den != 0)
    low, high = np.nanquantile(ratios, [0.025, 0.975])
    return float(xa.mean() / xb.mean()), float(low), float(high)


def span_paired(a_units: list[dict], b_units: list[dict], seed: int = 0) -> dict:
    """The report-half comparison of issue 37 over the units both engines scored: line coverage at 1,000
    and 4,000 tokens (mean difference, 95% bootstrap interval, p), hit@5 difference, and the ratio of gold
    lines per 1,000 tokens with its interval. A figure no paired unit holds is absent."""
    from ctxgauge.metrics.stats import paired_comparison

    b = {u["id"]: u["figures"] for u in _ok(b_units)}
    pairs = [(u["figures"], b[u["id"]]) for u in _ok(a_units) if u["id"] in b]
    out: dict = {"n": len(pairs)}
    for m in ("line_coverage_tokens@1000", "line_coverage_tokens@4000", "hit@5"):
        xy = [(x[m], y[m]) for x, y in pairs if x.get(m) is not None and y.get(m) is not None]
        if xy:
            out[m] = paired_comparison([float(x) for x, _ in xy], [float(y) for _, y in xy], seed).to_dict()
    m = "gold_lines_per_1k_tokens@1000"
    xy = [(x[m], y[m]) for x, y in pairs if x.get(m) is not None and y.get(m) is not None]
    if xy:
        out["gold_lines_per_1k_ratio"] = {"n": len(xy), "ratio_ci": ratio_ci([x for x, _ in xy], [y for _, y in xy], seed)}
    return out


def span_lines(title: str, cmp: dict) -> str:
    lines = [f"\n{title} (n={cmp.get('n', 0)} paired units)"]
    for m in ("line_coverage_tokens@1000", "line_coverage_tokens@4000", "hit@5"):
        c = cmp.get(m)
        if c is None:
            lines.append(f"  {m:28s} not recorded")
            continue
        lines.append(f"  {m:28s} {c['mean_a']:.3f} vs {c['mean_b']:.3f}  diff {c['mean_diff']:+.3f} "
                     f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]  p={c['p_value']:.4f}  n={c['n']}")
    r = cmp.get("gold_lines_per_1k_ratio")
    if r is None or r["ratio_ci"] is None:
        lines.append(f"  {'gold lines per 1k ratio':28s} not recorded")
    else:
        v, lo, hi = r["ratio_ci"]
        lines.append(f"  {'gold lines per 1k ratio':28s} {v:.2f}x [{lo:.2f}, {hi:.2f}]  n={r['n']}  (goal >= 2x)")
    return "\n".join(lines)


def paired(a_units: list[dict], b_units: list[dict], seed: int = 0) -> dict:
    from ctxgauge.metrics.scoring import compare

    b = {u["id"]: u for u in _ok(b_units)}
    pairs = [(u["figures"], b[u["id"]]["figures"]) for u in _ok(a_units) if u["id"] in b]
    if not pairs:
        return {}
    return compare([p[0] for p in pairs], [p[1] for p in pairs], ("hit@5", "mrr", "recall@10"), seed)


def _span_summaries(kind: str, per: dict) -> dict:
    """--json: each engine's span summary, per repository (replay) or pooled over the half's instances."""
    if kind == "swebench":
        return {e: span_summary(d["units"]) for e, d in per.items() if "units" in d}
    return {r: {e: span_summary(d["units"]) for e, d in engs.items() if "units" in d} for r, engs in per.items()}


def _fmt(v, spec=".3f") -> str:
    return "-" if v is None else format(v, spec)


def table(title: str, rows: list[tuple[str, str, dict]], extra: bool = True) -> str:
    head = ["repo", "engine", "n", *METRICS, "query ms"] + (["build s", "index MB", "replay cpu s"] if extra else [])
    lines = [f"\n### {title}\n", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for repo, eng, d in rows:
        if "skipped" in d:
            lines.append(f"| {repo} | {eng} | skipped: {d['skipped']} |")
            continue
        s = summary(d["units"])
        cells = [repo, eng, str(s["n"]), *(_fmt(s[m]) for m in METRICS), _fmt(s["query_ms"], ".1f")]
        if extra:
            cells += [_fmt(d.get("build_s"), ".1f"), _fmt((d.get("index_bytes") or 0) / 1e6, ".1f"),
                      _fmt(d.get("cpu_s"), ".0f")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def comparison_lines(title: str, cmp: dict) -> str:
    lines = [f"\n{title}"]
    for m, c in cmp.items():
        lines.append(f"  {m:10s} {c['mean_a']:.3f} vs {c['mean_b']:.3f}  diff {c['mean_diff']:+.3f} "
                     f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]  p={c['p_value']:.4f}  "
                     f"w/t/l {c['wins']}/{c['ties']}/{c['losses']}  n={c['n']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path, default=None, help="directory holding clones (owner+name/repo, ...)")
    ap.add_argument("--paths", type=Path, default=None, help='JSON {"owner/name": "/local/clone"}')
    ap.add_argument("--engines", default=",".join(DEFAULT_ENGINES), help="comma-separated engine specs")
    ap.add_argument("--half", choices=("tune", "report", "all"), default="all")
    ap.add_argument("--commits", type=int, default=50, help="newest eligible commits replayed per repository")
    ap.add_argument("--no-replay", action="store_true")
    ap.add_argument("--no-swebench", action="store_true")
    ap.add_argument("--out", type=Path, default=HERE / ".quality-out", help="results kept here (resumable)")
    ap.add_argument("--json", action="store_true", help="print every figure as JSON instead of tables")
    ap.add_argument("--only", default=None, help="comma-separated owner/name: replay only these repositories")
    ap.add_argument("--best", default=None, help="engine compared against bm25 (default: best on the tune half)")
    ap.add_argument("--cached-only", action="store_true", help="run nothing: print what --out holds")
    ap.add_argument("--baseline", default=BASELINE,
                    help=f"engine the best engine's span figures are compared with on the report half (default {BASELINE})")
    args = ap.parse_args(argv)
    global CACHED_ONLY
    CACHED_ONLY = args.cached_only
    from ctxgauge.engines.hybrid import split_engines

    split = json.loads(SPLIT.read_text())
    paths = json.loads(args.paths.read_text()) if args.paths else {}
    engines = split_engines(args.engines)
    if args.baseline not in engines:  # the span comparison's baseline is always measured
        engines.append(args.baseline)
    halves = ("tune", "report") if args.half == "all" else (args.half,)
    results: dict = {"replay": {}, "swebench": {}, "absent": []}
    for half in halves:
        if not args.no_replay:
            for repo in split["replay"][half]:
                if args.only and repo not in args.only.split(","):
                    continue
                clone = find_clone(repo, paths, args.mirror)
                if clone is None:
                    results["absent"].append(repo)
                    continue
                for spec in engines:
                    print(f"[{half}] replay {repo} {spec} ...", file=sys.stderr, flush=True)
                    try:
                        results["replay"].setdefault(half, {}).setdefault(repo, {})[spec] = \
                            run_replay(repo, clone, spec, args.commits, args.out)
                    except NotRun:
                        results["replay"].setdefault(half, {}).setdefault(repo, {})[spec] = {"skipped": "not run yet"}
        if not args.no_swebench:
            inst = swebench_instances(split, paths, args.mirror, split["swebench"][half], args.out)
            if inst is None:
                results["absent"].append(f"swebench:{half}")
                continue
            for spec in engines:
                print(f"[{half}] swebench {spec} ...", file=sys.stderr, flush=True)
                try:
                    results["swebench"].setdefault(half, {})[spec] = run_swebench(inst, spec, args.out, paths,
                                                                                  args.mirror)
                except NotRun:
                    results["swebench"].setdefault(half, {})[spec] = {"skipped": "not run yet"}
    if args.json:
        results["span_summary"] = {kind: {half: _span_summaries(kind, per) for half, per in results[kind].items()}
                                   for kind in ("replay", "swebench")}
        print(json.dumps(results, indent=1))
        return 0
    print(f"load average {os.getloadavg()[0]:.2f}; commits per repository {args.commits}")
    if results["absent"]:
        print("absent (skipped): " + ", ".join(results["absent"]))
    best = args.best
    for half in halves:
        rep = results["replay"].get(half, {})
        rows = [(r, e, d) for r, per in rep.items() for e, d in per.items()]
        if rows:
            print(table(f"replay, {half} half, per repository", rows))
            # Pooled over the repositories every engine has finished, so engines are compared on the same commits.
            common = [r for r, per in rep.items() if all("units" in per.get(e, {}) for e in engines)]
            pooled = [("all", e, {"units": [u for r in common for u in rep[r][e]["units"]]}) for e in engines]
            print(table(f"replay, {half} half, pooled over {len(common)} repositories every engine finished "
                        f"({', '.join(common)})", pooled, extra=False))
            print(span_table(f"replay span figures, {half} half, per repository and pooled over the "
                             f"{len(common)} repositories every engine finished", rows + pooled))
            if common and args.best is None and (half == "tune" or best is None):
                scored = [(summary(d["units"]), e) for _, e, d in pooled]
                best = max(scored, key=lambda se: (se[0]["hit@5"] or 0, se[0]["mrr"] or 0))[1]
        swe = results["swebench"].get(half, {})
        if swe:
            by_repo = {}
            for e, d in swe.items():
                if "units" not in d:
                    by_repo.setdefault("-", {})[e] = d
                    continue
                for r, us in _by_repo(d["units"]).items():
                    by_repo.setdefault(r, {})[e] = {"units": us}
            rows = [(r, e, d) for r, per in sorted(by_repo.items()) for e, d in per.items()]
            rows += [("all", e, d) for e, d in swe.items()]
            print(table(f"SWE-bench Lite file localization, {half} half", rows, extra=False))
            print(span_table(f"SWE-bench Lite span figures, {half} half (mean over instances with gold lines)", rows))
    # The file-level comparison is against plain bm25 when it was measured, else against --baseline (the
    # span variants are named explicitly, e.g. bm25(spans=true) and bm25(spans=false)).
    ref = "bm25" if "bm25" in engines else args.baseline
    if best and best != ref:
        for half in halves:
            rep = results["replay"].get(half, {})
            units = lambda e: [u for per in rep.values() for u in per.get(e, {}).get("units", [])]  # noqa: E731
            if rep:
                print(comparison_lines(f"replay {half}: {best} vs {ref} (paired over commits)", paired(units(best), units(ref))))
                for r, per in rep.items():
                    if best in per and ref in per:
                        print(comparison_lines(f"  {r}: {best} vs {ref}", paired(per[best].get("units", []), per[ref].get("units", []))))
            swe = results["swebench"].get(half, {})
            if best in swe and ref in swe:
                print(comparison_lines(f"SWE-bench {half}: {best} vs {ref}", paired(swe[best].get("units", []), swe[ref].get("units", []))))
                per_repo = lambda e: _by_repo(swe[e].get("units", []))  # noqa: E731
                for r, mine in sorted(per_repo(best).items()):
                    print(comparison_lines(f"  {r}: {best} vs {ref}", paired(mine, per_repo(ref).get(r, []))))
    if best and "report" in halves:
        base = args.baseline
        rep = results["replay"].get("report", {})
        if rep:
            common = [r for r, per in rep.items() if "units" in per.get(best, {}) and "units" in per.get(base, {})]
            absent = [r for r in split["replay"]["report"] if r not in common]
            note = f"; no figure for the half: absent or unfinished {', '.join(absent)}" if absent else ""
            print(span_lines(f"replay report half: {best} vs {base}, paired over the commits of "
                             f"{len(common)} repositories{note}",
                             span_paired([u for r in common for u in rep[r][best]["units"]],
                                         [u for r in common for u in rep[r][base]["units"]])))
        swe = results["swebench"].get("report", {})
        if "units" in swe.get(best, {}) and "units" in swe.get(base, {}):
            print(span_lines(f"SWE-bench Lite report half: {best} vs {base}, paired over instances",
                             span_paired(swe[best]["units"], swe[base]["units"])))
    print(f"\nbest engine (chosen on the tune half by hit@5, then MRR): {best}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
